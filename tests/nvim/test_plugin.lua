-- The Neovim plugin (editors/nvim) in a headless Neovim (0.7+) against `infill lsp`: it types into
-- a Python buffer, waits for the ghost text extmark, moves away (the suggestion is dropped), types
-- again, accepts the new suggestion with <Tab>, and checks that the buffer changed by exactly the
-- suggestion and that the server heard of each (its stats log). It also draws a multi-line
-- suggestion to check the virtual lines. On Neovim 0.12 the built-in inline completion is turned on
-- first, as a user's configuration would: the plugin still owns the ghost text and <Tab>, so there
-- is one ghost text (the plugin's) and <Tab> inserts it once.
-- Keys are fed as typed, so the plugin's autocommands and mapping run as in a real session; the
-- steps run in a coroutine resumed from timers, because typeahead is only read by the main loop.
-- The outcome goes to $INFILL_RESULT as JSON; Neovim exits 0 when every check passed.
--
-- Run: nvim --headless -u NONE -c "luafile tests/nvim/test_plugin.lua" with the environment
--   INFILL_PLUGIN  the plugin folder (editors/nvim)
--   INFILL_PYTHON  the Python interpreter that has the project installed
--   INFILL_FILE    the Python file to type into; its last line is where typing happens
--   INFILL_LOG     the server's log file
--   INFILL_STATS   the server's stats log
--   INFILL_RESULT  where the outcome is written

local env = vim.env
local report = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/report.lua")
local WAIT_MS = 120000 -- the server starts a worker, which loads a model on a busy CPU
local ATTEMPT_MS = 30000 -- per typed character: a small model may have nothing to say at one place

local helpers = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/helpers.lua")(WAIT_MS)
local check, sleep, wait_until, type_keys = helpers.check, helpers.sleep, helpers.wait_until, helpers.type_keys

local BUILT_IN = vim.lsp.inline_completion -- Neovim 0.12 and later

local function ghost_marks(bufnr)
  local namespace = require("infill.ghost").namespace
  return vim.api.nvim_buf_get_extmarks(bufnr, namespace, 0, -1, { details = true })
end

-- The built-in inline completion's ghost text in `bufnr` (none before 0.12).
local function built_in_marks(bufnr)
  local namespace = vim.api.nvim_get_namespaces()["nvim.lsp.inline_completion"]
  return namespace and vim.api.nvim_buf_get_extmarks(bufnr, namespace, 0, -1, {}) or {}
end

-- Type the characters of `text` one at a time until a suggestion shows.
local function type_until_ghost(bufnr, text)
  for index = 1, #text do
    type_keys(text:sub(index, index))
    local waited = 0
    while #ghost_marks(bufnr) == 0 and waited < ATTEMPT_MS do
      sleep(20)
      waited = waited + 20
    end
    if #ghost_marks(bufnr) > 0 then
      check(#built_in_marks(bufnr) == 0, "a second ghost text, the built-in inline completion's")
      return
    end
  end
  error("no ghost text after typing " .. text)
end

-- `lines` with `text` inserted at the 0-based (row, col).
local function inserted(lines, row, col, text)
  local line = lines[row + 1]
  local joined = line:sub(1, col) .. text .. line:sub(col + 1)
  local result = vim.list_slice(lines, 1, row)
  vim.list_extend(result, vim.split(joined, "\n", { plain = true }))
  return vim.list_extend(result, vim.list_slice(lines, row + 2))
end

local function stats_events()
  local events = {}
  for _, line in ipairs(vim.fn.filereadable(env.INFILL_STATS) == 1 and vim.fn.readfile(env.INFILL_STATS) or {}) do
    table.insert(events, vim.fn.json_decode(line).event)
  end
  return events
end

local function check_multi_line_ghost()
  local ghost = require("infill.ghost")
  local bufnr = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, true, { "x = " })
  vim.bo[bufnr].tabstop = 4
  ghost.show(bufnr, 0, 4, "1 +\n\t2 +\r\n3")
  local details = vim.api.nvim_buf_get_extmarks(bufnr, ghost.namespace, 0, -1, { details = true })[1][4]
  check(details.virt_text[1][1] == "1 +", "the first line is not virtual text at the cursor")
  check(vim.deep_equal(details.virt_lines, { { { "    2 +", "InfillGhost" } }, { { "3", "InfillGhost" } } }),
        "the other lines are not virtual lines: " .. vim.inspect(details.virt_lines))
  ghost.clear(bufnr)
  check(#vim.api.nvim_buf_get_extmarks(bufnr, ghost.namespace, 0, -1, {}) == 0, "ghost text left after clear")
  vim.api.nvim_buf_delete(bufnr, { force = true })
end

local function main()
  vim.opt.runtimepath:append(env.INFILL_PLUGIN)
  check_multi_line_ghost()
  local notices = {}
  if BUILT_IN then
    BUILT_IN.enable()
    vim.notify = function(message) table.insert(notices, message) end
  end
  require("infill").setup({
    cmd = { env.INFILL_PYTHON, "-m", "lsp_server", "--log-file", env.INFILL_LOG },
    debounce_ms = 50,
    settings = { maxTokens = 8, deadlineMs = 20000, statsLog = env.INFILL_STATS },
  })
  vim.o.swapfile = false
  vim.cmd("edit " .. vim.fn.fnameescape(env.INFILL_FILE))
  local bufnr = vim.api.nvim_get_current_buf()
  vim.bo[bufnr].filetype = "python"
  local lsp = require("infill.lsp")
  wait_until(function() return lsp.attached(bufnr) ~= nil end, "the plugin did not attach the buffer to infill")
  local client = lsp.attached(bufnr)
  check(not (BUILT_IN and client:supports_method("textDocument/inlineCompletion")),
        "the built-in inline completion can ask infill's server too")
  check(not BUILT_IN or (#notices == 1 and notices[1]:find("the plugin shows infill's suggestions", 1, true)),
        "no one message says who owns the ghost text: " .. vim.inspect(notices))

  vim.api.nvim_win_set_cursor(0, { vim.api.nvim_buf_line_count(bufnr), 0 })
  type_keys("A")
  type_until_ghost(bufnr, "hea")
  type_keys("<Left>")
  check(#ghost_marks(bufnr) == 0, "the ghost text stayed when the cursor moved")
  type_keys("<End>")
  type_until_ghost(bufnr, "der_")
  local shown = require("infill.session").shown(bufnr)
  check(shown, "a ghost extmark without a suggestion")
  local mark = ghost_marks(bufnr)[1]
  check(mark[2] == shown.row and mark[3] == shown.col, "the ghost text is away from the cursor")
  local first = vim.split(shown.text, "\n", { plain = true })[1]
  check(mark[4].virt_text[1][1] == first, "the ghost text is not the suggestion's first line")

  local before = vim.api.nvim_buf_get_lines(bufnr, 0, -1, true)
  type_keys("<Tab>")
  local after = vim.api.nvim_buf_get_lines(bufnr, 0, -1, true)
  check(vim.deep_equal(after, inserted(before, shown.row, shown.col, shown.text)),
        "<Tab> did not insert exactly the suggestion: " .. vim.inspect(after))
  check(not (BUILT_IN and BUILT_IN.get({ on_accept = function() end })),
        "the built-in inline completion holds a suggestion for <Tab> too")
  type_keys("<Esc>")
  check(vim.api.nvim_get_mode().mode == "n", "<Esc> did not leave insert mode")
  check(#ghost_marks(bufnr) == 0, "ghost text left after <Esc>")

  wait_until(function() return vim.tbl_contains(stats_events(), "accept") end, "the server heard no acceptance")
  local outcome = { suggestion = shown.text, events = stats_events() }
  check(vim.deep_equal(vim.list_slice(outcome.events, 1, 4), { "show", "reject", "show", "accept" }),
        "the server heard " .. table.concat(outcome.events, ", ") .. ", not show, reject, show, accept")
  client.stop()
  wait_until(function() return client.is_stopped() end, "the server did not stop")
  return outcome
end

coroutine.wrap(function() report(pcall(main)) end)()

-- Neovim 0.12's built-in inline completion against `infill lsp`, without the plugin: the setup the
-- README gives (vim.lsp.config, vim.lsp.enable, vim.lsp.inline_completion.enable, and <Tab> mapped
-- to vim.lsp.inline_completion.get()). It types into a Python buffer until the built-in draws ghost
-- text, takes it with <Tab>, and checks that the buffer changed by exactly the text drawn and that
-- the server heard the acceptance (the item's command, run by the built-in, in its stats log).
-- Before 0.12 there is no built-in: the outcome says so in `skipped`.
--
-- Run: nvim --headless -u NONE -c "luafile tests/nvim/test_builtin.lua" with the environment
--   INFILL_COMMAND  the `infill` command
--   INFILL_FILE     the Python file to type into; its last line is where typing happens
--   INFILL_LOG      the server's log file
--   INFILL_STATS    the server's stats log
--   INFILL_RESULT   where the outcome is written

local env = vim.env
local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h")
local report = dofile(here .. "/report.lua")
local WAIT_MS = 120000 -- the server starts a worker, which loads a model on a busy CPU
local ATTEMPT_MS = 30000 -- per typed character: a small model may have nothing to say at one place

local helpers = dofile(here .. "/helpers.lua")(WAIT_MS)
local check, sleep, wait_until, type_keys = helpers.check, helpers.sleep, helpers.wait_until, helpers.type_keys

-- The README's setup, with the test's log files.
local function set_up_built_in()
  vim.lsp.config("infill", {
    cmd = { env.INFILL_COMMAND, "lsp", "--log-file", env.INFILL_LOG },
    filetypes = { "python" },
    root_markers = { ".git" },
    init_options = { maxTokens = 8, deadlineMs = 20000, statsLog = env.INFILL_STATS },
  })
  vim.lsp.enable("infill")
  vim.lsp.inline_completion.enable()
  vim.keymap.set("i", "<Tab>", function()
    if not vim.lsp.inline_completion.get() then
      return "<Tab>"
    end
  end, { expr = true, desc = "accept the inline completion" })
end

-- The built-in's ghost text in `bufnr` as { row, col, text }, or nil.
local function built_in_ghost(bufnr)
  local namespace = vim.api.nvim_get_namespaces()["nvim.lsp.inline_completion"]
  local marks = namespace and vim.api.nvim_buf_get_extmarks(bufnr, namespace, 0, -1, { details = true }) or {}
  if #marks == 0 then
    return nil
  end
  check(#marks == 1, "more than one ghost text: " .. vim.inspect(marks))
  local _, row, col, details = unpack(marks[1])
  local lines = { details.virt_text[1][1] }
  for _, line in ipairs(details.virt_lines or {}) do
    table.insert(lines, line[1][1])
  end
  return { row = row, col = col, text = table.concat(lines, "\n") }
end

-- Type the characters of `text` one at a time until the built-in draws ghost text; returns it.
local function type_until_ghost(bufnr, text)
  for index = 1, #text do
    type_keys(text:sub(index, index))
    local waited = 0
    while not built_in_ghost(bufnr) and waited < ATTEMPT_MS do
      sleep(20)
      waited = waited + 20
    end
    local ghost = built_in_ghost(bufnr)
    if ghost then
      return ghost
    end
  end
  error("no ghost text after typing " .. text)
end

local function stats_events()
  local events = {}
  for _, line in ipairs(vim.fn.filereadable(env.INFILL_STATS) == 1 and vim.fn.readfile(env.INFILL_STATS) or {}) do
    table.insert(events, vim.fn.json_decode(line).event)
  end
  return events
end

local function main()
  set_up_built_in()
  vim.o.swapfile = false
  vim.cmd("edit " .. vim.fn.fnameescape(env.INFILL_FILE))
  local bufnr = vim.api.nvim_get_current_buf()
  vim.bo[bufnr].filetype = "python"
  wait_until(function() return #vim.lsp.get_clients({ bufnr = bufnr, name = "infill" }) == 1 end,
             "vim.lsp.enable did not attach the buffer to infill")
  vim.api.nvim_win_set_cursor(0, { vim.api.nvim_buf_line_count(bufnr), 0 })
  type_keys("A")
  local ghost = type_until_ghost(bufnr, "header_")
  local cursor = vim.api.nvim_win_get_cursor(0)
  check(ghost.row == cursor[1] - 1 and ghost.col == cursor[2], "the ghost text is away from the cursor")
  local line = vim.api.nvim_get_current_line()
  type_keys("<Tab>")
  local expected = line:sub(1, ghost.col) .. ghost.text .. line:sub(ghost.col + 1)
  local function taken()
    local lines = vim.api.nvim_buf_get_lines(bufnr, ghost.row, -1, true)
    return table.concat(vim.list_slice(lines, 1, #vim.split(expected, "\n", { plain = true })), "\n")
  end
  wait_until(function() return taken() == expected end, "<Tab> did not insert exactly the ghost text")
  check(not built_in_ghost(bufnr), "ghost text left after <Tab>")
  wait_until(function() return vim.tbl_contains(stats_events(), "accept") end, "the server heard no acceptance")
  return { suggestion = ghost.text, events = stats_events() }
end

if vim.lsp.inline_completion and vim.lsp.config then
  coroutine.wrap(function() report(pcall(main)) end)()
else
  local version = vim.fn.execute("version"):match("NVIM v[%w%.%-%+]+")
  report(true, { skipped = version .. " has no vim.lsp.inline_completion (it came in 0.12)" })
end

-- Next edits in the Neovim plugin (editors/nvim), headless (0.7+), against `infill lsp` on a
-- scripted worker (tests/fake_worker.py: each region of an edit job comes back with its text
-- renamed as the file's first line says, `# fake-rename: count total`, each renamed line noted as
-- the worker's, which no draft is). In a Python buffer it renames a variable at its definition
-- (`ciw`), waits for the proposed edits (a highlight on the old text, a sign, the new text as
-- virtual lines, the cursor where it was), dismisses them with <Esc>, gets them again on leaving
-- insert mode, jumps to the nearest with <Tab>, takes them all with <Tab>, and checks the buffer
-- against the expected text (the worker's answer) and the server's stats log. In a
-- second buffer, edits for a buffer changed since are refused; in a third, typing drops them.
-- Keys are fed as typed, so the plugin's autocommands and mappings run as in a real session; the
-- steps run in a coroutine resumed from timers, because typeahead is only read by the main loop.
--
-- Run: nvim --headless -u NONE -c "luafile tests/nvim/test_next_edit.lua" with the environment
--   INFILL_PLUGIN    the plugin folder (editors/nvim)
--   INFILL_PYTHON    the Python interpreter that has the project installed
--   INFILL_WORKER    the scripted worker's address
--   INFILL_FILE, INFILL_STALE_FILE, INFILL_TYPED_FILE  copies of the Python file to rename in
--   INFILL_EXPECTED  the first file as it must end
--   INFILL_LOG       the server's log file
--   INFILL_STATS     the server's stats log
--   INFILL_RESULT    where the outcome is written

local env = vim.env
local report = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/report.lua")
local WAIT_MS = 60000 -- only against a hang: the scripted worker answers at once

local helpers = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/helpers.lua")(WAIT_MS)
local check, sleep, wait_until, type_keys = helpers.check, helpers.sleep, helpers.wait_until, helpers.type_keys

local function lines(bufnr)
  return vim.api.nvim_buf_get_lines(bufnr, 0, -1, true)
end

local function marks(bufnr)
  local namespace = require("infill.edit_marks").namespace
  return vim.api.nvim_buf_get_extmarks(bufnr, namespace, 0, -1, { details = true })
end

local function stats_events()
  local events = {}
  for _, line in ipairs(vim.fn.filereadable(env.INFILL_STATS) == 1 and vim.fn.readfile(env.INFILL_STATS) or {}) do
    local event = vim.fn.json_decode(line)
    table.insert(events, event.event .. " " .. event.mode)
  end
  return events
end

-- The rules of infill.edits that need no server.
local function check_rules()
  local edits = require("infill.edits")
  local text = { "x = 1", "y = 2", "é = 3" }
  local function edit(first_line, last_line, last_character, version)
    return { text = "z\n", textDocument = { uri = "file:///a.py", version = version or 4 },
             range = { start = { line = first_line, character = 0 },
                       ["end"] = { line = last_line, character = last_character } } }
  end
  local kept = edits.from_result({ edits = { edit(0, 1, 0), edit(0, 2, 0), edit(1, 1, 0, 3), edit(2, 2, 5),
                                             edit(2, 2, 4), edit(1, 1, 2) } }, "file:///a.py", 4, text, "utf-16")
  check(#kept == 2 and kept[1].first == 0 and kept[2].to_end and kept[2].last == 3,
        "whole lines of the version, no overlaps, the last line's end in UTF-16: " .. vim.inspect(kept))
  check(#edits.from_result({ edits = { edit(2, 2, 6) } }, "file:///a.py", 4, text, "utf-8") == 1,
        "the last line's end in UTF-8")
  check(#edits.from_result(vim.NIL, "file:///a.py", 4, text, "utf-16") == 0, "a null result")
  local far, near = { first = 9, last = 10 }, { first = 2, last = 3 }
  check(edits.nearest({ far, near }, 5) == near and edits.distance(far, 9) == 0, "the nearest edit")
  local row, col = edits.landing({ first = 1, last = 2, to_end = false, text = "y = 20\n" }, text)
  check(row == 1 and col == 5, "the cursor lands where the edit changes the line: " .. row .. "," .. col)
end

local function open(file)
  vim.cmd("edit " .. vim.fn.fnameescape(file))
  local bufnr = vim.api.nvim_get_current_buf()
  vim.bo[bufnr].filetype = "python"
  local lsp = require("infill.lsp")
  wait_until(function()
    local client = lsp.attached(bufnr)
    return client and client.initialized
  end, "the plugin did not attach the buffer to an initialized infill client")
  return bufnr
end

-- Rename `count` at its definition in `bufnr` and wait for the edits; the cursor stays put.
local function rename(bufnr)
  vim.fn.cursor(vim.fn.search("^    count = 0"), 5)
  type_keys("ciwtotal<Esc>")
  local cursor = vim.api.nvim_win_get_cursor(0)
  local next_edit = require("infill.next_edit")
  wait_until(function() return next_edit.shown(bufnr) ~= nil end, "no next edits after the rename")
  check(vim.deep_equal(vim.api.nvim_win_get_cursor(0), cursor), "the cursor moved without a key")
  return next_edit.shown(bufnr)
end

local function check_marks(bufnr, shown)
  local highlighted, unsigned, added = 0, 0, {}
  for _, mark in ipairs(marks(bufnr)) do
    local details = mark[4]
    highlighted = highlighted + (details.hl_group == "InfillEditOld" and 1 or 0)
    if details.hl_group == "InfillEditOld" and not details.sign_text then
      unsigned = unsigned + 1
    end
    for _, virt_line in ipairs(details.virt_lines or {}) do
      table.insert(added, virt_line[1][1])
    end
  end
  check(highlighted == #shown, "each edit's old text is not highlighted")
  if vim.fn.has("nvim-0.8") == 1 then -- 0.7 leaves an extmark's sign out of its details
    check(unsigned == 0, "an edit without its sign")
  end
  local expected = vim.fn.readfile(env.INFILL_EXPECTED) -- its last line the worker's `return`, noted
  check(vim.tbl_contains(added, expected[#expected]), "the new text is not drawn: " .. vim.inspect(added))
end

local function accept_in_first_buffer()
  local bufnr = open(env.INFILL_FILE)
  local shown = rename(bufnr)
  check(#shown >= 2, "expected edits at two places: " .. vim.inspect(shown))
  check_marks(bufnr, shown)
  type_keys("<Esc>")
  check(require("infill.next_edit").shown(bufnr) == nil and #marks(bufnr) == 0, "<Esc> did not dismiss the edits")
  type_keys("i<Esc>") -- leaving insert mode asks again
  wait_until(function() return require("infill.next_edit").shown(bufnr) ~= nil end, "no edits on leaving insert mode")
  local before = lines(bufnr)
  type_keys("<Tab>")
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  check(row >= shown[1].first and row < math.max(shown[1].last, shown[1].first + 1),
        "<Tab> did not go to the nearest edit: row " .. row .. " for " .. vim.inspect(shown[1]))
  check(vim.deep_equal(lines(bufnr), before), "<Tab> to jump changed the buffer")
  type_keys("<Tab>")
  local expected = vim.fn.readfile(env.INFILL_EXPECTED)
  check(vim.deep_equal(lines(bufnr), expected), "the buffer after taking the edits: " .. vim.inspect(lines(bufnr)))
  check(#marks(bufnr) == 0, "marks left after taking the edits")
  wait_until(function() return vim.tbl_contains(stats_events(), "accept next_edit") end,
             "the server heard no acceptance")
  return { shown = shown, final = lines(bufnr) }
end

local function refuse_stale_edits()
  local bufnr = open(env.INFILL_STALE_FILE)
  local shown = rename(bufnr)
  vim.api.nvim_buf_set_lines(bufnr, 0, 1, true, { "# changed under the edits" })
  local before = lines(bufnr)
  vim.api.nvim_win_set_cursor(0, { shown[1].first + 1, 0 })
  check(require("infill.next_edit").tab(bufnr) == false, "<Tab> took edits for a buffer that changed since")
  check(vim.deep_equal(lines(bufnr), before), "stale edits changed the buffer")
  check(#marks(bufnr) == 0, "stale edits are still drawn")
end

local function typing_drops_edits()
  local bufnr = open(env.INFILL_TYPED_FILE)
  rename(bufnr)
  type_keys("A")
  check(#marks(bufnr) > 0, "entering insert mode dropped the edits")
  type_keys("s")
  check(#marks(bufnr) == 0 and require("infill.next_edit").shown(bufnr) == nil, "typing did not drop the edits")
  type_keys("<Esc>")
end

local function main()
  vim.opt.runtimepath:append(env.INFILL_PLUGIN)
  check_rules()
  vim.o.swapfile = false
  vim.o.hidden = true
  require("infill").setup({
    cmd = { env.INFILL_PYTHON, "-m", "lsp_server", "--worker", env.INFILL_WORKER, "--log-file", env.INFILL_LOG },
    settings = { deadlineMs = 20000, statsLog = env.INFILL_STATS },
    next_edit = { debounce_ms = 50 },
  })
  local outcome = accept_in_first_buffer()
  refuse_stale_edits()
  typing_drops_edits()
  outcome.events = stats_events()
  local client = require("infill.lsp").attached(vim.api.nvim_get_current_buf())
  client.stop()
  wait_until(function() return client.is_stopped() end, "the server did not stop")
  return outcome
end

coroutine.wrap(function() report(pcall(main)) end)()

-- The arena in the Neovim plugin (editors/nvim), headless, against `infill lsp` with its `arena`
-- setting on and two fake workers: it types until the pair shows as one ghost text (the top answer,
-- an indented `======` line, the line's prefix and the bottom answer), takes the bottom with <S-Tab>
-- and checks that the buffer holds exactly the bottom answer; then it types on past a second pair
-- (a vote for neither). The pytest side reads the votes from SQLite.
--
-- Run: nvim --headless -u NONE -c "luafile tests/nvim/test_arena.lua" with the environment
--   INFILL_PLUGIN, INFILL_PYTHON, INFILL_FILE, INFILL_LOG, INFILL_RESULT (as test_plugin.lua)
--   INFILL_WORKER_A, INFILL_WORKER_B  the two workers' addresses
--   INFILL_VOTES   the vote store

local env = vim.env
local report = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/report.lua")
local WAIT_MS = 60000

local helpers = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/helpers.lua")(WAIT_MS)
local check, wait_until, type_keys = helpers.check, helpers.wait_until, helpers.type_keys

-- How many votes for `pick` the server's log says it recorded (it logs each one once it is stored).
local function votes_recorded(pick)
  local count = 0
  for _, line in ipairs(vim.fn.filereadable(env.INFILL_LOG) == 1 and vim.fn.readfile(env.INFILL_LOG) or {}) do
    if line:find("arena vote for battle", 1, true) and vim.endswith(line, ": " .. pick) then
      count = count + 1
    end
  end
  return count
end

local function check_layout()
  local arena = require("infill.arena")
  local items = {
    { insertText = "a + b", command = { command = "infill.arenaVote", arguments = { "b1", "top" } } },
    { insertText = "sum(a, b)", command = { command = "infill.arenaVote", arguments = { "b1", "bottom" } } },
  }
  local pair = arena.pair(items)
  check(pair and pair.battle_id == "b1" and pair.top == "a + b", "two vote items are not an arena pair")
  check(arena.pair({ items[2], items[1] }) == nil, "a pair in the wrong order was taken")
  check(arena.pair({ items[1] }) == nil, "one item was taken for a pair")
  local ghost = arena.ghost_text(pair, "    return ")
  check(ghost == "a + b\n    ======\n    return sum(a, b)", "the ghost text is " .. vim.inspect(ghost))
end

local function main()
  vim.opt.runtimepath:append(env.INFILL_PLUGIN)
  check_layout()
  require("infill").setup({
    cmd = { env.INFILL_PYTHON, "-m", "lsp_server", "--log-file", env.INFILL_LOG },
    debounce_ms = 50,
    settings = { workerAddress = env.INFILL_WORKER_A, mode = "single_line", arena = true, arenaVotes = env.INFILL_VOTES,
                 arenaDeadlineMs = 20000,
                 arenaBackends = { { name = "a" }, { name = "b", address = env.INFILL_WORKER_B } } },
  })
  vim.o.swapfile = false
  vim.cmd("edit " .. vim.fn.fnameescape(env.INFILL_FILE))
  local bufnr = vim.api.nvim_get_current_buf()
  vim.bo[bufnr].filetype = "python"
  local lsp = require("infill.lsp")
  local session = require("infill.session")
  wait_until(function() return lsp.attached(bufnr) ~= nil end, "the plugin did not attach the buffer to infill")
  local client = lsp.attached(bufnr)

  vim.api.nvim_win_set_cursor(0, { vim.api.nvim_buf_line_count(bufnr), 0 })
  type_keys("A")
  type_keys("x")
  wait_until(function() return session.shown(bufnr) ~= nil end, "no arena pair was shown")
  local shown = session.shown(bufnr)
  check(shown.arena, "the answer was not shown as an arena pair: " .. vim.inspect(shown))
  local line = vim.api.nvim_get_current_line()
  local lines = vim.split(shown.text, "\n", { plain = true })
  check(#lines == 3 and lines[2] == "    ======" and lines[3] == line .. shown.arena.bottom,
        "the ghost text is not top, separator, prefix + bottom: " .. vim.inspect(lines))
  local mark = vim.api.nvim_buf_get_extmarks(bufnr, require("infill.ghost").namespace, 0, -1, { details = true })[1]
  check(mark[4].virt_text[1][1] == shown.arena.top and #mark[4].virt_lines == 2, "the extmark does not show both")

  type_keys("<S-Tab>")
  local taken = vim.api.nvim_get_current_line()
  check(taken == line .. shown.arena.bottom, "<S-Tab> did not insert the bottom answer: " .. vim.inspect(taken))
  check(session.shown(bufnr) == nil, "the pair stayed on screen")

  type_keys("<CR>")
  type_keys("y")
  wait_until(function() return session.shown(bufnr) ~= nil end, "no second arena pair was shown")
  type_keys("z") -- typing on: neither
  wait_until(function() return votes_recorded("neither") >= 1 end, "the server recorded no vote for neither")
  type_keys("<Esc>")
  client.stop()
  wait_until(function() return client.is_stopped() end, "the server did not stop")
  return { bottom = shown.arena.bottom }
end

coroutine.wrap(function() report(pcall(main)) end)()

-- The Neovim side of `python -m bench.editor_latency`: a headless Neovim (0.7+) with the infill
-- plugin (editors/nvim) against `infill lsp` types files key by key on a schedule the benchmark
-- planned, and records, with vim.uv.hrtime() (vim.loop before 0.10), when each key was fed, when
-- the plugin sent each inline completion request and for which key, when its response came, what
-- it held, whether the plugin cancelled it, and when its ghost text was drawn. The plugin runs
-- unchanged: the driver wraps its LSP calls (infill.lsp.call) and its ghost drawing
-- (infill.ghost.show) to watch them. The outcome goes to $INFILL_RESULT as JSON; Neovim exits 0
-- when the run finished.
--
-- Run: nvim --headless -u NONE -c "luafile bench/nvim_typing.lua" with the environment
--   INFILL_PLAN    a JSON file: plugin (the plugin folder), cmd (the server command), settings
--                  (the server's), debounce_ms, warm_up_ms, warm_up_path, warm_up_text,
--                  server_log and warm_mark (what the server logs for a worker's reply), and
--                  files: a list of { path, prefill, text, keys = [ { key, gap_ms, pause_ms } ] }
--                  (prefill: the file's start; text: what it holds when typed; key: what to feed,
--                  as typed; gap_ms: the time to the next key; pause_ms: at most this much longer
--                  while the key's request is unanswered)
--   INFILL_RESULT  where the outcome is written

local env = vim.env
local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h")
local report = dofile(here .. "/../tests/nvim/report.lua")
local plan = vim.fn.json_decode(table.concat(vim.fn.readfile(env.INFILL_PLAN), "\n"))
local helpers = dofile(here .. "/../tests/nvim/helpers.lua")(plan.warm_up_ms)
local check, sleep, wait_until = helpers.check, helpers.sleep, helpers.wait_until

local INLINE_COMPLETION = "textDocument/inlineCompletion"
local hrtime = (vim.uv or vim.loop).hrtime
local started = hrtime()

local function now_ms()
  return (hrtime() - started) / 1e6
end

local record = { keys = {}, requests = {}, files = {} }
local ticks = {} -- changedtick after a key was read -> that key's number in record.keys
local current = nil -- the number of the key last fed; nil while warming up
local by_lsp_id = {} -- the LSP id of a request in flight -> its record
local responding = nil -- the request whose response handler is running

-- What a response brought: its error, how many items, and the first item's request id and text.
local function response_of(request, err, result)
  request.response_ms = now_ms()
  request.error = err and (err.message or vim.inspect(err)) or nil
  local items = result and (result.items or result) or {}
  request.items = #items
  local first = items[1]
  local argument = first and first.command and first.command.arguments and first.command.arguments[1]
  request.request_id = argument and argument.requestId or nil
  request.text = first and first.insertText or nil
end

local function watch_lsp_calls(lsp)
  local call = lsp.call
  lsp.call = function(client, method, ...)
    local args = { ... }
    if method == "request" and args[1] == INLINE_COMPLETION then
      local bufnr = args[4]
      local key = ticks[vim.api.nvim_buf_get_changedtick(bufnr)]
      local request = { key = key, sent_ms = now_ms(), warm_up = current == nil }
      table.insert(record.requests, request)
      local handler = args[3]
      args[3] = function(err, result, ...)
        response_of(request, err, result)
        responding = request
        local ok, failure = pcall(handler, err, result, ...)
        responding = nil
        assert(ok, failure)
      end
      local ok, id = call(client, method, unpack(args, 1, 4))
      if ok then
        by_lsp_id[id] = request
      end
      return ok, id
    end
    if method == "cancel_request" and by_lsp_id[args[1]] then
      by_lsp_id[args[1]].cancelled_ms = now_ms()
    end
    return call(client, method, unpack(args, 1, select("#", ...)))
  end
end

local function watch_ghost(ghost)
  local show = ghost.show
  ghost.show = function(...)
    local mark = show(...)
    if responding and not responding.shown_ms then
      responding.shown_ms = now_ms()
    end
    return mark
  end
end

local function open(path)
  vim.cmd("edit " .. vim.fn.fnameescape(path))
  local bufnr = vim.api.nvim_get_current_buf()
  vim.bo[bufnr].filetype = "python"
  local lsp = require("infill.lsp")
  wait_until(function() return lsp.attached(bufnr) ~= nil end, "the plugin did not attach " .. path)
  vim.api.nvim_create_autocmd("TextChangedI", { buffer = bufnr, callback = function()
    ticks[vim.api.nvim_buf_get_changedtick(bufnr)] = current
  end })
  return bufnr
end

-- The server's log holds a worker's reply (the plan's `warm_mark`).
local function worker_replied()
  local handle = io.open(plan.server_log, "r")
  if not handle then
    return false
  end
  local text = handle:read("*a")
  handle:close()
  return text:find(plan.warm_mark, 1, true) ~= nil
end

-- Ask for completions at the end of a buffer holding `text` until the worker has answered one:
-- the server has started its worker and the model is loaded.
local function warm_up(path, text)
  local bufnr = open(path)
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, true, vim.split(text, "\n", { plain = true }))
  vim.cmd("startinsert!")
  wait_until(function() return vim.api.nvim_get_mode().mode == "i" end, "no insert mode")
  local session = require("infill.session")
  local waited = 0
  while not worker_replied() do
    check(waited < plan.warm_up_ms, "no answer from the worker within the warm-up")
    session.request(bufnr)
    sleep(500)
    waited = waited + 500
  end
  vim.cmd("stopinsert")
  wait_until(function() return vim.api.nvim_get_mode().mode == "n" end, "insert mode did not end")
end

local function feed(key)
  vim.api.nvim_feedkeys(key, "nt", false)
  wait_until(function() return vim.fn.getchar(1) == 0 end, "Neovim did not read a key")
end

-- The request of key number `number` has its answer (or was cancelled).
local function settled(number)
  for index = #record.requests, 1, -1 do
    local request = record.requests[index]
    if request.key == number and (request.response_ms or request.cancelled_ms) then
      return true
    end
  end
  return false
end

local function pause(number, longest_ms)
  local waited = 0
  while waited < longest_ms and not settled(number) do
    sleep(10)
    waited = waited + 10
  end
end

local function type_file(file, index)
  local bufnr = open(file.path)
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, true, vim.split(file.prefill, "\n", { plain = true }))
  vim.api.nvim_win_set_cursor(0, { vim.api.nvim_buf_line_count(bufnr), 0 })
  feed("A")
  for _, step in ipairs(file.keys) do
    table.insert(record.keys, { file = index, key = step.key, fed_ms = now_ms() })
    current = #record.keys
    local due = record.keys[current].fed_ms + step.gap_ms
    feed(step.key)
    if step.pause_ms > 0 then
      pause(current, step.pause_ms)
      due = math.max(due, now_ms() + step.gap_ms) -- the typist goes on a key's gap after the pause
    end
    local left = due - now_ms()
    if left >= 1 then
      sleep(math.floor(left))
    end
  end
  feed(vim.api.nvim_replace_termcodes("<Esc>", true, true, true))
  current = nil
  local typed = table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, true), "\n")
  table.insert(record.files, { path = file.path, typed_as_planned = typed == file.text })
end

local function main()
  vim.opt.runtimepath:append(plan.plugin)
  vim.o.swapfile, vim.o.hidden = false, true
  vim.o.autoindent, vim.o.smartindent, vim.o.cindent = false, false, false
  vim.o.indentexpr, vim.o.textwidth, vim.o.formatoptions = "", 0, ""
  watch_lsp_calls(require("infill.lsp"))
  watch_ghost(require("infill.ghost"))
  require("infill").setup({ cmd = plan.cmd, debounce_ms = plan.debounce_ms, settings = plan.settings,
                            next_edit = { enabled = false } })
  warm_up(plan.warm_up_path, plan.warm_up_text)
  record.warm_up_ms = now_ms()
  for index, file in ipairs(plan.files) do
    type_file(file, index)
  end
  local client = require("infill.lsp").attached(vim.api.nvim_get_current_buf())
  if client then
    require("infill.lsp").call(client, "stop")
  end
  return record
end

coroutine.wrap(function() report(pcall(main)) end)()

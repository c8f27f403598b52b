-- Inline completions in one buffer, on Neovim before 0.12: after `debounce_ms` without a keystroke,
-- ask for a completion (at most one request in flight: a keystroke cancels it with
-- $/cancelRequest); show the answer's first item as ghost text if the buffer and the cursor have
-- not moved since; accept it into the buffer, or drop it when the cursor moves or insert mode ends.
-- What became of each suggestion goes to the server as infill/* notifications. An arena pair
-- (infill.arena) shows both answers; <Tab> takes the top, accept_bottom (<S-Tab>) the bottom, and
-- a dismissal votes neither.
local arena = require("infill.arena")
local ghost = require("infill.ghost")
local lsp = require("infill.lsp")
local protocol = require("infill.protocol")

local M = {}

local buffers = {} -- bufnr -> { timer, generation, in_flight = { client, id }, suggestion }

local function state(bufnr)
  if not buffers[bufnr] then
    buffers[bufnr] = { timer = (vim.uv or vim.loop).new_timer(), generation = 0 }
  end
  return buffers[bufnr]
end

local function report(client, method, suggestion, accepted_chars)
  lsp.call(client, "notify", method, { requestId = suggestion.request_id, index = suggestion.index,
                                       acceptedChars = accepted_chars })
end

-- The cursor as a 0-based (row, col).
local function cursor()
  local position = vim.api.nvim_win_get_cursor(0)
  return position[1] - 1, position[2]
end

local function cancel(buffer)
  buffer.generation = buffer.generation + 1
  local in_flight = buffer.in_flight
  buffer.in_flight = nil
  if in_flight then
    lsp.call(in_flight.client, "cancel_request", in_flight.id)
  end
end

-- Drop the suggestion shown in `bufnr`, if any, and report it as rejected.
function M.dismiss(bufnr)
  local buffer = buffers[bufnr]
  local suggestion = buffer and buffer.suggestion
  if suggestion then
    buffer.suggestion = nil
    ghost.clear(bufnr)
    if suggestion.arena then
      arena.vote(suggestion.client, suggestion.arena, "neither")
    else
      report(suggestion.client, protocol.REJECT, suggestion)
    end
  end
end

-- The suggestion an answer brings: its first item, if it starts at the cursor and names its request.
local function suggestion_from(result, client, row, col, character)
  local pair = arena.pair(result)
  if pair then
    local line_prefix = vim.api.nvim_get_current_line():sub(1, col)
    return { client = client, row = row, col = col, text = arena.ghost_text(pair, line_prefix), arena = pair }
  end
  local items = result and (result.items or result) or {}
  local item = items[1]
  local argument = item and item.command and item.command.arguments and item.command.arguments[1]
  if not (argument and type(item.insertText) == "string" and item.insertText ~= "") then
    return nil
  end
  local start = item.range and item.range.start
  if start and (start.line ~= row or start.character ~= character) then
    return nil
  end
  return { client = client, row = row, col = col, text = item.insertText,
           request_id = argument.requestId, index = argument.index }
end

local function show(bufnr, suggestion)
  local buffer = state(bufnr)
  buffer.suggestion = suggestion
  ghost.show(bufnr, suggestion.row, suggestion.col, suggestion.text)
  if not suggestion.arena then
    report(suggestion.client, protocol.DID_SHOW, suggestion)
  end
end

-- Ask for a completion at the cursor of `bufnr` (the current buffer, in insert mode).
function M.request(bufnr)
  local client = lsp.attached(bufnr)
  if not client or bufnr ~= vim.api.nvim_get_current_buf() or vim.api.nvim_get_mode().mode ~= "i" then
    return
  end
  local buffer = state(bufnr)
  cancel(buffer)
  local generation, tick = buffer.generation, vim.api.nvim_buf_get_changedtick(bufnr)
  local row, col = cursor()
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  params.context = { triggerKind = protocol.TRIGGER_AUTOMATIC }
  local ok, id = lsp.call(client, "request", protocol.INLINE_COMPLETION, params, function(err, result)
    if buffer.generation ~= generation then
      return
    end
    buffer.in_flight = nil
    local now_row, now_col = cursor()
    if err or vim.api.nvim_buf_get_changedtick(bufnr) ~= tick or now_row ~= row or now_col ~= col
        or vim.api.nvim_get_current_buf() ~= bufnr or vim.api.nvim_get_mode().mode ~= "i" then
      return
    end
    local suggestion = suggestion_from(result, client, row, col, params.position.character)
    if suggestion then
      show(bufnr, suggestion)
    end
  end, bufnr)
  if ok then
    buffer.in_flight = { client = client, id = id }
  end
end

-- A keystroke changed the text: cancel the request in flight and ask again after a pause.
function M.changed(bufnr, debounce_ms)
  local buffer = state(bufnr)
  M.dismiss(bufnr)
  cancel(buffer)
  buffer.timer:stop()
  buffer.timer:start(debounce_ms, 0, vim.schedule_wrap(function()
    M.request(bufnr)
  end))
end

-- The cursor moved: a suggestion away from it is dropped.
function M.moved(bufnr)
  local suggestion = buffers[bufnr] and buffers[bufnr].suggestion
  local row, col = cursor()
  if suggestion and (suggestion.row ~= row or suggestion.col ~= col) then
    M.dismiss(bufnr)
  end
end

-- Insert mode ended or the buffer was left: nothing pending, nothing shown.
function M.stop(bufnr)
  local buffer = buffers[bufnr]
  if buffer then
    buffer.timer:stop()
    cancel(buffer)
    M.dismiss(bufnr)
  end
end

-- The buffer is gone: free its timer.
function M.forget(bufnr)
  local buffer = buffers[bufnr]
  if buffer then
    M.stop(bufnr)
    buffer.timer:close()
    buffers[bufnr] = nil
  end
end

local function insert(bufnr, row, col, text)
  local lines = vim.split((text:gsub("\r\n?", "\n")), "\n", { plain = true })
  vim.api.nvim_buf_set_text(bufnr, row, col, row, col, lines)
  local last = #lines == 1 and col + #lines[1] or #lines[#lines]
  vim.api.nvim_win_set_cursor(0, { row + #lines, last })
end

-- The suggestion shown at the cursor, taken off the screen; nil when there is none.
local function take(bufnr)
  local buffer = buffers[bufnr]
  local suggestion = buffer and buffer.suggestion
  local row, col = cursor()
  if not suggestion or suggestion.row ~= row or suggestion.col ~= col then
    return nil
  end
  buffer.suggestion = nil
  ghost.clear(bufnr)
  return suggestion
end

-- Insert the suggestion shown at the cursor (an arena pair's top answer) and report it; false
-- when there is none.
function M.accept(bufnr)
  local suggestion = take(bufnr)
  if not suggestion then
    return false
  end
  if suggestion.arena then
    insert(bufnr, suggestion.row, suggestion.col, suggestion.arena.top)
    arena.vote(suggestion.client, suggestion.arena, "top")
    return true
  end
  insert(bufnr, suggestion.row, suggestion.col, suggestion.text)
  report(suggestion.client, protocol.ACCEPT, suggestion, vim.fn.strchars(suggestion.text))
  return true
end

-- Insert the bottom answer of the arena pair shown at the cursor and vote for it; false when no
-- pair is shown.
function M.accept_bottom(bufnr)
  local suggestion = buffers[bufnr] and buffers[bufnr].suggestion
  if not (suggestion and suggestion.arena) or not take(bufnr) then
    return false
  end
  insert(bufnr, suggestion.row, suggestion.col, suggestion.arena.bottom)
  arena.vote(suggestion.client, suggestion.arena, "bottom")
  return true
end

-- The suggestion shown in `bufnr`, for tests and statuslines: { row, col, text } or nil.
function M.shown(bufnr)
  local suggestion = buffers[bufnr] and buffers[bufnr].suggestion
  return suggestion and { row = suggestion.row, col = suggestion.col, text = suggestion.text,
                          arena = suggestion.arena }
end

return M

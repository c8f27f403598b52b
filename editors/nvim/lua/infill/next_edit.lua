-- Next edits in one buffer: after a change in normal mode or on leaving insert mode, and a pause
-- (`debounce_ms`), ask textDocument/copilotInlineEdit at the buffer's current version (at most one
-- request in flight: a newer change cancels it with $/cancelRequest); draw the answer
-- (infill.edit_marks) while the buffer stays at that changedtick; <Tab> moves the cursor to the
-- nearest edit, <Tab> on it makes every edit of the answer (with the client's offset encoding, and
-- only while the buffer's changedtick and version are the ones the edits were for); <Esc>, typing
-- or any other change drops them. Shown edits are reported with textDocument/didShowInlineEdit,
-- taken ones by running their command (workspace/executeCommand).
local edit_marks = require("infill.edit_marks")
local edits = require("infill.edits")
local lsp = require("infill.lsp")
local protocol = require("infill.protocol")

local M = {}

local buffers = {} -- bufnr -> { timer, generation, in_flight = { client, id }, suggestion, applied_tick }

local function state(bufnr)
  if not buffers[bufnr] then
    buffers[bufnr] = { timer = (vim.uv or vim.loop).new_timer(), generation = 0 }
  end
  return buffers[bufnr]
end

local function buffer_lines(bufnr)
  return vim.api.nvim_buf_get_lines(bufnr, 0, -1, true)
end

local function version_of(bufnr)
  return vim.lsp.util.buf_versions[bufnr] or vim.api.nvim_buf_get_changedtick(bufnr)
end

local function cancel(buffer)
  buffer.generation = buffer.generation + 1
  buffer.timer:stop()
  local in_flight = buffer.in_flight
  buffer.in_flight = nil
  if in_flight then
    lsp.call(in_flight.client, "cancel_request", in_flight.id)
  end
end

-- Drop the edits shown in `bufnr`; false when there were none.
function M.dismiss(bufnr)
  local buffer = buffers[bufnr]
  local had = buffer ~= nil and buffer.suggestion ~= nil
  if buffer then
    cancel(buffer)
    buffer.suggestion = nil
  end
  edit_marks.clear(bufnr)
  return had
end

-- Whether the suggestion was made for the buffer as it is now.
local function is_current(bufnr, suggestion)
  return suggestion ~= nil and vim.api.nvim_buf_get_changedtick(bufnr) == suggestion.tick
    and version_of(bufnr) == suggestion.version
end

local function show(bufnr, suggestion)
  state(bufnr).suggestion = suggestion
  edit_marks.show(bufnr, suggestion.edits, buffer_lines(bufnr))
  for _, edit in ipairs(suggestion.edits) do
    if edit.command then
      lsp.call(suggestion.client, "notify", protocol.DID_SHOW_INLINE_EDIT, { item = { command = edit.command } })
    end
  end
end

-- Ask for next edits at the cursor of `bufnr` (the current buffer).
function M.request(bufnr)
  local client = lsp.attached(bufnr)
  if not client or bufnr ~= vim.api.nvim_get_current_buf() then
    return
  end
  local buffer = state(bufnr)
  cancel(buffer)
  local generation, tick, version = buffer.generation, vim.api.nvim_buf_get_changedtick(bufnr), version_of(bufnr)
  local uri = vim.uri_from_bufnr(bufnr)
  local params = { textDocument = { uri = uri, version = version },
                   position = vim.lsp.util.make_position_params(0, client.offset_encoding).position }
  local ok, id = lsp.call(client, "request", protocol.INLINE_EDIT, params, function(err, result)
    if buffer.generation ~= generation then
      return
    end
    buffer.in_flight = nil
    local suggestion = { client = client, tick = tick, version = version }
    if err or not is_current(bufnr, suggestion) then
      return
    end
    suggestion.edits = edits.from_result(result, uri, version, buffer_lines(bufnr), client.offset_encoding)
    if #suggestion.edits > 0 then
      show(bufnr, suggestion)
    end
  end, bufnr)
  if ok then
    buffer.in_flight = { client = client, id = id }
  end
end

-- The text changed (not by the edits taken here): drop the edits; ask again after a pause if `ask`.
function M.changed(bufnr, debounce_ms, ask)
  local buffer = state(bufnr)
  M.dismiss(bufnr)
  if not ask or buffer.applied_tick == vim.api.nvim_buf_get_changedtick(bufnr) then
    return
  end
  buffer.timer:start(debounce_ms, 0, vim.schedule_wrap(function()
    M.request(bufnr)
  end))
end

local function report_taken(client, list)
  for _, edit in ipairs(list) do
    if edit.command then
      lsp.call(client, "request", "workspace/executeCommand",
               { command = edit.command.command, arguments = edit.command.arguments }, function() end)
    end
  end
end

-- Make every edit of the suggestion, if the buffer is still the one they were for.
local function accept(bufnr, buffer, suggestion)
  M.dismiss(bufnr)
  if not is_current(bufnr, suggestion) then
    return false
  end
  local text_edits = vim.tbl_map(function(edit) return { range = edit.range, newText = edit.text } end,
                                 suggestion.edits)
  vim.lsp.util.apply_text_edits(text_edits, bufnr, suggestion.client.offset_encoding)
  buffer.applied_tick = vim.api.nvim_buf_get_changedtick(bufnr)
  report_taken(suggestion.client, suggestion.edits)
  return true
end

-- <Tab>: jump to the nearest edit, or on one, take them all; false when there is nothing to do.
function M.tab(bufnr)
  local buffer = buffers[bufnr]
  local suggestion = buffer and buffer.suggestion
  if not suggestion then
    return false
  end
  if not is_current(bufnr, suggestion) then
    M.dismiss(bufnr)
    return false
  end
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  local target = edits.nearest(suggestion.edits, row)
  if edits.distance(target, row) == 0 then
    return accept(bufnr, buffer, suggestion)
  end
  local target_row, col = edits.landing(target, buffer_lines(bufnr))
  vim.api.nvim_win_set_cursor(0, { target_row + 1, col })
  return true
end

-- The buffer is gone: free its timer.
function M.forget(bufnr)
  local buffer = buffers[bufnr]
  if buffer then
    M.dismiss(bufnr)
    buffer.timer:close()
    buffers[bufnr] = nil
  end
end

-- The edits shown in `bufnr`, for tests and statuslines: a list of { first, last, text } or nil.
function M.shown(bufnr)
  local suggestion = buffers[bufnr] and buffers[bufnr].suggestion
  return suggestion and vim.tbl_map(function(edit)
    return { first = edit.first, last = edit.last, text = edit.text }
  end, suggestion.edits)
end

return M

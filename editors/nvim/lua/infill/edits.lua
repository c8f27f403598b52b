-- The rules of next edits, without a buffer: an answer of textDocument/copilotInlineEdit checked
-- and turned into whole-line edits of one document version (edits for another document or version,
-- ranges that are not whole lines, and overlapping ones are dropped), which edit <Tab> goes to and
-- where the cursor lands there, and the part of the old text an edit changes. `lines` is a list of
-- the buffer's lines (no line breaks); rows are 0-based; an edit replaces rows [first, last).
local M = {}

-- The length of `line` in the client's offset encoding.
function M.line_length(line, encoding)
  if encoding == "utf-8" then
    return #line
  end
  local utf32, utf16 = vim.str_utfindex(line)
  return encoding == "utf-32" and utf32 or utf16
end

local function is_position(position)
  return type(position) == "table" and type(position.line) == "number" and position.line >= 0
    and type(position.character) == "number" and position.character >= 0
end

-- The rows a range covers, if it covers whole lines: first, last (exclusive), to_end (it ends the
-- buffer's last line, without the break after it); nil otherwise. A buffer's lines end with a
-- break the server sees ('eol'), so a range may also end at the start of the line after the last.
function M.whole_lines(range, lines, encoding)
  if type(range) ~= "table" or not is_position(range.start) or not is_position(range["end"])
      or range.start.character ~= 0 then
    return nil
  end
  local first, stop, last_row = range.start.line, range["end"], #lines - 1
  if stop.character == 0 and first <= stop.line and stop.line <= last_row + 1 then
    return first, stop.line, false
  end
  if stop.line == last_row and first <= last_row and stop.character == M.line_length(lines[#lines], encoding) then
    return first, last_row + 1, true
  end
  return nil
end

local function overlaps(a, b)
  return a.first < math.max(b.last, b.first + 1) and b.first < math.max(a.last, a.first + 1)
end

-- The edits of `result` for `uri` at `version`, in the server's order (nearest the cursor first).
function M.from_result(result, uri, version, lines, encoding)
  local kept = {}
  for _, raw in ipairs(type(result) == "table" and type(result.edits) == "table" and result.edits or {}) do
    local document = type(raw) == "table" and raw.textDocument
    if type(raw.text) == "string" and type(document) == "table" and document.uri == uri
        and document.version == version then
      local first, last, to_end = M.whole_lines(raw.range, lines, encoding)
      local edit = first and { first = first, last = last, to_end = to_end, text = raw.text, range = raw.range,
                               command = raw.command }
      if edit and not vim.tbl_contains(vim.tbl_map(function(other) return overlaps(other, edit) end, kept), true) then
        table.insert(kept, edit)
      end
    end
  end
  return kept
end

-- How many rows `row` is from the rows an edit replaces (0: on one of them).
function M.distance(edit, row)
  if row < edit.first then
    return edit.first - row
  end
  return math.max(0, row - math.max(edit.last - 1, edit.first))
end

-- The edit <Tab> goes to from `row`: the nearest, the server's order breaking ties.
function M.nearest(edits, row)
  local best
  for _, edit in ipairs(edits) do
    if not best or M.distance(edit, row) < M.distance(best, row) then
      best = edit
    end
  end
  return best
end

-- The text an edit replaces: its lines, each with its break but the buffer's last.
function M.old_text(edit, lines)
  local replaced = vim.list_slice(lines, edit.first + 1, edit.last)
  local text = table.concat(replaced, "\n")
  return (edit.to_end or #replaced == 0) and text or text .. "\n"
end

-- The byte lengths of the common start of `a` and `b` and of their common end after it.
function M.common_ends(a, b)
  local prefix = 0
  while prefix < #a and prefix < #b and a:byte(prefix + 1) == b:byte(prefix + 1) do
    prefix = prefix + 1
  end
  local suffix = 0
  while suffix < #a - prefix and suffix < #b - prefix and a:byte(#a - suffix) == b:byte(#b - suffix) do
    suffix = suffix + 1
  end
  return prefix, suffix
end

-- The 0-based (row, byte column) `offset` bytes into an edit's old text.
local function position_in(edit, text, offset)
  local rows = vim.split(text:sub(1, offset), "\n", { plain = true })
  return edit.first + #rows - 1, #rows[#rows]
end

-- The part of an edit's old text it changes: start row, col, end row, col (bytes).
function M.changed(edit, lines)
  local before = M.old_text(edit, lines)
  local prefix, suffix = M.common_ends(before, edit.text)
  local start_row, start_col = position_in(edit, before, prefix)
  local end_row, end_col = position_in(edit, before, #before - suffix)
  return start_row, start_col, end_row, end_col
end

-- Where <Tab> puts the cursor at an edit: the first byte it changes (0-based row, col).
function M.landing(edit, lines)
  local before = M.old_text(edit, lines)
  local prefix = M.common_ends(before, edit.text)
  local within = edit.to_end and #before or math.max(0, #before - 1)
  return position_in(edit, before, math.min(prefix, within))
end

-- The edit's new text as lines, without its final break.
function M.new_lines(edit)
  local body = edit.to_end and edit.text or (edit.text:gsub("\r?\n$", ""))
  if edit.text == "" then
    return {}
  end
  return vim.split(body, "\r?\n")
end

return M

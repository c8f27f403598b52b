-- Next edits drawn with extmarks: the part of the old text an edit changes highlighted
-- (InfillEditOld), a sign in the gutter (InfillEditSign), and the new text as virtual lines below
-- the old ones (InfillEditNew; a deletion shows "(delete)").
local edits = require("infill.edits")

local M = {}

M.namespace = vim.api.nvim_create_namespace("infill_next_edit")
vim.api.nvim_set_hl(0, "InfillEditOld", { link = "DiffDelete", default = true })
vim.api.nvim_set_hl(0, "InfillEditNew", { link = "DiffAdd", default = true })
vim.api.nvim_set_hl(0, "InfillEditSign", { link = "DiffChange", default = true })

local SIGN = ">"

local function draw(bufnr, edit, lines)
  local start_row, start_col, end_row, end_col = edits.changed(edit, lines)
  if start_row < #lines then
    vim.api.nvim_buf_set_extmark(bufnr, M.namespace, start_row, start_col, {
      end_row = end_row, end_col = end_col, hl_group = "InfillEditOld",
      sign_text = SIGN, sign_hl_group = "InfillEditSign",
    })
  end
  local virt_lines = {}
  for _, line in ipairs(edits.new_lines(edit)) do
    table.insert(virt_lines, { { line, "InfillEditNew" } })
  end
  if #virt_lines == 0 then
    virt_lines = { { { "(delete)", "InfillEditNew" } } }
  end
  local below = math.min(math.max(edit.last - 1, edit.first), #lines - 1)
  vim.api.nvim_buf_set_extmark(bufnr, M.namespace, below, 0, {
    virt_lines = virt_lines, virt_lines_above = edit.last == edit.first,
  })
end

-- Draw `list` (next edits of `bufnr`, whose lines are `lines`).
function M.show(bufnr, list, lines)
  M.clear(bufnr)
  for _, edit in ipairs(list) do
    draw(bufnr, edit, lines)
  end
end

function M.clear(bufnr)
  if vim.api.nvim_buf_is_valid(bufnr) then
    vim.api.nvim_buf_clear_namespace(bufnr, M.namespace, 0, -1)
  end
end

return M

-- Ghost text: a suggestion drawn with extmarks, its first line after the cursor (virt_text) and
-- the rest as virtual lines below. Inline virtual text needs Neovim 0.10; before it the first line
-- overlays what follows the cursor.
local M = {}

M.namespace = vim.api.nvim_create_namespace("infill")
vim.api.nvim_set_hl(0, "InfillGhost", { link = "Comment", default = true })

local POSITION = vim.fn.has("nvim-0.10") == 1 and "inline" or "overlay"

-- The suggestion's lines as drawn: tabs as spaces, no carriage returns.
function M.layout(text, tabstop)
  local spaces = string.rep(" ", tabstop)
  local lines = {}
  for _, line in ipairs(vim.split(text, "\n", { plain = true })) do
    table.insert(lines, (line:gsub("\r$", ""):gsub("\t", spaces)))
  end
  return lines
end

-- Draw `text` at the 0-based (row, col) of `bufnr`; returns the extmark's id.
function M.show(bufnr, row, col, text)
  local lines = M.layout(text, vim.bo[bufnr].tabstop)
  local virt_lines = {}
  for index = 2, #lines do
    table.insert(virt_lines, { { lines[index], "InfillGhost" } })
  end
  return vim.api.nvim_buf_set_extmark(bufnr, M.namespace, row, col, {
    virt_text = { { lines[1], "InfillGhost" } },
    virt_text_pos = POSITION,
    virt_lines = #virt_lines > 0 and virt_lines or nil,
    hl_mode = "combine",
  })
end

function M.clear(bufnr)
  if vim.api.nvim_buf_is_valid(bufnr) then
    vim.api.nvim_buf_clear_namespace(bufnr, M.namespace, 0, -1)
  end
end

return M

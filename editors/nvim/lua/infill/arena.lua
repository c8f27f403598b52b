-- The arena, as Copilot Arena shows it: with the server's `arena` setting on, an inline answer holds
-- two items whose commands are `infill.arenaVote` (lsp_server/arena.py). They are drawn as one ghost
-- text: the top answer, a separator line (`<indent>======`), the line's prefix again and the bottom
-- answer. <Tab> takes the top, <S-Tab> the bottom, typing on takes neither; each outcome goes to the
-- server as workspace/executeCommand `infill.arenaVote` with { battleId, pick }.
local lsp = require("infill.lsp")

local M = {}

M.VOTE_COMMAND = "infill.arenaVote"
M.SEPARATOR = "======"

local function vote_arguments(item)
  local command = item and item.command
  return command and command.command == M.VOTE_COMMAND and command.arguments or nil
end

-- The battle an inline answer holds: { battle_id, top, bottom }, or nil for a plain answer.
function M.pair(result)
  local items = result and (result.items or result) or {}
  if #items ~= 2 then
    return nil
  end
  local top, bottom = vote_arguments(items[1]), vote_arguments(items[2])
  if not (top and bottom and type(top[1]) == "string" and top[2] == "top" and bottom[1] == top[1]
          and bottom[2] == "bottom" and type(items[1].insertText) == "string"
          and type(items[2].insertText) == "string") then
    return nil
  end
  return { battle_id = top[1], top = items[1].insertText, bottom = items[2].insertText }
end

-- The one ghost text of a pair at a cursor whose line reads `line_prefix` before it.
function M.ghost_text(pair, line_prefix)
  local indent = line_prefix:match("^[ \t]*")
  return (pair.top:gsub("\n$", "")) .. "\n" .. indent .. M.SEPARATOR .. "\n" .. line_prefix
    .. (pair.bottom:gsub("\n$", ""))
end

-- Send the pick; a vote the server could not record is shown.
function M.vote(client, pair, pick)
  local params = { command = M.VOTE_COMMAND, arguments = { pair.battle_id, pick } }
  lsp.call(client, "request", "workspace/executeCommand", params, function(err)
    if err then
      vim.schedule(function()
        vim.notify("infill: arena vote not recorded: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      end)
    end
  end)
end

return M

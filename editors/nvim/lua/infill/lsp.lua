-- The built-in client, across versions: find or start the `infill` client for a buffer, and call
-- client methods (plain functions before Neovim 0.11, methods since).
local M = {}

local NAME = "infill"
local METHODS = vim.fn.has("nvim-0.11") == 1

function M.call(client, method, ...)
  if METHODS then
    return client[method](client, ...)
  end
  return client[method](...)
end

-- The `infill` client attached to `bufnr`, or nil.
function M.attached(bufnr)
  local clients = (vim.lsp.get_clients or vim.lsp.get_active_clients)()
  for _, client in ipairs(clients) do
    if client.name == NAME and vim.lsp.buf_is_attached(bufnr, client.id) then
      return client
    end
  end
  return nil
end

local started = {} -- root directory -> client id

-- Attach `bufnr` to the client of its root directory, starting the server the first time
-- (vim.lsp.start does both from Neovim 0.8).
function M.attach(bufnr, config)
  if M.attached(bufnr) then
    return
  end
  local root = config.root_dir and config.root_dir(bufnr) or vim.fn.getcwd()
  if vim.lsp.start then
    vim.lsp.start({ name = NAME, cmd = config.cmd, root_dir = root, init_options = config.settings },
                  { bufnr = bufnr })
    return
  end
  local id = started[root]
  local client = id and vim.lsp.get_client_by_id(id)
  if not client or M.call(client, "is_stopped") then
    id = vim.lsp.start_client({
      name = NAME,
      cmd = config.cmd,
      root_dir = root,
      init_options = config.settings,
    })
    if not id then
      vim.notify("infill: the server did not start: " .. table.concat(config.cmd, " "), vim.log.levels.ERROR)
      return
    end
    started[root] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
end

return M

-- The built-in client, across versions: find or start the `infill` client for a buffer, and call
-- client methods (plain functions before Neovim 0.11, methods since). A started server gets a
-- client per root directory; a running TCP server, which serves one client at a time, gets one
-- client for every buffer, and the token it wrote in initializationOptions. The client keeps its
-- inline completions to the plugin: Neovim's built-in vim.lsp.inline_completion (0.12) never sees it.
local tcp = require("infill.tcp")

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

local started = {} -- root directory (or a TCP server's address) -> client id

-- The plugin's session owns infill's ghost text and accept key: with the server's
-- inlineCompletionProvider out of the client's capabilities, the built-in inline completion (which
-- attaches only to clients that support the method, whatever vim.lsp.inline_completion.enable
-- says) neither asks this server nor draws a second ghost text. The plugin's own requests still go.
local function keep_inline_completions(client)
  if client.server_capabilities then
    client.server_capabilities.inlineCompletionProvider = nil
  end
end

local said_who_owns = false

-- Where the built-in inline completion is on for `bufnr`, say once which one shows infill's
-- suggestions there.
function M.say_who_owns_ghost_text(bufnr)
  local built_in = vim.lsp.inline_completion
  if said_who_owns or not (built_in and built_in.is_enabled({ bufnr = bufnr })) then
    return
  end
  said_who_owns = true
  vim.notify("infill: the plugin shows infill's suggestions and takes them with its accept key; "
             .. "vim.lsp.inline_completion does not ask infill's server (for the built-in alone, "
             .. "configure `infill lsp` with vim.lsp.config and leave the plugin out)", vim.log.levels.INFO)
end

-- The client's init_options: the settings and, for a TCP server, its token (read at each start,
-- since a restarted server has a new one); nil and a message when there is no token.
local function init_options(config)
  if not config.tcp then
    return config.settings
  end
  local token, err = tcp.read_token(config.tcp.token_file)
  if not token then
    return nil, err
  end
  return vim.tbl_extend("force", config.settings, { token = token })
end

-- The client's configuration, or nil and a message.
local function client_config(config, root)
  local options, err = init_options(config)
  if not options then
    return nil, err
  end
  local client = { name = NAME, cmd = config.cmd, root_dir = root, init_options = options,
                   on_init = keep_inline_completions }
  if config.tcp then
    local initialized = false
    client.on_init = function(started_client)
      initialized = true
      keep_inline_completions(started_client)
    end
    client.on_exit = function()
      if not initialized then
        vim.schedule(function()
          vim.notify("infill: the connection to " .. config.tcp.address .. " ended before initialize was "
                     .. "answered: is the server running (`infill run`, `infill lsp --tcp PORT`) with no "
                     .. "other client, and is " .. config.tcp.token_file .. " the token file it printed? "
                     .. "See :LspLog", vim.log.levels.ERROR)
        end)
      end
    end
  end
  return client
end

local function start_failed(message)
  vim.notify("infill: " .. message, vim.log.levels.ERROR)
end

-- Attach `bufnr` to the client of its root directory, starting the client the first time
-- (vim.lsp.start does both from Neovim 0.8).
function M.attach(bufnr, config)
  if M.attached(bufnr) then
    return
  end
  local root = config.root_dir and config.root_dir(bufnr) or vim.fn.getcwd()
  local key = config.tcp and config.tcp.address or root
  local id = started[key]
  local client = id and vim.lsp.get_client_by_id(id)
  if client and not M.call(client, "is_stopped") then
    vim.lsp.buf_attach_client(bufnr, id)
    return
  end
  local client_settings, err = client_config(config, root)
  if not client_settings then
    return start_failed(err)
  end
  if vim.lsp.start then
    id = vim.lsp.start(client_settings, { bufnr = bufnr })
  else
    id = vim.lsp.start_client(client_settings)
    if id then
      vim.lsp.buf_attach_client(bufnr, id)
    end
  end
  if not id then
    local server = config.tcp and config.tcp.address or table.concat(config.cmd, " ")
    return start_failed("the server did not start: " .. server)
  end
  started[key] = id
end

return M

-- Connecting to a running TCP server (`infill run`, `infill lsp --tcp PORT`) instead of starting
-- one: the `address` option, the token file the server wrote at launch (it closes a connection
-- whose `initialize` does not carry the token in initializationOptions), and the client's command:
-- vim.lsp.rpc.connect where Neovim has it (0.8+), else lsp_server/bridge.py, a stdio <-> TCP
-- bridge (standard library only, so any python3 runs it).
local M = {}

-- "HOST:PORT" (an IPv6 host in brackets, "[::1]:2087") as host, port; nil when it is not one.
function M.parse_address(text)
  local host, port = text:match("^%[([^%]]+)%]:(%d+)$")
  if not host then
    host, port = text:match("^([^:%s%[%]]+):(%d+)$")
  end
  port = tonumber(port)
  if not host or port < 1 or port > 65535 then
    return nil
  end
  return host, port
end

local function set(value)
  return value ~= nil and value ~= ""
end

-- Where the server writes its token for `port` unless told otherwise (its --token-file).
function M.token_path(port, env)
  local file = "/infill/lsp-" .. port .. ".token"
  if set(env.XDG_RUNTIME_DIR) then
    return env.XDG_RUNTIME_DIR .. file
  end
  return (set(env.XDG_STATE_HOME) and env.XDG_STATE_HOME or env.HOME .. "/.local/state") .. file
end

-- The token in `path` (64 hex digits, then a newline), or nil and a message saying how to get one.
function M.read_token(path)
  local advice = "start the server with `infill run` or `infill lsp --tcp PORT` (it prints where it "
                 .. "writes its token), or pass token_file = '/that/path' to setup()"
  local handle, err = io.open(path, "r")
  if not handle then
    return nil, "cannot read the server's token (" .. err .. "): " .. advice
  end
  local text = handle:read("*a") or ""
  handle:close()
  local token = vim.trim(text)
  if #token ~= 64 or token:find("%X") then
    return nil, path .. " does not hold a server token (64 hex digits): " .. advice
  end
  return token
end

-- The client's command for `host`, `port`: Neovim's own TCP transport, else `bridge` (a command
-- line that ends with the address).
function M.cmd(host, port, bridge)
  if vim.lsp.rpc.connect then
    return vim.lsp.rpc.connect(host, port)
  end
  return bridge
end

-- The command line of the bridge from `checkout` (the infill checkout this plugin lives in) to
-- `address`, on the checkout's .venv Python when there is one.
function M.bridge(checkout, address)
  local venv = checkout .. "/.venv/bin/python"
  local python = vim.fn.executable(venv) == 1 and venv or "python3"
  return { python, checkout .. "/lsp_server/bridge.py", address }
end

return M

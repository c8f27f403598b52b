-- The plugin's options: defaults, checks, and the server command. Without `cmd`, the server is the
-- `.venv/bin/infill` of the infill checkout this plugin lives in, else `infill` on PATH. With
-- `address`, the plugin starts no server: it connects to a running one (infill.tcp).
local tcp = require("infill.tcp")

local M = {}

M.defaults = {
  cmd = nil, -- the server command, e.g. { "/path/to/infill/.venv/bin/infill", "lsp" }
  address = nil, -- a running TCP server ("127.0.0.1:2087" for `make run`) instead of starting one
  token_file = nil, -- that server's token file; default: the server's own default for the port
  filetypes = { "python", "javascript", "javascriptreact", "typescript", "typescriptreact",
                "go", "rust", "java", "c", "cpp" },
  debounce_ms = 8, -- ask for a completion after this long without a keystroke (20 cost 15 ms a key: README)
  accept_key = "<Tab>", -- in insert mode, while a suggestion is shown; false: map it yourself
  arena_bottom_key = "<S-Tab>", -- insert mode, while an arena pair is shown (settings.arena): take the bottom
  settings = {}, -- the server's settings (initializationOptions): deadlineMs, maxTokens, mode, ...
  -- e.g. backend = { kind = "openai", url = "http://127.0.0.1:30000", apiKeyFile = "~/.config/infill/key" }:
  -- an upstream model server instead of the workers (the key file chmod 600; see upstream/config.py)
  root_dir = nil, -- a function(bufnr) returning the workspace folder; default: the current directory
  next_edit = {
    enabled = true, -- after a change, ask for the follow-up edits elsewhere in the buffer and show them
    debounce_ms = 100, -- after a change in normal mode or leaving insert mode, wait this long before asking
    jump_key = "<Tab>", -- normal mode, while edits are shown: go to the nearest, on it take them all; false: none
    dismiss_key = "<Esc>", -- normal mode, while edits are shown: drop them; false: none
  },
}

-- The checkout's root: this file is <root>/editors/nvim/lua/infill/config.lua.
local function checkout_root()
  local here = debug.getinfo(1, "S").source:sub(2)
  return vim.fn.fnamemodify(here, ":p:h:h:h:h:h")
end

function M.default_cmd()
  local venv = checkout_root() .. "/.venv/bin/infill"
  if vim.fn.executable(venv) == 1 then
    return { venv, "lsp" }
  end
  if vim.fn.executable("infill") == 1 then
    return { "infill", "lsp" }
  end
  return nil
end

-- With `address`: the command that connects to it, and the token file to read (`config.tcp`).
local function resolve_tcp(config)
  if config.cmd then
    error("infill: pass either cmd (a server to start) or address (a running server), not both")
  end
  local host, port = tcp.parse_address(config.address)
  if not host then
    error("infill: address must be HOST:PORT, e.g. 127.0.0.1:2087, not " .. vim.inspect(config.address))
  end
  config.cmd = tcp.cmd(host, port, tcp.bridge(checkout_root(), config.address))
  config.tcp = {
    address = config.address,
    token_file = config.token_file and vim.fn.expand(config.token_file) or tcp.token_path(port, vim.env),
  }
end

-- The defaults with `options` over them; raises an error that names a bad option.
function M.resolve(options)
  local config = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), options or {})
  vim.validate({
    cmd = { config.cmd, "table", true },
    address = { config.address, "string", true },
    token_file = { config.token_file, "string", true },
    filetypes = { config.filetypes, "table" },
    debounce_ms = { config.debounce_ms, "number" },
    accept_key = { config.accept_key, { "string", "boolean" } },
    arena_bottom_key = { config.arena_bottom_key, { "string", "boolean" } },
    settings = { config.settings, "table" },
    root_dir = { config.root_dir, "function", true },
    next_edit = { config.next_edit, "table" },
  })
  vim.validate({
    ["next_edit.enabled"] = { config.next_edit.enabled, "boolean" },
    ["next_edit.debounce_ms"] = { config.next_edit.debounce_ms, "number" },
    ["next_edit.jump_key"] = { config.next_edit.jump_key, { "string", "boolean" } },
    ["next_edit.dismiss_key"] = { config.next_edit.dismiss_key, { "string", "boolean" } },
  })
  if config.address then
    resolve_tcp(config)
    return config
  end
  config.cmd = config.cmd or M.default_cmd()
  if not config.cmd then
    error("infill: cannot find the server; run `make setup` in the infill checkout, "
          .. "or pass cmd = { '/path/to/infill/.venv/bin/infill', 'lsp' } to setup()")
  end
  return config
end

return M

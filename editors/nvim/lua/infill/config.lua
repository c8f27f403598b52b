-- The plugin's options: defaults, checks, and the server command. Without `cmd`, the server is the
-- `.venv/bin/infill` of the infill checkout this plugin lives in, else `infill` on PATH.
local M = {}

M.defaults = {
  cmd = nil, -- the server command, e.g. { "/path/to/infill/.venv/bin/infill", "lsp" }
  filetypes = { "python", "javascript", "javascriptreact", "typescript", "typescriptreact",
                "go", "rust", "java", "c", "cpp" },
  debounce_ms = 75, -- ask for a completion after this long without a keystroke
  accept_key = "<Tab>", -- in insert mode, while a suggestion is shown; false: map it yourself
  settings = {}, -- the server's settings (initializationOptions): deadlineMs, maxTokens, mode, ...
  root_dir = nil, -- a function(bufnr) returning the workspace folder; default: the current directory
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

-- The defaults with `options` over them; raises an error that names a bad option.
function M.resolve(options)
  local config = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), options or {})
  vim.validate({
    cmd = { config.cmd, "table", true },
    filetypes = { config.filetypes, "table" },
    debounce_ms = { config.debounce_ms, "number" },
    accept_key = { config.accept_key, { "string", "boolean" } },
    settings = { config.settings, "table" },
    root_dir = { config.root_dir, "function", true },
  })
  config.cmd = config.cmd or M.default_cmd()
  if not config.cmd then
    error("infill: cannot find the server; run `make setup` in the infill checkout, "
          .. "or pass cmd = { '/path/to/infill/.venv/bin/infill', 'lsp' } to setup()")
  end
  return config
end

return M

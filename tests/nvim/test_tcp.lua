-- The Neovim plugin (editors/nvim) against a running `infill lsp --tcp PORT` in a headless Neovim
-- (0.7+): setup({ address = ..., token_file = ... }) connects (through lsp_server/bridge.py
-- before Neovim 0.8) with the server's token in initializationOptions; two buffers under
-- different root folders share the one connection the server allows; an inline completion comes
-- back. It first checks the rules of infill.tcp (addresses, token paths, token files). The outcome
-- goes to $INFILL_RESULT as JSON; Neovim exits 0 when every check passed.
--
-- Run: nvim --headless -u NONE -c "luafile tests/nvim/test_tcp.lua" with the environment
--   INFILL_PLUGIN      the plugin folder (editors/nvim)
--   INFILL_ADDRESS     the server's HOST:PORT
--   INFILL_TOKEN_FILE  the token file the server wrote
--   INFILL_FILE        a Python file whose line 0 ends with an identifier to complete
--   INFILL_OTHER_FILE  a Python file in another folder
--   INFILL_RESULT      where the outcome is written

local env = vim.env
local report = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/report.lua")
local WAIT_MS = 60000

local function check(condition, message)
  if not condition then
    error(message, 2)
  end
end

local function open(file)
  vim.cmd("edit " .. vim.fn.fnameescape(file))
  local bufnr = vim.api.nvim_get_current_buf()
  vim.bo[bufnr].filetype = "python"
  return bufnr
end

local notes = {} -- what the plugin told the user
vim.notify = function(message) table.insert(notes, message) end

local function attached_client(bufnr)
  local lsp = require("infill.lsp")
  local function initialized()
    local client = lsp.attached(bufnr)
    return client and client.initialized
  end
  vim.wait(WAIT_MS, function() return initialized() or #notes > 0 end, 20)
  check(#notes == 0, "the plugin says: " .. table.concat(notes, "; "))
  check(initialized(), "the server did not answer initialize")
  return lsp.attached(bufnr)
end

local function inline(client, bufnr)
  local line = vim.api.nvim_buf_get_lines(bufnr, 0, 1, true)[1]
  local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) }, position = { line = 0, character = #line },
                   context = { triggerKind = 1 } } -- Invoked
  local answer
  require("infill.lsp").call(client, "request", "textDocument/inlineCompletion", params, function(err, result)
    answer = { err = err, result = result }
  end, bufnr)
  check(vim.wait(WAIT_MS, function() return answer ~= nil end, 10), "no inline completion answer")
  check(answer.err == nil, "inline completion failed: " .. vim.inspect(answer.err))
  local texts = {}
  for _, item in ipairs(answer.result.items or answer.result) do
    check(type(item.insertText) == "string" and item.insertText ~= "", "an empty inline item")
    table.insert(texts, item.insertText)
  end
  return texts
end

-- The rules of infill.tcp and the options that use them, without a server.
local function check_rules()
  local tcp = require("infill.tcp")
  local host, port = tcp.parse_address("[::1]:2087")
  check(host == "::1" and port == 2087, "an IPv6 address in brackets")
  for _, text in ipairs({ "127.0.0.1", ":2087", "host:0", "host:65536", "host:http", "tcp://h:1" }) do
    check(tcp.parse_address(text) == nil, "a bad address passed: " .. text)
  end
  check(tcp.token_path(2087, { XDG_RUNTIME_DIR = "/run/u", HOME = "/h" }) == "/run/u/infill/lsp-2087.token",
        "the runtime folder comes first")
  check(tcp.token_path(9, { XDG_RUNTIME_DIR = "", XDG_STATE_HOME = "/s", HOME = "/h" }) == "/s/infill/lsp-9.token",
        "then the state folder")
  check(tcp.token_path(9, { HOME = "/h" }) == "/h/.local/state/infill/lsp-9.token", "then ~/.local/state")
  local missing = vim.fn.tempname()
  local token, err = tcp.read_token(missing)
  check(token == nil and err:find(missing, 1, true) and err:find("infill lsp --tcp", 1, true)
        and err:find("token_file", 1, true), "a missing token file: " .. tostring(err))
  vim.fn.writefile({ string.rep("ab", 31) }, missing)
  check(tcp.read_token(missing) == nil, "a short token passed")
  local config = require("infill.config")
  check(not pcall(config.resolve, { address = "localhost" }), "a bad address option passed")
  check(not pcall(config.resolve, { address = "127.0.0.1:2087", cmd = { "infill", "lsp" } }),
        "cmd and address together passed")
  local resolved = config.resolve({ address = "127.0.0.1:2087", token_file = "~/t.token" })
  check(resolved.tcp.token_file == vim.fn.expand("~/t.token"), "token_file is not expanded")
end

local function main()
  vim.opt.runtimepath:append(env.INFILL_PLUGIN)
  check_rules()
  vim.o.swapfile = false
  vim.o.hidden = true -- the first buffer stays loaded (and attached) while the second is shown
  require("infill").setup({
    address = env.INFILL_ADDRESS,
    token_file = env.INFILL_TOKEN_FILE,
    root_dir = function(bufnr) return vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ":h") end,
    settings = { maxTokens = 8, deadlineMs = 20000, statsLog = "" },
  })
  local bufnr = open(env.INFILL_FILE)
  local client = attached_client(bufnr)
  local token = vim.trim(table.concat(vim.fn.readfile(env.INFILL_TOKEN_FILE), "\n"))
  check(client.config.init_options.token == token, "initialize did not carry the token of the token file")
  check(client.config.init_options.maxTokens == 8, "the settings did not go along with the token")
  local other = open(env.INFILL_OTHER_FILE)
  check(attached_client(other).id == client.id, "a second root folder got a second connection")
  local outcome = { inline = inline(client, bufnr) }
  check(#outcome.inline >= 1, "no inline completion items")
  require("infill.lsp").call(client, "stop")
  check(vim.wait(WAIT_MS, function() return require("infill.lsp").call(client, "is_stopped") end, 20),
        "the client did not stop")
  return outcome
end

report(pcall(main))

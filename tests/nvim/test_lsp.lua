-- A headless Neovim (0.7+) session against `infill lsp` through the built-in LSP client.
--
-- It starts the server with vim.lsp.start_client, opens a Python file, asks for an inline
-- completion (client.request) and a completion (vim.lsp.buf_request_sync), types the first
-- character of the inline completion (an incremental didChange) and asks again, then stops the
-- client. The outcome goes to $INFILL_RESULT as JSON; Neovim exits 0 when every check passed.
--
-- Run: nvim --headless -u NONE -c "luafile tests/nvim/test_lsp.lua" with the environment
--   INFILL_PYTHON  the Python interpreter that has the project installed
--   INFILL_FILE    the Python file to open; line 0 ends with an identifier to complete
--   INFILL_LOG     the server's log file
--   INFILL_RESULT  where the outcome is written

local env = vim.env
local report = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/report.lua")
local WAIT_MS = 120000 -- the server starts a worker, which loads a model on a busy CPU

local function check(condition, message)
  if not condition then
    error(message, 2)
  end
end

local function start()
  local client_id = vim.lsp.start_client({
    name = "infill",
    cmd = { env.INFILL_PYTHON, "-m", "lsp_server", "--log-file", env.INFILL_LOG },
    root_dir = vim.fn.fnamemodify(env.INFILL_FILE, ":h"),
    init_options = { maxTokens = 8, deadlineMs = 20000, statsLog = "" },
  })
  check(client_id, "vim.lsp.start_client did not start the server")
  vim.cmd("edit " .. vim.fn.fnameescape(env.INFILL_FILE))
  local bufnr = vim.api.nvim_get_current_buf()
  vim.bo[bufnr].filetype = "python"
  vim.lsp.buf_attach_client(bufnr, client_id)
  local client = vim.lsp.get_client_by_id(client_id)
  check(vim.wait(WAIT_MS, function() return client.initialized end, 20), "no initialize answer")
  return client, bufnr
end

local function position_params(bufnr, line, character)
  return { textDocument = { uri = vim.uri_from_bufnr(bufnr) },
           position = { line = line, character = character } }
end

local function inline(client, bufnr, line, character)
  local params = position_params(bufnr, line, character)
  params.context = { triggerKind = 1 } -- Invoked
  local answer
  client.request("textDocument/inlineCompletion", params, function(err, result)
    answer = { err = err, result = result }
  end, bufnr)
  check(vim.wait(WAIT_MS, function() return answer ~= nil end, 10), "no inline completion answer")
  check(answer.err == nil, "inline completion failed: " .. vim.inspect(answer.err))
  local items = answer.result.items or answer.result
  local texts = {}
  for _, item in ipairs(items) do
    check(type(item.insertText) == "string" and item.insertText ~= "", "an empty inline item")
    check(item.range.start.line == line and item.range.start.character == character,
          "an inline item away from the cursor")
    table.insert(texts, item.insertText)
  end
  return texts
end

local function completion(client, bufnr, line, character)
  local responses = vim.lsp.buf_request_sync(bufnr, "textDocument/completion",
                                             position_params(bufnr, line, character), WAIT_MS)
  check(responses and responses[client.id], "no completion answer")
  local response = responses[client.id]
  check(response.err == nil, "completion failed: " .. vim.inspect(response.err))
  local labels = {}
  for _, item in ipairs(response.result.items) do
    check(item.textEdit and item.textEdit.newText ~= "", "a completion item without an edit")
    check(item.data and item.data.requestId, "a completion item without its request id")
    table.insert(labels, item.label)
  end
  return labels
end

local function main()
  local client, bufnr = start()
  check(client.server_capabilities.inlineCompletionProvider, "no inline completion capability")
  check(client.server_capabilities.completionProvider, "no completion capability")
  local line, character = 0, #vim.api.nvim_buf_get_lines(bufnr, 0, 1, true)[1]
  local outcome = { inline = inline(client, bufnr, line, character) }
  check(#outcome.inline >= 1, "no inline completion items")
  outcome.completion = completion(client, bufnr, line, character)
  check(#outcome.completion >= 1, "no completion items")
  local typed = outcome.inline[1]:sub(1, 1)
  vim.api.nvim_buf_set_text(bufnr, line, character, line, character, { typed })
  outcome.after_typing = inline(client, bufnr, line, character + 1)
  client.stop()
  check(vim.wait(WAIT_MS, function() return client.is_stopped() end, 20), "the server did not stop")
  return outcome
end

report(pcall(main))

-- infill for Neovim: ghost-text completions and next edits from `infill lsp` on the built-in LSP
-- client.
--
--   require("infill").setup({ debounce_ms = 8, settings = { deadlineMs = 1500 } })
--   require("infill").setup({ address = "127.0.0.1:2087" }) -- a running `infill lsp --tcp 2087`
--
-- Buffers of the configured filetypes attach to the server. The plugin's own session
-- (infill.session) shows and accepts the suggestions on every version, and next edits
-- (infill.next_edit) are its own too. On Neovim 0.12 and later, where the built-in
-- vim.lsp.inline_completion could ask the same server and draw a second ghost text, the plugin
-- owns ghost text and the accept key in its buffers: the built-in never sees infill's client
-- (infill.lsp), and a buffer where the built-in is on gets one message saying so. To use the
-- built-in instead, configure the server with vim.lsp.config and leave this plugin out.
-- Options: see infill.config.
local config_module = require("infill.config")
local lsp = require("infill.lsp")
local next_edit = require("infill.next_edit")
local protocol = require("infill.protocol")
local session = require("infill.session")

local M = {}

local function feed(key)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(key, true, true, true), "n", false)
end

-- Accept the suggestion shown in the current buffer; false when there is none.
function M.accept()
  return session.accept(vim.api.nvim_get_current_buf())
end

local function map_accept_key(bufnr, key)
  vim.keymap.set("i", key, function()
    if not session.accept(bufnr) then
      feed(key)
    end
  end, { buffer = bufnr, desc = "infill: accept the suggestion" })
end

-- <S-Tab> (`arena_bottom_key`) takes the bottom answer of an arena pair, else does what it always does.
local function map_arena_bottom_key(bufnr, key)
  vim.keymap.set("i", key, function()
    if not session.accept_bottom(bufnr) then
      feed(key)
    end
  end, { buffer = bufnr, desc = "infill: take the arena's bottom answer" })
end

local function follow_typing(bufnr, group, config)
  local function on(events, callback)
    vim.api.nvim_create_autocmd(events, { group = group, buffer = bufnr, callback = callback })
  end
  on("TextChangedI", function() session.changed(bufnr, config.debounce_ms) end)
  on("CursorMovedI", function() session.moved(bufnr) end)
  on({ "InsertLeave", "BufLeave" }, function() session.stop(bufnr) end)
  on({ "BufUnload", "BufWipeout" }, function() session.forget(bufnr) end)
end

-- A normal-mode key that runs `action` while next edits are shown, else does what it always does.
local function map_next_edit_key(bufnr, key, action, desc)
  if key then
    vim.keymap.set("n", key, function()
      if not action(bufnr) then
        feed(key)
      end
    end, { buffer = bufnr, desc = desc })
  end
end

local function follow_edits(bufnr, group, options)
  local function on(events, ask)
    vim.api.nvim_create_autocmd(events, { group = group, buffer = bufnr, callback = function()
      next_edit.changed(bufnr, options.debounce_ms, ask)
    end })
  end
  on({ "TextChanged", "InsertLeave" }, true)
  on("TextChangedI", false)
  vim.api.nvim_create_autocmd("BufLeave", { group = group, buffer = bufnr,
                                            callback = function() next_edit.dismiss(bufnr) end })
  vim.api.nvim_create_autocmd({ "BufUnload", "BufWipeout" }, { group = group, buffer = bufnr,
                                                               callback = function() next_edit.forget(bufnr) end })
  map_next_edit_key(bufnr, options.jump_key, next_edit.tab, "infill: go to the next edit, or take the edits")
  map_next_edit_key(bufnr, options.dismiss_key, next_edit.dismiss, "infill: dismiss the next edits")
end

local function enable(bufnr, group, config)
  if vim.b[bufnr].infill_enabled then
    return
  end
  vim.b[bufnr].infill_enabled = true
  lsp.attach(bufnr, config)
  if config.accept_key then
    map_accept_key(bufnr, config.accept_key)
  end
  follow_typing(bufnr, group, config)
  if config.arena_bottom_key then
    map_arena_bottom_key(bufnr, config.arena_bottom_key)
  end
  lsp.say_who_owns_ghost_text(bufnr)
  if config.next_edit.enabled then
    follow_edits(bufnr, group, config.next_edit)
  end
end

-- The built-in client runs an accepted item's command; this one reports the acceptance.
local function report_accept_command(command, context)
  local client = vim.lsp.get_client_by_id(context.client_id)
  local argument = command.arguments and command.arguments[1]
  if client and argument then
    lsp.call(client, "notify", protocol.ACCEPT, { requestId = argument.requestId, index = argument.index })
  end
end

function M.setup(options)
  local config = config_module.resolve(options)
  vim.lsp.commands[protocol.ACCEPT_COMMAND] = report_accept_command
  local group = vim.api.nvim_create_augroup("infill", { clear = true })
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = config.filetypes,
    callback = function(args) enable(args.buf, group, config) end,
  })
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) and vim.tbl_contains(config.filetypes, vim.bo[bufnr].filetype) then
      enable(bufnr, group, config)
    end
  end
end

return M

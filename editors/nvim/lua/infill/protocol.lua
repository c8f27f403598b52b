-- The server's custom protocol (lsp_server/protocol.py):
-- the command inline items carry, the notifications that report what became of a suggestion, and
-- next edits in the shape of Copilot's language server.
return {
  ACCEPT_COMMAND = "infill.acceptCompletion", -- arguments: { { requestId, index } }
  DID_SHOW = "infill/didShowCompletion", -- params of all three: { requestId, index, acceptedChars? }
  ACCEPT = "infill/acceptCompletion",
  REJECT = "infill/rejectCompletion",
  INLINE_COMPLETION = "textDocument/inlineCompletion",
  TRIGGER_AUTOMATIC = 2, -- InlineCompletionTriggerKind.Automatic
  INLINE_EDIT = "textDocument/copilotInlineEdit", -- { textDocument = { uri, version }, position } -> { edits }
  DID_SHOW_INLINE_EDIT = "textDocument/didShowInlineEdit", -- { item = { command } }
  ACCEPT_INLINE_EDIT_COMMAND = "infill.acceptInlineEdit", -- an edit's command, run when it is taken
}

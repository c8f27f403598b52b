-- The server's custom protocol (lsp_server/server.py, lsp_server/stats.py): the command inline
-- items carry, and the notifications that report what became of a suggestion.
return {
  ACCEPT_COMMAND = "infill.acceptCompletion", -- arguments: { { requestId, index } }
  DID_SHOW = "infill/didShowCompletion", -- params of all three: { requestId, index, acceptedChars? }
  ACCEPT = "infill/acceptCompletion",
  REJECT = "infill/rejectCompletion",
  INLINE_COMPLETION = "textDocument/inlineCompletion",
  TRIGGER_AUTOMATIC = 2, -- InlineCompletionTriggerKind.Automatic
}

"""Every method, notification and command of the server beyond the LSP itself, in one place.

The editors mirror these names: `editors/vscode/src/protocol.ts` (with the arena's in
`arena.ts`) and `editors/nvim/lua/infill/protocol.lua`; a test checks each mirror against this
module. Params are plain JSON objects, read field by field where they arrive.

Completions:
- inline items carry the command `ACCEPT_COMMAND` with `[{"requestId", "index"}]`; completion items
  carry the same object as `data`;
- the client reports what became of a suggestion with `DID_SHOW_COMPLETION`,
  `ACCEPT_COMPLETION` and `REJECT_COMPLETION`, params `{"requestId", "index", "acceptedChars"?}`;
- the server tells the client its worker is up with `WORKER_READY`, `{"model", "address"}`.
Next edits, in the shape of Copilot's language server:
- `INLINE_EDIT` (request), `{"textDocument": {"uri", "version"}, "position"}` -> `{"edits": [...]}`,
  each edit `{"text", "textDocument", "range", "command"}`;
- `DID_SHOW_INLINE_EDIT` (notification), `{"item": {"command"}}`;
- `ACCEPT_INLINE_EDIT` (the edit's command), `[{"requestId", "index"}]`.
The arena: each battle's inline items carry `VOTE_COMMAND` with `[battleId, "top" | "bottom"]`;
the client sends `[battleId, "neither"]` when the user types on.
"""
from __future__ import annotations

ACCEPT_COMMAND = "infill.acceptCompletion"
DID_SHOW_COMPLETION = "infill/didShowCompletion"
ACCEPT_COMPLETION = "infill/acceptCompletion"
REJECT_COMPLETION = "infill/rejectCompletion"
WORKER_READY = "infill/workerReady"
INLINE_EDIT = "textDocument/copilotInlineEdit"
DID_SHOW_INLINE_EDIT = "textDocument/didShowInlineEdit"
ACCEPT_INLINE_EDIT = "infill.acceptInlineEdit"
VOTE_COMMAND = "infill.arenaVote"

CLIENT_MAY_IGNORE = (WORKER_READY,)  # news for the client's status bar; an editor may not show it
NAMES = (ACCEPT_COMMAND, DID_SHOW_COMPLETION, ACCEPT_COMPLETION, REJECT_COMPLETION, WORKER_READY,
         INLINE_EDIT, DID_SHOW_INLINE_EDIT, ACCEPT_INLINE_EDIT, VOTE_COMMAND)

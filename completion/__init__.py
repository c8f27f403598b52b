"""The completion rules that need no LSP session, shared by every front end (the language server,
`infill complete`, the HTTP gateway, the benchmarks), so that each gives the same answer for the
same text. Each feature's pipeline lives here once, whole: `fim` (inline completion) and
`next_edit`, each a `plan` (for a next edit from one `EditAsk` record, or `Refused` with the
gate's reason) and a `run(plan, backend, deadline)` that gives the requests what is left of the
`Deadline` (`engine.wire.deadline`), asks the backend and finishes, with the feature's one
failure policy (a failing worker's completion candidate is left out; a next edit's drafts stand).
A front end keeps only its protocol: request in, plan, run, answer out.

`positions` cuts a text at an LSP position; `syntax` parses it with tree-sitter and answers the
queries at the cursor; `languages` is the per-language table (block openers, comment markers);
`decide` is the decision to complete; `context` cuts the windows and picks the snippets
(definitions from `definitions`, found in `sources`); `requests` builds the wire requests;
`postprocess` shapes the answer; `settings` holds what they read. For next edits, `edit_events`
diffs the user's edit and `edit_regions` finds where it must propagate.
May import: the engine's wire types (`engine.wire.protocol`), its `Deadline` (`engine.wire.deadline`)
and tree-sitter; nothing of `lsp_server`, `gateway`, pygls or lsprotocol, and no engine client.
"""
from completion.settings import Settings
from engine.wire.protocol import Mode

__all__ = ["Mode", "Settings"]

"""The completion rules that need no LSP session, shared by every front end (the language server,
`infill complete`, an HTTP gateway), so that each gives the same answer for the same text.

From text to requests and from replies to texts, without LSP types:

    hole = completion.hole_in_text(uri, prefix, suffix, language)   # or pipeline.hole_at
    planned = completion.plan(hole, completion.Settings(), request_id, invoked=False)
    # planned.mode is "none", "single_line" or "multi_line"; send planned.requests, then
    texts = completion.finish(planned.hole, results, planned.mode, settings)

`positions` cuts a text at an LSP position; `syntax` parses it with tree-sitter and answers the
queries at the cursor; `decide` is the decision to complete; `context` cuts the windows and picks
the snippets (definitions from `definitions`, found in `sources`); `requests` builds the wire
requests; `postprocess` shapes the answer; `pipeline` runs the steps; `settings` holds what they
read. Nothing here imports `lsp_server`, pygls or lsprotocol; of `engine`, only its wire types.
"""
from completion.pipeline import Hole, Plan, finish, hole_in_text, plan
from completion.settings import Settings

__all__ = ["Hole", "Plan", "Settings", "finish", "hole_in_text", "plan"]

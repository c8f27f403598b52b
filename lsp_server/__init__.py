"""The language server: editors talk LSP to it, it talks to the workers.

`main` is the command line (`infill lsp`, `python -m lsp_server`); `server` builds the pygls server
with one registration per feature; `session` is what one editor's features work with (`Session`),
`settings` an editor's settings, `protocol` every custom method and command with its typed params
and results. Each feature registers its own handlers and receives the session: `completer` runs
one completion request through `completion.fim` (the pipeline every front end shares),
`inline_edit` one next edit through `completion.next_edit`, `arena` a battle of two backends
(`arena_state` is what the session keeps of it, `arena_votes` the picks); `supersede` lets a newer
request win, `workers` connects to (or starts) the workers. `documents` holds the open documents'
trees (`trees`), the workspace's definitions and the draft index (`workspace`) and edit histories
(`edit_history`); `cache` is the typing-through LRU, `stats` the log of shown and accepted
completions; `transport` and `framing` read the editor's messages (stdio or TCP with a launch
token, `launch_token`); `bridge` relays stdio to a TCP server; `logs` is the logging setup
(stderr or a file, never stdout, with request ids).
May import `completion`, `engine.client`, `upstream`, pygls and lsprotocol; never `engine.worker`,
`gateway` or `cli`.
"""

"""The language server: editors talk LSP to it, it talks to an engine worker.

`server` holds the pygls server and its handlers and `settings` an editor's settings; `completer`
runs one completion request through `completion.fim` (the pipeline every front end
shares: the decision, the context, the requests, the post-processing) around the worker call.
`trees` keeps the tree-sitter trees of the open documents, `workspace` reads the workspace's files
for the definitions index, `documents` holds the trees, the index and the recent edits together,
`cache` the typing-through LRU, `stats` the log of shown and accepted completions. `oneshot` is
the `infill complete` command, `service` is `infill run`, `logs` the logging setup (stderr or a
file, never stdout, with request ids).
"""

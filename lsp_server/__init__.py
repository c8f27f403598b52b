"""The language server: editors talk LSP to it, it talks to an engine worker.

`server` holds the pygls server and its handlers; `completer` runs one completion request through
the steps of `pipeline`: the decision to complete (`decide`), the context windows and snippets
(`context`, over the definitions of `index`), the worker call, the post-processing
(`postprocess`). `syntax` keeps the tree-sitter trees, `documents` the trees and the definitions
index together, `cache` the typing-through LRU, `stats` the log of shown and accepted completions.
`oneshot` is the `infill complete` command, `requests` the pure rules shared with it (document and
cursor to request, settings), `logs` the logging setup (stderr or a file, never stdout, with
request ids).
"""

"""The language server: editors talk LSP to it, it talks to an engine worker.

`server` holds the pygls server and its handlers, `oneshot` the `infill complete` command,
`requests` the pure rules both share (document and cursor to request, answer to editor text),
`logs` the logging setup (stderr or a file, never stdout, with request ids).
"""

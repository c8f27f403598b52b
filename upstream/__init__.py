"""Upstreams: the completion pipeline's `Backend` (`completion.fim.Backend`) on an HTTP model server.

A front end (the language server, its arena, `infill complete`, the benches) that is given an
upstream sends the requests `completion.fim.plan` and `completion.next_edit.plan` build to an
OpenAI-style server instead of the ZeroMQ workers: `config.py` reads the `backend` setting and the
key file, `templates.py` holds the FIM sentinels of the model families (which the gateway reads
too) and the chat template of instruct-only models, `dialects.py` turns a `CompleteRequest` into
each kind's HTTP body and its answer back into items, and `backend.py` sends them: the deadline as
the timeout, a cancelled task closing its request, caps on what is read, and one status message
with a backoff for an upstream that fails. Imports `completion` and `engine.client`'s wire types,
nothing above.
"""

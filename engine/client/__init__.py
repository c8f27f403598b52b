"""The engine's client side: what front ends import to reach workers.

`calls` is one call to a worker as the client makes it (errors, time, cancel on abandon);
`async_client` is the one client and `sync_client` its blocking face (the same client run on an
event loop of its own); `watch` tells whether a worker is up; `pool` balances and retries
requests over several workers; `connect` is how the language server and the gateway alike reach
theirs (the pool over the addresses, greeted). What goes over the socket is `engine.wire`'s;
starting worker processes is `engine.launch`'s.

May import: `engine.wire`, `engine.launch`, ZeroMQ, msgpack and the standard library; never
`engine.worker`, `infill` or torch (the worker runs in its own process and is reached only
through the socket).
"""

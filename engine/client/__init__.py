"""The engine's client side: what front ends import to reach workers.

`protocol` defines the wire messages (shared with the worker), `transport` the socket options
both ends share (ZMTP heartbeats), `keys` the CURVE keys and authentication (both ends), `private`
the folders only this user may touch, and `ratelimit` bounded logging. `calls` is one call to a
worker as both clients make it (errors, reply matching, cancel on abandon); `sync_client` and
`async_client` are the blocking and asyncio clients; `watch` tells whether a worker is up;
`pool` balances and retries requests over several workers; `launch` starts, greets, restarts and
stops local worker processes, and `flags` is the worker's command line as a launcher writes it.

May import: ZeroMQ, msgpack and the standard library; never `engine.worker`, `infill` or torch
(the worker runs in its own process and is reached only through the socket).
"""

"""The engine: the worker process that serves completions over ZeroMQ.

`protocol` defines the wire messages, `worker` the process (IO thread, main loop), `client` the
blocking and asyncio clients and the local worker launcher. Inside the main loop, `core` runs
each engine step as three calls: `scheduler` (pure Python: admission, deadlines, cancel,
supersession, overload) picks the batch, `runner` (the model; no sockets) advances it by one shared
forward pass, and the scheduler lets the finished requests go.

Around the worker: `transport` sets the socket options both ends share (ZMTP heartbeats), `keys`
the CURVE keys and authentication, `supervisor` runs and restarts worker processes, `watch` tells
a client whether a worker is up (health probes, connection events) and `pool` balances and
retries requests over several workers.
"""

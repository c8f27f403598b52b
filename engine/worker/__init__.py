"""The engine's worker side: the process that serves completions over ZeroMQ.

`worker` is the process's two threads (the IO thread that owns the client-facing socket, the main
loop) and `cli` its command line (`python -m engine`, `infill serve`). Inside the main loop, `core`
runs each engine step as three calls: `scheduler` (pure Python: admission, deadlines, cancel,
supersession, overload) picks the batch, `runner` (the model; no sockets) advances it by one
shared forward pass, and the scheduler lets the finished requests go. `work` turns a request into
a job and states the runner's interface, `causal_runner` serves autoregressive checkpoints left to
right, `prefix_cache` keeps keys and values across keystrokes, `placement` resolves the device,
dtype and weights flags.

May import: `engine.wire` (the protocol, transport, keys, ratelimit, the flags' rules),
`engine.launch` (its command line, for `--workers N`), `infill` and torch; never `engine.client`,
no front end.
"""

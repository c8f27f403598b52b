"""What both ends of the worker's socket speak, and nothing that runs.

`protocol` is the wire messages (msgpack frames, `Mode`, their bounds), `replies` which reply
answers which request, `probe` one blocking question to a worker (how its launcher greets and
watches it), `transport` the socket options both ends share (ZMTP heartbeats), `keys` the CURVE
keys and authentication, `private` the folders only this user may touch, `hosts` which addresses
are this machine, `ratelimit` bounded logging, `deadline` when an answer is due (the `Deadline`
the client's pool and the completion pipelines count down), and `flags` the vocabulary of the
worker's command line (device, dtype, context, cache, startup and step times) that the worker's
parser and every front end's settings check alike.

May import: ZeroMQ, msgpack and the standard library; never `engine.client`, `engine.worker`,
`engine.launch`, `infill` or torch.
"""

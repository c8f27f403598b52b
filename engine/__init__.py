"""The engine: both ends of the ZeroMQ socket between the front ends and the model.

`engine.wire` is what both ends speak and nothing that runs: the protocol (its messages declared
with their bounds, the codec), reply matching and the launcher's blocking probe, transport
options, CURVE keys, hosts, rate-limited logs and the flag rules (device, dtype, context, cache,
startup and step times). `engine.launch` starts, greets, supervises and stops worker processes,
with the wire alone. `engine.client` is what front ends import (the language server, the
gateway, `infill complete`, the benchmarks): the one client and its blocking face, the pool and
health watches, `connect`; it imports neither `infill` nor torch. `engine.worker` is
the worker process (`python -m engine`, `infill serve`): the IO thread and main loop, the engine
core, the scheduler, the model runners and their prefix cache. The worker and the client import
the wire (and the launcher), never each other, not even through the launcher.
"""

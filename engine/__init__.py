"""The engine: both ends of the ZeroMQ socket between the front ends and the model, as two packages.

`engine.client` is what front ends import (the language server, the gateway, `infill complete`,
the benchmarks): the wire protocol, the blocking and asyncio clients, the pool, health watches,
CURVE keys and the one launcher of local worker processes. It imports neither `infill` nor torch.

`engine.worker` is the worker process (`python -m engine`, `infill serve`): the IO thread and main
loop, the engine core, the scheduler, the model runners and their prefix cache. It may import
`engine.client`'s wire modules and `infill`; nothing in `engine.client` imports it.
"""

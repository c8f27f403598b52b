"""The engine: the worker process that serves completions over ZeroMQ.

`protocol` defines the wire messages, `worker` the process (IO thread, main loop), `client` the
blocking and asyncio clients and the local worker launcher, `runner` the model runner.
"""

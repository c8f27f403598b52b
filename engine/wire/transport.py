"""Socket options both ends of a worker connection share: linger, the frame cap, ZMTP heartbeats.

Heartbeats run both ways: each socket PINGs its peer every `HEARTBEAT_IVL_MS` and drops a
connection that sends nothing back within `HEARTBEAT_TIMEOUT_MS`, so a peer whose machine or
process vanished without closing the connection is gone within `HEARTBEAT_IVL_MS +
HEARTBEAT_TIMEOUT_MS` (under 2 s), and a client's socket reconnects when the worker returns; a
connection that never finishes its handshake (a peer frozen before it answered) is dropped after
`HANDSHAKE_IVL_MS`.
A worker whose process lives but whose main loop hangs still answers PINGs: the health check
(`HealthOk.loop_age_s`) reveals that one. `connect` is how every asker's socket (the client's,
the launcher's probe) is configured, given CURVE keys, and connected.
"""
from __future__ import annotations

import zmq

from engine.wire.keys import ClientKeys, make_curve_client
from engine.wire.protocol import MAX_FRAME_BYTES

HEARTBEAT_IVL_MS = 400
HEARTBEAT_TIMEOUT_MS = 1200
HEARTBEAT_TTL_MS = 1200  # tells the peer to drop us after this long without traffic
HANDSHAKE_IVL_MS = 3000  # a connection whose ZMTP (and CURVE) handshake stalls this long is dropped
RECONNECT_IVL_MS = 100  # a respawned worker is reached again within this much
RECONNECT_IVL_MAX_MS = 1000  # backoff cap while a worker is away


def configure(sock: zmq.Socket) -> None:
    """Apply the shared options; call before bind or connect."""
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.MAXMSGSIZE, MAX_FRAME_BYTES)
    sock.setsockopt(zmq.HEARTBEAT_IVL, HEARTBEAT_IVL_MS)
    sock.setsockopt(zmq.HEARTBEAT_TIMEOUT, HEARTBEAT_TIMEOUT_MS)
    sock.setsockopt(zmq.HEARTBEAT_TTL, HEARTBEAT_TTL_MS)
    sock.setsockopt(zmq.HANDSHAKE_IVL, HANDSHAKE_IVL_MS)
    sock.setsockopt(zmq.RECONNECT_IVL, RECONNECT_IVL_MS)
    sock.setsockopt(zmq.RECONNECT_IVL_MAX, RECONNECT_IVL_MAX_MS)


def connect(sock: zmq.Socket, address: str, keys: ClientKeys | None = None) -> None:
    """Configure a client's socket (with CURVE when given `keys`) and connect it to `address`."""
    configure(sock)
    if keys is not None:
        make_curve_client(sock, keys)
    sock.connect(address)

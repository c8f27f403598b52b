"""Socket options both ends of a worker connection share: linger, the frame cap, ZMTP heartbeats.

Heartbeats run both ways: each socket PINGs its peer every `HEARTBEAT_IVL_MS` and drops a
connection that sends nothing back within `HEARTBEAT_TIMEOUT_MS`, so a peer whose machine or
process vanished without closing the connection is gone within `HEARTBEAT_IVL_MS +
HEARTBEAT_TIMEOUT_MS` (under 2 s), and a client's socket reconnects when the worker returns; a
connection that never finishes its handshake (a peer frozen before it answered) is dropped after
`HANDSHAKE_IVL_MS`.
A worker whose process lives but whose main loop hangs still answers PINGs: the health check
(`HealthOk.loop_age_s`) reveals that one.
"""
from __future__ import annotations

import zmq

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

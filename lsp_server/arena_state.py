"""What the language server keeps of the arena between requests, and the check of its setting.

`ArenaState` holds the clients of the backends' workers or upstreams and the battles shown and
not yet voted on; the editor's `Session` owns one. `valid_backends` checks the `arenaBackends`
setting for `lsp_server.settings`. The battles themselves are `lsp_server.arena`'s: this module
imports no feature, so the session and the settings need not import one.
"""
from __future__ import annotations

import random
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from engine.client.async_client import AsyncWorkerClient
from upstream import config as upstream_config
from upstream.backend import HttpBackend

PENDING_BATTLES = 64  # battles shown and not yet voted on that are remembered


@dataclass(frozen=True, slots=True)
class Shown:
    """A battle on screen, waiting for its vote."""

    top: str
    bottom: str
    top_latency_ms: float
    bottom_latency_ms: float
    context_chars: int
    language: str
    top_chars: int
    bottom_chars: int


@dataclass(slots=True)
class ArenaState:
    """The server's arena: clients of the backends' workers and the battles awaiting a vote."""

    clients: dict[str, AsyncWorkerClient | HttpBackend] = field(default_factory=dict)  # by address
    shown: OrderedDict[str, Shown] = field(default_factory=OrderedDict)
    rng: random.Random = field(default_factory=random.Random)

    def remember(self, battle_id: str, shown: Shown) -> None:
        self.shown[battle_id] = shown
        while len(self.shown) > PENDING_BATTLES:
            self.shown.popitem(last=False)

    def close(self) -> None:
        for client in self.clients.values():
            client.close()
        self.clients.clear()


def valid_backends(value: Any) -> bool:
    """Two or more `{"name", "address"?, "decoder"?, "backend"?}` objects with different names, no
    `backend` naming a key file."""
    if not isinstance(value, list) or len(value) < 2 or not all(isinstance(b, dict) for b in value):
        return False
    names = [b.get("name") for b in value]
    return (all(isinstance(n, str) and n for n in names) and len(set(names)) == len(names)
            and all(isinstance(b.get("address", ""), str) and isinstance(b.get("decoder", {}), dict)
                    and upstream_config.valid(b.get("backend", {})) and "apiKeyFile" not in b.get("backend", {})
                    and set(b) <= {"name", "address", "decoder", "backend"} for b in value))

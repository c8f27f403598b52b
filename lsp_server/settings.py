"""The language server's settings: the completion rules' (`completion.settings`) and its own.

Its own say where the workers are and how to reach them (and on which device and dtype a local
worker runs), where the stats go, which languages to complete, how many edit events of a document
to keep for next-edit suggestions and how their regions' drafts are used (`nextEditDrafts`:
`completion.next_edit.Drafting`) and whether an upstream HTTP model server answers instead of the
workers (`backend`: `upstream.config`; its key file should come from the command line or
machine-scoped editor settings, which a workspace cannot set; an arena backend names no key file and
borrows that key for the backend's own origin only); all come from the client's
`initializationOptions` and configuration changes.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from completion.next_edit import Drafting
from completion.settings import Settings, int_in
from engine.wire.flags import DEVICE_HELP, DTYPES, is_device, is_dtype
from engine.wire.protocol import MAX_DEADLINE_MS
from lsp_server.arena_state import valid_backends
from lsp_server.edit_history import DEFAULT_EDIT_HISTORY, MAX_EDIT_HISTORY
from upstream import config as upstream_config


def _non_empty_text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


@dataclass(slots=True)
class ServerSettings(Settings):
    """The settings of one editor's session."""

    worker_address: str | None = None  # None: spawn a local worker on the bundled model
    stats_log: str | None = None  # None: the default path; "": no stats log
    languages: list[str] | None = None  # None: every language; else grammar names ("python", ...)
    worker_keys: str | None = None  # CURVE key folder (`infill keys`) for remote workers; None: the command line's
    device: str | None = None  # the local worker's device (`--device`); None: the command line's
    dtype: str | None = None  # the local worker's dtype (`--dtype`); None: the command line's
    edit_history: int = DEFAULT_EDIT_HISTORY  # edit events kept per open document
    next_edit_drafts: Drafting = Drafting.DRAFTED  # drafts checked by the model, the drafts alone, or none
    arena: bool = False  # inline completions as battles of two `arena_backends` (`lsp_server.arena`)
    arena_backends: list[dict] | None = None  # [{"name", "address"?, "decoder"?}, ...], two or more
    arena_votes: str | None = None  # the vote store's path; None: ~/.local/state/infill/arena.sqlite3
    arena_deadline_ms: int = 3000  # the slower side is waited for this long
    backend: dict | None = None  # {kind, url, model, apiKeyFile, ...} (`upstream.config`); None: the workers


ServerSettings.OPTIONS = {
    "workerAddress": ("worker_address", _non_empty_text, "a non-empty ZeroMQ address string"),
    "workerKeys": ("worker_keys", _non_empty_text, "the path of a key folder made by `infill keys`"),
    **Settings.OPTIONS,
    "statsLog": ("stats_log", lambda value: isinstance(value, str),
                 "a file path, or \"\" for no stats log"),
    "languages": ("languages", lambda value: isinstance(value, list)
                  and all(isinstance(name, str) for name in value),
                  "a list of language names such as \"python\", \"typescript\", \"cpp\""),
    "device": ("device", is_device, DEVICE_HELP),  # the worker's own rules, as its command line checks them
    "dtype": ("dtype", is_dtype, f"one of {', '.join(DTYPES)}"),
    "editHistory": ("edit_history", int_in(0, MAX_EDIT_HISTORY), f"an integer in 0..{MAX_EDIT_HISTORY}"),
    "nextEditDrafts": ("next_edit_drafts", lambda value: value in tuple(Drafting),
                       f"one of {', '.join(Drafting)}"),
    "arena": ("arena", lambda value: isinstance(value, bool), "true or false"),
    "arenaBackends": ("arena_backends", valid_backends,
                      "a list of two or more {\"name\", \"address\"?, \"decoder\"?, \"backend\"?} objects with "
                      "different names, no backend naming an apiKeyFile (its key is the backend setting's)"),
    "arenaVotes": ("arena_votes", _non_empty_text, "the path of the SQLite vote store"),
    "backend": ("backend", upstream_config.valid,
                f"an object with some of {', '.join(upstream_config.OPTIONS)} (see `upstream.config`)"),
    "arenaDeadlineMs": ("arena_deadline_ms", int_in(1, MAX_DEADLINE_MS), f"an integer in 1..{MAX_DEADLINE_MS}"),
}

"""The arena in the editor: with the `arena` setting on, an inline completion is a battle of two backends.

Two backends of the `arenaBackends` setting (each `{"name", "address"?, "decoder"?, "backend"?}`;
`backend` an upstream of any kind, as the `backend` setting names one (`upstream.config`), but with
no `apiKeyFile`: a workspace may set these, so a side's key is the `backend` setting's (or the
command line's), and only where the side names that backend's origin (`upstream.config.with_key_of`);
one with neither is the server's own worker or upstream) are drawn at random, shown in a random order, and asked
for the same hole at once; the slower one is waited for, up to `arenaDeadlineMs`. The pair is
planned as every completion is (`completion.fim`: the `languages` setting, the decision, one
context for both), with one request per backend's decoder. The answer is
two inline items in the order shown, each with the command `infill.arenaVote` and the arguments
`[battleId, "top"]` or `[battleId, "bottom"]`:

    [{"insertText": TOP, "range": ..., "command": {"command": "infill.arenaVote", "arguments": [ID, "top"]}},
     {"insertText": BOTTOM, "range": ..., "command": {"command": "infill.arenaVote", "arguments": [ID, "bottom"]}}]

Editors show them as one ghost text (the top, a line `<indent>======`, the line's prefix and the
bottom), insert the top on Tab and the bottom on Shift-Tab and run the item's command, and on
typing on run `infill.arenaVote` with `[battleId, "neither"]`. A pair where one side is empty or
failed, or both are the same, is no battle: the one answer comes back as a plain item. The vote
(pick, order, both latencies, the context's size) goes to the SQLite store at `arenaVotes`
(`lsp_server.arena_votes`); a store that is locked or corrupt answers the command with an error
that says so, and the votes already written stay. Bad arguments (a battle id that is not 32 hex
digits, a pick that is none of the three, a battle unknown or voted on already) are refused with
an "Invalid Params" error; an error's message is short, quotes at most a few dozen characters of
what the client sent, and carries no traceback.
"""
from __future__ import annotations

import asyncio
import dataclasses
import logging
import re
import time
import uuid
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from completion import fim
from engine.client.async_client import AsyncWorkerClient
from engine.client.calls import REPLY_SLACK_S
from engine.wire.deadline import Deadline
from engine.wire.protocol import Mode
from lsp_server.arena_state import ArenaState, Shown
from lsp_server.arena_votes import DEFAULT_VOTES_PATH, PICKS, Vote, VoteStore, VoteStoreError
from lsp_server.protocol import VOTE_COMMAND, VoteResult
from lsp_server.session import Session, with_session
from lsp_server.supersede import superseding
from upstream import config as upstream_config
from upstream.backend import HttpBackend

logger = logging.getLogger(__name__)

BATTLE_ID = re.compile(r"[0-9a-f]{32}")  # uuid4().hex, the ids arena_items gives battles
QUOTED_CHARS = 40  # the most of a client's argument that an error quotes


async def client_for(session: Session, backend: dict, timeout_s: float) -> Any:
    """The client of a backend: its upstream's, its address's worker's, else the server's own."""
    state: ArenaState = session.arena
    upstream = upstream_config.upstream_of(backend["backend"], trusted=False) if backend.get("backend") else None
    if upstream is not None:
        upstream = upstream_config.with_key_of(upstream, session.settings.backend)
        key = f"{upstream.kind} {upstream.url} {upstream.model} {upstream.template}"
        if key not in state.clients:
            state.clients[key] = HttpBackend(upstream, session.show_error)
        return state.clients[key]
    address = backend.get("address")
    if not address:
        return await session.worker_client(timeout_s)
    if address not in state.clients:
        state.clients[address] = AsyncWorkerClient(address, timeout_s=REPLY_SLACK_S, client_name="infill-arena")
    return state.clients[address]


async def ask(session: Session, backend: dict, planned: fim.Plan, side: int,
              started: float) -> tuple[str, float]:
    """One side's text ("" when it failed) and its latency in ms from the request's start: the
    plan's request `side` (the backend's decoder) asked of the backend's worker by the FIM pipeline
    (`completion.fim.run`, its failure policy included), due in `arenaDeadlineMs` from the moment
    the side's client is at hand."""
    text = ""
    try:
        client = await client_for(session, backend, session.settings.arena_deadline_ms / 1000.0)
    except upstream_config.BackendSettingError as exc:
        logger.warning("arena backend %s is unusable: %s", backend["name"], exc)
        client = None
    if client is not None:
        one_side = dataclasses.replace(planned, requests=[planned.requests[side]])
        texts = (await fim.run(one_side, client, Deadline.after_ms(session.settings.arena_deadline_ms))).texts
        text = texts[0] if texts else ""
    return text, (time.monotonic() - started) * 1000.0


def vote_command(battle_id: str, pick: str) -> types.Command:
    return types.Command(title=f"infill arena: take the {pick}", command=VOTE_COMMAND, arguments=[battle_id, pick])


async def arena_items(session: Session, uri: str, position: types.Position,
                      hole: fim.Hole | None, invoked: bool) -> list[types.InlineCompletionItem]:
    """The inline items of an arena completion at `position` (see the module docstring)."""
    if hole is None:
        return []
    state: ArenaState = session.arena
    top, bottom = state.rng.sample(session.settings.arena_backends, 2)  # a random pair in a random order
    planned = fim.plan(hole, session.settings, session.documents, uuid.uuid4().hex, invoked=invoked,
                       languages=session.settings.languages,
                       decoders=(dict(top.get("decoder", {})), dict(bottom.get("decoder", {}))))
    if planned.mode == Mode.NONE:
        return []
    window = planned.window
    started = time.monotonic()
    (top_text, top_ms), (bottom_text, bottom_ms) = await asyncio.gather(
        ask(session, top, planned, 0, started), ask(session, bottom, planned, 1, started))
    here = types.Range(start=position, end=position)
    if not top_text.strip() or not bottom_text.strip() or top_text.strip() == bottom_text.strip():
        logger.info("arena: %s %r and %s %r are no battle", top["name"], top_text, bottom["name"], bottom_text)
        text = top_text if top_text.strip() else bottom_text
        return [types.InlineCompletionItem(insert_text=text, range=here)] if text.strip() else []
    battle_id = uuid.uuid4().hex
    state.remember(battle_id, Shown(top["name"], bottom["name"], round(top_ms, 1), round(bottom_ms, 1),
                                    len(window.prefix) + len(window.suffix), hole.language or "",
                                    len(top_text), len(bottom_text)))
    logger.info("arena battle %s: %s on top (%.0f ms), %s below (%.0f ms)", battle_id, top["name"], top_ms,
                bottom["name"], bottom_ms)
    return [types.InlineCompletionItem(insert_text=top_text, range=here, command=vote_command(battle_id, "top")),
            types.InlineCompletionItem(insert_text=bottom_text, range=here,
                                       command=vote_command(battle_id, "bottom"))]


async def arena_completion(session: Session, params: types.InlineCompletionParams, hole: fim.Hole | None,
                           invoked: bool) -> list[types.InlineCompletionItem]:
    """An inline completion at the `hole` of `params` as a battle, superseded as completions are
    (`lsp_server.supersede`); nothing when it fails."""
    uri, position = params.text_document.uri, params.position
    items = arena_items(session, uri, position, hole, invoked)
    return await superseding(session.in_flight, types.TEXT_DOCUMENT_INLINE_COMPLETION, uri, items,
                             list, f"arena completion at {uri} {position.line}:{position.character}")


def quoted(value: Any) -> str:
    """`value` as an error may quote a client's argument: its repr, cut to QUOTED_CHARS."""
    text = repr(value)
    return text if len(text) <= QUOTED_CHARS else f"{text[:QUOTED_CHARS]}... ({len(text)} chars)"


def refused(why: str) -> JsonRpcInvalidParams:
    """The error that answers a vote with bad arguments: a short message, no traceback."""
    return JsonRpcInvalidParams(f"{VOTE_COMMAND} takes [battleId, \"top\" | \"bottom\" | \"neither\"]: {why}")


def vote_of(session: Session, arguments: tuple) -> Vote:
    """The vote the command's arguments `[battleId, pick]` cast; `refused` for bad ones, quoting
    no more than QUOTED_CHARS of any argument and never an id that is not a battle id."""
    if len(arguments) != 2:
        raise refused(f"got {len(arguments)} arguments")
    battle_id, pick = arguments
    if not isinstance(battle_id, str) or not BATTLE_ID.fullmatch(battle_id):
        size = f" of {len(battle_id)} chars" if isinstance(battle_id, str) else ""
        raise refused(f"the first argument ({type(battle_id).__name__}{size}) is not a battle id "
                      "(32 hex digits, as the server's inline items carry)")
    if not isinstance(pick, str) or pick not in PICKS:
        raise refused(f"the pick is one of {', '.join(PICKS)}, got {quoted(pick)}")
    shown = session.arena.shown.get(battle_id)
    if shown is None:
        raise refused(f"arena battle {battle_id} is unknown: it was voted on already or is too old")
    return Vote(battle_id, shown.top, shown.bottom, pick, shown.top_latency_ms, shown.bottom_latency_ms,
                shown.context_chars, shown.language, shown.top_chars, shown.bottom_chars)


async def on_vote(session: Session, *arguments: Any) -> VoteResult:
    """`infill.arenaVote`: record the pick; the reply says where it went, or is an error with a
    short message and no traceback (pygls sends the traceback of any exception but its own
    JsonRpcException)."""
    vote = vote_of(session, arguments)
    store = VoteStore(session.settings.arena_votes or DEFAULT_VOTES_PATH)
    try:
        await asyncio.to_thread(store.record, vote)
    except VoteStoreError as exc:
        logger.error("%s", exc)
        session.show_error(f"infill: {exc}")
        raise JsonRpcInternalError(f"infill: {exc}") from None
    session.arena.shown.pop(vote.battle_id, None)
    logger.info("arena vote for battle %s: %s", vote.battle_id, vote.pick)
    return VoteResult(vote.battle_id, vote.pick, str(store.path))


def register(server: LanguageServer) -> None:
    """The arena's handler on `server` (an `InfillLanguageServer`, which holds the session): the
    vote command. Its battles are asked for by the completions' inline handler
    (`lsp_server.completer`) when the `arena` setting is on."""
    server.command(VOTE_COMMAND)(with_session(on_vote))

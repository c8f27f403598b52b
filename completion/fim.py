"""An inline completion's pipeline, the one every front end runs: `plan`, then `run` (the ask
within the deadline, and `finish`). The language server (its inline items, completion items and
arena), the HTTP gateway, `infill complete` and `bench.quality` all plan here, so that one text
gets one answer wherever it is asked.

    hole = fim.hole_at(uri, prefix, suffix, document)    # or fim.hole_in_text(uri, prefix, suffix)
    deadline = Deadline.after_ms(settings.deadline_ms)  # when the request arrived
    planned = fim.plan(hole, settings, sources, request_id, invoked=False)
    texts = (await fim.run(planned, backend, deadline)).texts

The steps, in order: the hole is the text cut at the cursor with its tree; `mode_for` decides
none (a language the user left out, or no place to complete), single line or multi-line;
`context_for` cuts the windows and picks the snippets (`completion.context`) from the `Sources`
at hand (the language server's documents, or the hole's own text); `draft_for` finds a draft of
the hole in the user's own code (`completion.draft_sources`; setting `completionDrafts`), which
the worker lays into the hole and the model checks in one pass; `requests_for` builds one
`CompleteRequest` per candidate decoding (an Invoked request asks for several, with different
commit thresholds, so the user has distinct choices; an automatic one asks for one, and the arena
one per backend). `run` gives them what is left of the `Deadline` (`within`), asks the `Backend`
(the worker pool, or anything with its `complete`) for them at once (`ask`), and `finish`
post-processes every item, drops empty and repeated ones, and puts first those that add no syntax
error to the document. `run` owns the failure policy (see it). Callers that measure each reply on
their own clients (`infill complete`, the benchmarks) call `ask` or their client, then `finish`.
"""
from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from completion import context
from completion.decide import cursor_at, decide
from completion.draft_sources import Draft, drafts_for
from completion.definitions import imports
from completion.postprocess import clean, rank
from completion.requests import build_request
from completion.settings import Settings
from completion.sources import Sources, TextSources
from completion.syntax import (GRAMMARS, LANGUAGE_IDS, ParsedDocument, byte_offset, in_empty_block,
                               language_for, literal_at)
from engine.wire.deadline import Deadline
from engine.wire.protocol import MAX_PREFIX_CHARS, MAX_SUFFIX_CHARS, CompleteRequest, Mode, Result

logger = logging.getLogger(__name__)

# Decoder overrides per candidate: a sure decoding first, a bolder one that commits more per pass.
INVOKED_DECODERS: tuple[dict, ...] = ({"threshold": 0.9}, {"threshold": 0.6})
AUTOMATIC_DECODERS: tuple[dict, ...] = ({},)


@dataclass(slots=True)
class Hole:
    """The document cut at the cursor; `document` is its parsed twin when it is in step."""

    uri: str
    prefix: str
    suffix: str
    language: str | None
    document: ParsedDocument | None = None


def hole_at(uri: str, prefix: str, suffix: str, document: ParsedDocument | None = None) -> Hole:
    """The hole between `prefix` and `suffix`; `document`, the caller's parse of the text, is used
    while its text is the hole's."""
    if document is None or document.tree is None or document.text != prefix + suffix:
        return Hole(uri, prefix, suffix, language_for(uri))
    return Hole(uri, prefix, suffix, document.language, document)


def parse_window(prefix: str, suffix: str) -> tuple[str, str]:
    """The text around the cursor that a request can carry (the worker's caps on prefix and
    suffix), cut at line breaks: all a hole needs parsed, so that a client sending megabytes
    costs a parse of tens of kilobytes."""
    if len(prefix) > MAX_PREFIX_CHARS:
        prefix = prefix[-MAX_PREFIX_CHARS:]
        prefix = prefix[prefix.find("\n") + 1:]
    if len(suffix) > MAX_SUFFIX_CHARS:
        suffix = suffix[:MAX_SUFFIX_CHARS]
        last_break = suffix.rfind("\n")
        suffix = suffix[:last_break + 1] if last_break >= 0 else suffix
    return prefix, suffix


def hole_in_text(uri: str, prefix: str, suffix: str, language: str | None = None) -> Hole:
    """The hole with a fresh parse of the text around it (`parse_window`), in `language` (a
    grammar's name) or else the language of `uri`'s extension; no parse for a language without
    a grammar."""
    prefix, suffix = parse_window(prefix, suffix)
    language = language or language_for(uri)
    if language not in GRAMMARS:
        return Hole(uri, prefix, suffix, language)
    return Hole(uri, prefix, suffix, language, ParsedDocument.parse(language, prefix + suffix))


def decide_at(hole: Hole, invoked: bool, setting: str) -> Mode:
    """The completion mode at the hole, from its lines and, when it is parsed, its tree."""
    literal, empty_block = None, False
    if hole.document is not None and hole.document.tree is not None:
        offset = byte_offset(hole.document.text, len(hole.prefix))
        literal = literal_at(hole.document.tree, offset)
        empty_block = in_empty_block(hole.document.tree, offset)
    return decide(cursor_at(hole.prefix, hole.suffix, hole.language, literal, empty_block),
                  invoked, setting)


def in_languages(hole: Hole, languages: Sequence[str] | None) -> bool:
    """Whether the hole's language is one the user completes in (None: every language; names
    are grammars' or editors' language ids)."""
    return languages is None or hole.language in {LANGUAGE_IDS.get(n, n) for n in languages}


def mode_for(hole: Hole, settings: Settings, invoked: bool,
             languages: Sequence[str] | None = None) -> Mode:
    """none outside `languages`, else the decision at the hole."""
    if not in_languages(hole, languages):
        logger.info("no completion: %s is not among the languages %s", hole.language, languages)
        return Mode.NONE
    return decide_at(hole, invoked, settings.mode)


def context_for(hole: Hole, settings: Settings, sources: Sources) -> context.Context:
    """The windows around the hole and the snippets from `sources` that fit their budgets."""
    after = before = None
    document = hole.document
    if document is not None:
        after = document.boundary_after
        before = functools.partial(_suffix_boundary, document, len(hole.prefix))
    prefix = context.prefix_window(hole.prefix, settings.prefix_tokens, after)
    suffix = context.suffix_window(hole.suffix, settings.suffix_tokens, before)
    if settings.snippet_tokens == 0:
        return context.Context(prefix, suffix, [])
    index = sources.index
    names = context.names_near(prefix, suffix)
    stem = context.stem_at(hole.prefix)
    if len(stem) >= context.MIN_STEM_CHARS:
        names = index.starting_with(stem, context.MAX_STEM_MATCHES) + names
    visible = context.visible_lines(hole.prefix, prefix, suffix)
    ranked = context.rank_definitions(names, index.lookup, hole.uri, sources.open_uris, visible)
    cut_off = document is not None and document.tree is not None and len(prefix) < len(hole.prefix)
    imports_text = imports(document.tree, document.text) if cut_off else ""
    edits = context.edit_snippets(sources.recent_edits, sources.text_of, hole.uri, visible)
    candidates = context.snippet_candidates(ranked, imports_text, hole.uri, edits)
    return context.Context(prefix, suffix, context.fit_snippets(candidates, settings.snippet_tokens))


def _suffix_boundary(document: ParsedDocument, cursor: int, offset: int) -> int | None:
    """`document.boundary_before` for an offset counted from the cursor."""
    found = document.boundary_before(cursor + offset)
    return None if found is None else found - cursor


def decoders_for(invoked: bool, candidates: int = 1) -> tuple[dict, ...]:
    """The decoder overrides of the candidates to ask for: up to `candidates` when the user asked
    (an Invoked trigger), else one."""
    return INVOKED_DECODERS[:candidates] if invoked else AUTOMATIC_DECODERS


def draft_for(hole: Hole, mode: Mode, settings: Settings, sources: Sources) -> Draft | None:
    """The best draft of the hole from the user's own code (`completion.draft_sources`: the
    document around the cursor, the sources' draft corpus with the hole's own file left out, the
    completions accepted lately), or None when drafts are off or none is worth trying."""
    if not settings.drafts:
        return None
    corpus = sources.draft_corpus()
    if corpus is not None and hole.uri in corpus:
        corpus = corpus.excluding(hole.uri)
    found = drafts_for(hole.prefix, hole.suffix, mode, corpus, sources.accepted_texts, limit=1)
    return found[0] if found else None


def draft_pieces(draft: Draft | None) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """A draft as a request carries it: its pieces and slots, or its whole text; none: ((), ())."""
    if draft is None:
        return (), ()
    return (draft.pieces, draft.slots) if draft.pieces else ((draft.text,), ())


def requests_for(hole: Hole, window: context.Context, request_id: str, mode: Mode,
                 settings: Settings, budget_ms: int, decoders: Sequence[dict], session: str = "",
                 draft: Draft | None = None) -> list[CompleteRequest]:
    """One request per decoder override, each with the hole's `draft`; each candidate has its own
    id, document key and session (from `session`), so the worker neither confuses their replies
    nor lets one supersede another, while the next request of `session` supersedes each."""
    pieces, slots = draft_pieces(draft)
    requests = []
    for index, overrides in enumerate(decoders):
        suffix_id = f"-{index}" if index else ""
        candidate_session = session + suffix_id if session else ""
        requests.append(build_request(request_id + suffix_id, window.prefix, window.suffix, mode,
                                      settings.max_tokens, budget_ms, hole.uri + suffix_id,
                                      overrides, window.snippets, candidate_session, pieces, slots))
    return requests


def finish(planned: Plan, results: Sequence[Result], settings: Settings) -> list[str]:
    """The texts to show: cleaned, distinct, those that add no syntax error first."""
    hole, texts = planned.hole, []
    for result in results:
        for item in result.items:
            text = clean(item.text, planned.mode, settings.max_lines, hole.prefix, hole.suffix,
                         hole.language)
            if text is not None:
                texts.append(text)
    document = hole.document
    if document is None or document.text != hole.prefix + hole.suffix:  # edited while we waited
        return list(dict.fromkeys(texts))
    return rank(texts, lambda text: document.errors_added(len(hole.prefix), text))


@dataclass(slots=True)
class Plan:
    """What to ask the backend for one completion: nothing when `mode` is none."""

    hole: Hole
    mode: Mode
    window: context.Context | None  # the windows and snippets the requests carry
    requests: list[CompleteRequest]
    draft: Draft | None = None  # the hole's draft from the user's own code, which the requests carry
    settings: Settings = dataclasses.field(default_factory=Settings)  # those it was planned with


def plan(hole: Hole, settings: Settings, sources: Sources | None, request_id: str, *,
         invoked: bool = False, candidates: int = 1, languages: Sequence[str] | None = None,
         session: str = "", decoders: Sequence[dict] | None = None) -> Plan:
    """The decision, the context and the requests (due at `settings.deadline_ms`; see `within`)
    of one completion. `sources` None: a caller with one text and no session, whose snippets
    are the definitions of the hole's own text. `decoders` (one request each) replaces the
    candidates' own, for a caller that asks several backends."""
    mode = mode_for(hole, settings, invoked, languages)
    if mode == Mode.NONE:
        return Plan(hole, mode, None, [], settings=settings)
    if sources is None:
        sources = TextSources.of(hole.uri, hole.document, hole.prefix + hole.suffix)
    window = context_for(hole, settings, sources)
    draft = draft_for(hole, mode, settings, sources)
    requests = requests_for(hole, window, request_id, mode, settings, settings.deadline_ms,
                            decoders or decoders_for(invoked, candidates), session, draft)
    return Plan(hole, mode, window, requests, draft, settings)


def within(planned: Plan, budget_ms: int) -> Plan:
    """The plan with its requests due in `budget_ms`: what is left of the deadline."""
    requests = [dataclasses.replace(r, deadline_ms=budget_ms) for r in planned.requests]
    return dataclasses.replace(planned, requests=requests)


class Backend(Protocol):
    """What answers a plan's requests: the worker pool (`engine.client.pool.AsyncWorkerPool`), one
    worker's client, or any other backend with the same call."""

    async def complete(self, request: CompleteRequest) -> Result: ...


async def ask(backend: Backend, requests: Sequence[CompleteRequest],
              failures: tuple[type[BaseException], ...] = ()) -> list[Result]:
    """The backend's replies to `requests`, asked concurrently, with their timings logged; a
    request that fails with one of `failures` is logged and left out, any other failure raised."""
    replies = await asyncio.gather(*(backend.complete(r) for r in requests), return_exceptions=True)
    answered = []
    for reply in replies:
        if isinstance(reply, failures):
            logger.warning("no completion: %s", reply)
        elif isinstance(reply, BaseException):
            raise reply
        else:
            t = reply.timings
            logger.info("%s: %s, %d items; queue %.1f, layout %.1f, first pass %.1f, decode %.1f, "
                        "total %.1f ms", reply.id, reply.stop_reason, len(reply.items), t.queue_ms,
                        t.prepare_ms, t.prefill_ms, t.decode_ms, t.total_ms)
            answered.append(reply)
    return answered


@dataclass(slots=True)
class Answered:
    """What `run` gives: the texts to show, best first, and the replies they came from (their stop
    reasons, passes and timings)."""

    texts: list[str]
    results: list[Result]


async def run(planned: Plan, backend: Backend | None, deadline: Deadline, *, strict: bool = False) -> Answered:
    """The plan's requests asked of `backend` within what is left of `deadline`, and finished.

    The failure policy, written once: nothing is asked without a backend (None: the front end has
    none at hand) or once the deadline has passed (no texts); a request the backend fails on (any
    exception it raises: a worker's error, a `TimeoutError` when late) is logged and left out, and
    the other candidates' texts stand: the editor shows what came in time, and a failing worker
    costs the ghost text, never an error. One front end differs: the gateway's unstreamed answers
    pass `strict`, which raises the failure, since an HTTP client is told by the status why it got
    nothing (429 overloaded: retry; 503 no worker) where an empty choice would read as "nothing to
    complete here". Streams (the gateway's) keep their own loop, which sends each text as it
    settles: `run` answers only when every reply is in."""
    budget_ms = deadline.left_ms()
    if backend is None or not planned.requests or budget_ms < 1:
        return Answered([], [])
    results = await ask(backend, within(planned, budget_ms).requests, () if strict else (Exception,))
    return Answered(finish(planned, results, planned.settings), results)

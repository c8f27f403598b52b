"""Next edits' pipeline, the one every front end runs: `plan` (the gate, the regions, the job),
then `run` (the job asked within the deadline, and `finish`: the edits worth showing). The
language server's `textDocument/copilotInlineEdit`, the gateway's `/v1/edit/completions` and
`bench.next_edit` (through the server) run it; the benchmarks that decode in process and
`training.edit_canvases` call `plan` and `finish` around their own runner.

    deadline = Deadline.after_ms(deadline_ms)  # when the request arrived
    planned = next_edit.plan(EditAsk(document, event, cursor_line, request_id, deadline_ms, uri))
    if not isinstance(planned, Refused):
        edits = await next_edit.run(planned, backend, deadline)

`run` owns the failure policy, the same for every front end: a backend that fails or is late
(or none at hand, or no time left) answers nothing, and the regions' whole drafts stand.

`gate` says why there is nothing to propose: no tree, a text that does not parse (the user is
mid-edit, and so are the regions; but a string over several lines whose quotes the event spelled
anew at one end gets its other end, `completion.edit_quotes`, the one edit such a text gets), an
event that is not the document's last, a name still being typed (the event ends in a word found
nowhere else in the text that is no keyword or builtin, and renamed nothing) while the user has
not `settled` (stopped typing for `SETTLE_S`: the language server waits for that pause; a key
pressed in it cancels the request).

Each region (whole lines, `completion.edit_regions`, among them the sites where the same change
applies by analogy, `completion.edit_analogy`, read with the user's recent events as patterns,
`completion.edit_patterns`; with an `EditAsk.judge`, those a learned judge keeps,
`completion.site_judge`) gets a draft of its new text from the user's edit
(`completion.edit_drafts`: a rename, a literal, a signature's call sites, the change carried by
analogy; else its current text). How the drafts are used is the plan's `Drafting`: `drafted` (the default) sends
each region as a hole holding its draft, whose known tokens the model checks and whose masked
slots it fills (`infill.decode.regions.veto`), drafts that change something first, within
`DRAFT_TOKENS`; a region left out of the job, or whose hole gets no answer, proposes its draft
as it is when the draft is whole. `rules` proposes the drafts alone and asks no backend; `model`
masks every region whole, as before drafts, and the model writes each.
`edit_request` lays the regions out as one job: each a multi-line hole that shows the model its
current text (`replaces`); the text between regions are the pieces, and the user's recent edits
go with it (their changed lines before and after) as the job's cause. `edits_from` turns each
region's proposal into an `Edit` of those lines and keeps only the edits worth showing: a
proposal the same as the current text (up to trailing whitespace) is no edit; a hole below
`MIN_CONFIDENCE` shows nothing rather than a wrong edit; an edit that undoes the user's last event
goes; a proposal that removes more lines than its region's draft changes goes, and in Python
the edits of top-level statements that would no longer compile as far as they did
(`completion.edit_checks`); and when the edits together add a tree-sitter ERROR
node, none is kept. Edits come nearest the cursor first. Lines are counted as the LSP counts them;
a region's text includes its last line break, and an edit's text ends as its region's does (the
model's trailing whitespace is not trusted). Everything here but `run` is pure.
"""
from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from completion.context import approx_tokens
from completion.edit_analogy import stated_defaults
from completion.edit_drafts import Draft, draft_regions
from completion.edit_checks import Edit, applied, compiling_edits, draft_changed_lines, removed_lines
from completion.edit_events import EditEvent, LineSpan, common_ends
from completion.edit_sites import Site, byte_replacements
from completion.edit_patterns import pattern_sites
from completion.edit_quotes import other_end
from completion.edit_literals import changed_literal
from completion.edit_regions import (ANALOGY, Region, literal_regions, regions_after, renamed, renames_in_scope,
                                     signature_change)
from completion.edit_rewrites import STRING_PREFIX, product_release, rewrite_of
from completion.fim import Backend
from completion.positions import LINE_BREAK, line_starts
from completion.site_judge import SiteJudge, candidates
from completion.syntax import ParsedDocument, error_count
from completion.tree_names import python_word
from engine.wire.deadline import Deadline
from engine.wire.protocol import (MAX_EVENT_CHARS, MAX_EVENTS, MAX_PREFIX_CHARS, MAX_SUFFIX_CHARS,
                                    CompleteRequest, Event, Hole as EditHole, Item, Mode)

MODE = Mode.MULTI_LINE
SLACK_TOKENS = 16  # room for the region to grow (a longer name, an added argument)
MAX_HOLE_TOKENS = 512
MIN_CONFIDENCE = 0.4  # below this a region's answer is not shown
DRAFT_TOKENS = 600  # drafted holes of one job, estimated: with the pieces, within a 1,024-token canvas
SETTLE_S = 0.5  # a pause in typing this long ends a word new to the text (keys come every 0.1-0.3 s)
TYPING = "a name is still being typed"
UNPARSED = "the document does not parse"
_WORD = re.compile(r"\w+")
_LINT_CODE = r"[A-Z]+[0-9]{3,4}"  # a linter's rule: E402, B018, PLR0913
_LINT_DIRECTIVE = re.compile(  # a comment a linter or type checker reads, whole up to its end
    rf"#\s*(?:noqa(?::\s*{_LINT_CODE}(?:,\s*{_LINT_CODE})*)?|type:\s*ignore|pragma:\s*no\s+cover|fmt:\s*(?:skip|off|on))$")

logger = logging.getLogger(__name__)


class Drafting(StrEnum):
    """How a next edit uses the drafts its regions get (see the module)."""

    DRAFTED = "drafted"  # each region's draft, checked and completed by the model
    RULES = "rules"  # the drafts alone: no backend asked
    MODEL = "model"  # every region masked whole: the model writes each


def hole_tokens(text: str) -> int:
    """The token budget of a region whose current text is `text`."""
    return min(MAX_HOLE_TOKENS, approx_tokens(text) + SLACK_TOKENS)


def wire_events(events: Sequence[EditEvent]) -> list[Event]:
    """The newest `MAX_EVENTS` of `events` (oldest first) as the job shows them: each its changed
    lines before and after; an event with a side over `MAX_EVENT_CHARS` is left out."""
    shown = [Event(event.removed, event.inserted) for event in events]
    return [e for e in shown if max(len(e.before), len(e.after)) <= MAX_EVENT_CHARS][-MAX_EVENTS:]


def edit_request(request_id: str, text: str, regions: Sequence[Region], deadline_ms: int,
                 document: str = "", session: str = "", events: Sequence[EditEvent] = (),
                 drafts: dict[Region, Draft] | None = None) -> CompleteRequest | None:
    """The edit job that rewrites `regions` of `text` (in any order; none may overlap) after the
    user's `events` (oldest first), each region holding its draft in `drafts` if it has one, or
    None when there are no regions or the text between them is over the protocol's caps."""
    ordered = sorted(regions, key=lambda region: region.start_line)
    if not ordered or any(a.end_line > b.start_line for a, b in zip(ordered, ordered[1:])):
        return None
    starts = line_starts(text)
    cuts = [(starts[region.start_line], starts[region.end_line]) for region in ordered]
    drafted = [(drafts or {}).get(region) for region in ordered]
    holes = [EditHole(MODE, hole_tokens(text[start:end]), text[start:end],
                      [] if draft is None else list(draft.pieces), [] if draft is None else list(draft.slots))
             for (start, end), draft in zip(cuts, drafted)]
    pieces = [text[end:start] for (_, end), (start, _) in zip(cuts, cuts[1:])]
    prefix, suffix = text[:cuts[0][0]][-MAX_PREFIX_CHARS:], text[cuts[-1][1]:][:MAX_SUFFIX_CHARS]
    if sum(map(len, pieces)) + len(prefix) + len(suffix) > MAX_PREFIX_CHARS + MAX_SUFFIX_CHARS \
            or any(len(piece) > MAX_PREFIX_CHARS for piece in pieces) \
            or any(len(hole.replaces) > MAX_SUFFIX_CHARS for hole in holes):
        return None
    return CompleteRequest(id=request_id, kind="edit", prefix=prefix, suffix=suffix, mode=MODE,
                           deadline_ms=deadline_ms, document=document, session=session,
                           holes=holes, pieces=pieces, events=wire_events(events))


def _same(a: str, b: str) -> bool:
    """True when the texts have the same lines up to trailing whitespace and final blank lines."""
    return [line.rstrip() for line in LINE_BREAK.split(a.rstrip())] == \
        [line.rstrip() for line in LINE_BREAK.split(b.rstrip())]


def _with_tail_of(text: str, current: str) -> str:
    """`text` ending as `current` does: its trailing whitespace (blank lines, the last break)
    replaced by `current`'s, so an edit never adds or drops a blank line at its end; an empty
    `text` deletes the lines. When `text` took `current`'s last line off, the blank lines that
    stood before that line are `text`'s own, as many as stood there at most (`@pytest.mark.asyncio`
    deleted under two blank lines leaves them)."""
    if not text:
        return ""
    body, tail = text.rstrip(), current[len(current.rstrip()):]
    current_lines = LINE_BREAK.split(current.rstrip())
    if current_lines[-1].strip() == LINE_BREAK.split(body)[-1].strip():
        return body + tail
    own = min(_blank_before_last(current_lines), len(LINE_BREAK.split(text[len(body):])) - 2)
    if own <= 0:
        return body + tail
    found = LINE_BREAK.search(current)
    return body + (found.group() if found else "\n") * (own + 1)


def _blank_before_last(lines: list[str]) -> int:
    """How many blank lines stand right before the last of `lines`."""
    count = 0
    for line in reversed(lines[:-1]):
        if line.strip():
            break
        count += 1
    return count


def answered(regions: Sequence[Region], items: Sequence[Item]) -> dict[Region, str]:
    """The text of each region of a job over `regions` that the answer gives: its hole's surest
    item, unless that is below `MIN_CONFIDENCE`."""
    ordered = sorted(regions, key=lambda region: region.start_line)
    best: dict[int, Item] = {}
    for item in items:
        if 0 <= item.hole < len(ordered) and (item.hole not in best
                                              or item.confidence > best[item.hole].confidence):
            best[item.hole] = item
    return {ordered[index]: item.text for index, item in best.items() if item.confidence >= MIN_CONFIDENCE}


def changed(text: str, proposals: dict[Region, str]) -> list[Edit]:
    """The regions the proposals (each ending as its region does: `_with_tail_of`) change, in file order."""
    starts, edits = line_starts(text), []
    for region, proposal in sorted(proposals.items(), key=lambda pair: pair[0].start_line):
        if not _same(proposal, text[starts[region.start_line]:starts[region.end_line]]):
            edits.append(Edit(region.start_line, region.end_line, proposal))
    return edits


def _line_before(line: int, span: LineSpan, is_end: bool) -> int:
    """Where line boundary `line` of the text after an event lies in its text before; one inside
    the event's lines widens to the whole span."""
    if line <= span.start_line:
        return line
    if line >= span.after_end:
        return line + span.before_end - span.after_end
    return span.before_end if is_end else span.start_line


def undoes(edit: Edit, current: str, event: EditEvent) -> bool:
    """True when `edit` of the lines `current` (of the text after `event`) takes the event back:
    its text is the event's text before of those lines, or the event renamed a name and the edit
    renames it back."""
    start = _line_before(edit.start_line, event.span, False)
    end = _line_before(edit.end_line, event.span, True)
    before_starts = line_starts(event.before)
    if end < len(before_starts) and _same(edit.new_text,
                                          event.before[before_starts[start]:before_starts[end]]):
        return True
    names = renamed(event)
    lines = edit.end_line - edit.start_line
    back = renamed(EditEvent(event.uri, current, edit.new_text, LineSpan(0, lines, lines), 0.0))
    return names is not None and back == (names[1], names[0])


def _distance(edit: Edit, cursor_line: int) -> int:
    if edit.start_line <= cursor_line < edit.end_line:
        return 0
    return min(abs(edit.start_line - cursor_line), abs(edit.end_line - 1 - cursor_line))


def edits_from(document: ParsedDocument, proposals: dict[Region, str], event: EditEvent,
               cursor_line: int, removable: dict[Region, int] | None = None) -> list[Edit]:
    """The edits to show for the regions' `proposals`, nearest the cursor first: none that
    removes more lines than `removable` allows its region (when given), none of Python that does
    not compile as far as its statements did; none at all when they would add a syntax error or
    the document has no tree to check them with."""
    if document.tree is None:
        return []
    text = document.text
    starts = line_starts(text)
    current = {region: text[starts[region.start_line]:starts[region.end_line]] for region in proposals}
    proposals = {region: _with_tail_of(proposal, current[region]) for region, proposal in proposals.items()}
    if removable is not None:
        proposals = {region: proposal for region, proposal in proposals.items()
                     if removed_lines(current[region], proposal) <= removable.get(region, 0)}
    edits = [edit for edit in changed(text, proposals)
             if not undoes(edit, text[starts[edit.start_line]:starts[edit.end_line]], event)]
    if edits and document.language == "python":
        edits = compiling_edits(document, edits, starts)
    if not edits:
        return []
    after = ParsedDocument.parse(document.language, applied(text, edits))
    if after.tree is None or error_count(after.tree) > error_count(document.tree):
        return []
    return sorted(edits, key=lambda edit: (_distance(edit, cursor_line), edit.start_line))


def gate(document: ParsedDocument | None, event: EditEvent | None, settled: bool = False) -> str | None:
    """Why no next edit can be proposed in `document` after `event`, or None when one can. A
    word new to the text ending the change (`typing_a_name`) waits until the user has `settled`:
    stopped typing for `SETTLE_S`."""
    if document is None or document.tree is None:
        return "the document has no tree"
    if event is None or event.after != document.text:
        return "no edit event of this text yet"
    if document.tree.root_node.has_error:
        return UNPARSED
    if not settled and typing_a_name(event, document):
        return TYPING
    return None


def typing_a_name(event: EditEvent, document: ParsedDocument) -> bool:
    """The event renamed nothing, changed no literal and no signature, and its change ends in a
    word that the text holds nowhere else and that is no number, no string's prefix (`r` put before a
    docstring's quotes), no keyword or builtin of the language
    (`ZeroDivisionError`, `True`, `is` are whole as typed) nor the end of a linter's directive
    (`# noqa: E402`, `# type: ignore`; not `# noqa: E40`): the user is still typing it."""
    if renamed(event) is not None or changed_literal(event) is not None \
            or signature_change(event, document) is not None:
        return False
    new = event.inserted
    head, tail = common_ends(event.removed, new)
    end = len(new) - tail  # where the change ends in the new lines
    words = [w for w in _WORD.finditer(new) if w.start() < end <= w.end() and end > head]
    word = words[0] if words else None
    if word is None or word.group()[0].isdigit() or _prefixes_a_string(new, word) \
            or (document.language == "python" and python_word(word.group())):
        return False  # no word, a number (no name: `19.1` of `19.1.0`), a string's prefix, or the language's own
    if _LINT_DIRECTIVE.search(new[new.rfind("\n", 0, end) + 1:end]):
        return False  # a linter's directive, whole: it ends in no word half typed
    return len(re.findall(rf"(?<!\w){re.escape(word.group())}(?!\w)", event.after)) == 1


def _prefixes_a_string(text: str, word: re.Match) -> bool:
    """True when `word` of `text` is a string's prefix, right before its quote (`r` of `r\"\"\"`)."""
    return STRING_PREFIX.fullmatch(word.group()) is not None and text[word.end():word.end() + 1] in ("'", '"')


@dataclass(slots=True)
class EditPlan:
    """What to ask the backend for one next edit: the regions the user's `event` propagates to,
    their drafts, and the job of those `sent` (None when there is nothing to ask or they do not
    fit one)."""

    document: ParsedDocument
    event: EditEvent
    cursor_line: int
    regions: list[Region]  # nearest the cursor first
    drafts: dict[Region, Draft]  # empty with Drafting.MODEL
    sent: list[Region]  # the regions of `request`
    request: CompleteRequest | None
    drafting: Drafting = Drafting.DRAFTED
    removable: dict[Region, int] | None = None  # the lines each region's draft changes: no more may go


def draft_budget(regions: Sequence[Region], drafts: dict[Region, Draft]) -> list[Region]:
    """The regions a drafted job holds: those whose draft changes something first, then the
    others, each nearest the cursor first, while their drafts fit `DRAFT_TOKENS`; none whose
    draft is empty (a region past the text's end: nothing to check)."""
    ranked = sorted(regions, key=lambda region: not drafts[region].changes)  # stable: distance kept
    kept, tokens = [], 0
    for region in ranked:
        if not drafts[region].text and not drafts[region].slots:
            continue
        need = hole_tokens("".join(drafts[region].pieces)) + sum(drafts[region].slots)
        if tokens + need <= DRAFT_TOKENS:
            kept.append(region)
            tokens += need
    return kept


@dataclass(frozen=True, slots=True)
class EditAsk:
    """What one next edit is planned from: the document after the user's `event`, the cursor's
    line, the ids and due time its job carries (`run` gives it what is left of the deadline), the
    user's recent `events` (oldest first), how it uses drafts, the judge of analogy sites
    (`completion.site_judge`; None: the fixed cut of `completion.edit_analogy` alone), and whether
    the user has stopped typing (`gate`: the server waits `SETTLE_S` for it). A new input
    is a field with a default, so that every caller keeps working."""

    document: ParsedDocument | None
    event: EditEvent | None
    cursor_line: int
    request_id: str
    deadline_ms: int
    uri: str = ""
    session: str = ""
    events: Sequence[EditEvent] = ()
    drafting: Drafting = Drafting.DRAFTED
    judge: SiteJudge | None = None
    settled: bool = False  # the user stopped typing `SETTLE_S` ago: a word new to the text is whole


@dataclass(frozen=True, slots=True)
class Refused:
    """Why there is nothing to propose (`gate`'s reason)."""

    reason: str


def plan(ask: EditAsk) -> EditPlan | Refused:
    """The regions after the ask's event, their drafts and their job, or why `gate` refuses (in a
    document that does not parse, the one region of a string's other end, `other_end`)."""
    document, event, drafting = ask.document, ask.event, ask.drafting
    refusal = gate(document, event, ask.settled)
    closing = other_end(event, document.language) if refusal == UNPARSED else None
    if refusal is not None and closing is None:
        return Refused(refusal)
    found = [closing] if closing is not None else analogy_found(event, document, ask.events, ask.judge)
    starts = line_starts(document.text)
    sites = [site_region(site, document.text, starts) for site in found]
    regions = sites if closing is not None else regions_after(event, document, ask.cursor_line, sites)
    analogies = byte_replacements(document.text, found)
    every_draft = dict(zip(regions, draft_regions(event, document, regions, analogies)))
    removable = {region: draft_changed_lines(document.text[starts[region.start_line]:starts[region.end_line]],
                                             draft) for region, draft in every_draft.items()}
    drafts = {} if drafting == Drafting.MODEL else every_draft
    sent = regions if drafting == Drafting.MODEL else [] if drafting == Drafting.RULES \
        else draft_budget(regions, drafts)
    request = edit_request(ask.request_id, document.text, sent, ask.deadline_ms, ask.uri, ask.session,
                           ask.events, drafts) if sent else None
    return EditPlan(document, event, ask.cursor_line, regions, drafts, sent, request, drafting, removable)


def site_region(site: Site, text: str, starts: list[int]) -> Region:
    """The region of a site's lines, and of the line after them when their last is blank: a blank
    line the site deletes (`Parameters:` and the blank under it made `Args:`) is no region's tail,
    which an edit keeps (`_with_tail_of`)."""
    end = site.line + site.lines
    if end < len(starts) - 1 and not text[starts[end - 1]:starts[end]].strip():  # a line after it, past a blank
        end += 1
    return Region(site.line, end, ANALOGY)


def site_inputs(event: EditEvent, document: ParsedDocument) -> tuple[bool, bool] | None:
    """(the renamed word is scoped, the literal rule owns the event) for the analogy sites of the
    event, or None when it has none: the literal rule found the changed literal's places. A
    product's release changed in a string (`"... removed in Werkzeug 2.4"`) is no literal's: it goes
    to docstrings too (`completion.edit_rewrites.product_release`)."""
    rewrite = rewrite_of(event)
    literal = changed_literal(event) is not None and (rewrite is None or product_release(rewrite) is None)
    if literal and literal_regions(event, document):
        return None
    return renames_in_scope(event, document), literal


def analogy_found(event: EditEvent, document: ParsedDocument, events: Sequence[EditEvent],
                  judge: SiteJudge | None = None) -> list[Site]:
    """The sites the event is carried to by analogy, read with the document's `events`: those the
    fixed cut keeps, or with a `judge` those it keeps of the candidates down to its floor."""
    inputs = site_inputs(event, document)
    if inputs is None:  # the literal rule's places are its regions; a default it changed is stated in prose too
        rewrite = rewrite_of(event)
        return [] if rewrite is None else stated_defaults(rewrite, event, document)
    if judge is None:
        return pattern_sites(event, events, *inputs, document)
    return judge.kept(candidates(event, events, *inputs, document, judge.floor))


def within(planned: EditPlan, budget_ms: int) -> EditPlan:
    """The plan with its job due in `budget_ms`: what is left of the deadline."""
    if planned.request is None:
        return planned
    return dataclasses.replace(planned, request=dataclasses.replace(planned.request,
                                                                    deadline_ms=budget_ms))


def proposals(planned: EditPlan, items: Sequence[Item]) -> dict[Region, str]:
    """Each region's proposed text: the backend's answer for its hole, else its draft when that
    is whole (no slots) and changes something."""
    drafted = {region: draft.text for region, draft in planned.drafts.items()
               if draft.changes and not draft.slots}
    return {**drafted, **answered(planned.sent, items)}


def finish(planned: EditPlan, items: Sequence[Item]) -> list[Edit]:
    """The edits to show for the backend's `items` (none: the backend was not asked, or did not
    answer), nearest the cursor first (`edits_from`)."""
    return edits_from(planned.document, proposals(planned, items), planned.event, planned.cursor_line,
                      planned.removable)


async def run(planned: EditPlan, backend: Backend | None, deadline: Deadline) -> list[Edit]:
    """The edits to show for the plan: its job (if it has one) asked of `backend` within what is
    left of `deadline`, then `finish`.

    The failure policy, written once for every front end (the language server and the gateway
    alike): with no backend at hand (None), no time left, or a backend that fails (any exception
    it raises: a worker's error, a `TimeoutError` when late), the job's answer is none and the
    regions' whole drafts stand (`proposals`): a draft carries the user's own edit on by rule, and
    is true without the model. A plan without drafts (`Drafting.MODEL`) then shows nothing."""
    return finish(planned, await _items(planned, backend, deadline))


async def _items(planned: EditPlan, backend: Backend | None, deadline: Deadline) -> list[Item]:
    """The backend's answer to the plan's job; none (logged) when it cannot be had."""
    budget_ms = deadline.left_ms()
    if planned.request is None or backend is None or budget_ms < 1:
        return []
    try:
        return (await backend.complete(within(planned, budget_ms).request)).items
    except Exception as exc:  # the policy above: the drafts stand
        logger.warning("no next edit: %s", exc)
        return []

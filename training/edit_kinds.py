"""The kinds of next-edit example, each a generator of candidate edits over one parsed file.

A candidate is `(event, follow)`: the user's one edit and the follow-up edits it implies (empty for
the negatives, whose other sites must stay as they are). Edits are byte ranges of the original
source and their replacement; `training.edit_synth` applies and verifies them. New names and values
are drawn from the file's own `random.Random`, never collide with a name the file uses, and keep
the old name's style (snake_case, CamelCase, UPPER, leading underscores).
"""
from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from tree_sitter import Node

from training.edit_sites import (RESERVED, calls_of, function_defs, function_locals, identifiers, local_sites,
                               methods, module_name_sites, param_name, self_attribute_sites, text,
                               top_level, walk)


@dataclass(frozen=True, slots=True)
class Edit:
    start: int  # byte offsets into the original source
    end: int
    new: bytes


Candidate = tuple[Edit, list[Edit]]

SYNONYMS = {
    "get": "fetch", "fetch": "load", "load": "read", "read": "parse", "parse": "decode", "make": "build",
    "build": "create", "create": "make", "data": "payload", "result": "outcome", "value": "val",
    "val": "value", "count": "total", "total": "count", "num": "count", "idx": "index", "index": "pos",
    "name": "label", "items": "entries", "path": "location", "file": "stream", "key": "field", "msg": "message",
    "message": "text", "text": "content", "args": "params", "options": "settings", "config": "settings",
    "size": "length", "start": "begin", "end": "stop", "buf": "buffer", "obj": "instance", "func": "callback",
    "res": "response", "response": "reply", "request": "req", "line": "row", "tmp": "temp", "err": "error",
    "error": "failure", "write": "save", "check": "verify", "handle": "process", "process": "handle",
    "update": "refresh", "run": "execute", "node": "element", "parent": "owner", "list": "seq",
    "i": "idx", "j": "col", "k": "key", "n": "count", "x": "value", "s": "text", "f": "fh", "e": "exc",
    "v": "val", "c": "char", "d": "mapping", "p": "path", "m": "match", "t": "item", "r": "result",
}
AFFIXES = ["new", "current", "local", "raw", "base", "cached", "parsed", "next", "other", "main"]
SUFFIXES = ["value", "info", "data", "item", "result", "list", "map", "obj"]
# (name, literal) of a parameter added to a signature: what callers pass afterwards
ADDED_PARAMS = [("timeout", "30"), ("verbose", "False"), ("retries", "3"), ("encoding", '"utf-8"'),
                ("strict", "True"), ("limit", "100"), ("prefix", '""'), ("scale", "1.0"), ("label", "None"),
                ("dry_run", "False")]
COMMENT_NOTES = [" for now", " as before", " (see below)", " here"]
SKIP_COMMENTS = ("type:", "noqa", "pragma", "coding", "fmt:", "pylint", "mypy")


def words_of(core: str) -> list[str]:
    if "_" in core or core.islower() or core.isupper():
        return [w for w in core.split("_") if w]
    return re.findall(r"[A-Z]+(?=[A-Z][a-z]|\d|$)|[A-Z]?[a-z]+|\d+", core)


def join_like(words: list[str], core: str) -> str:
    if core.isupper():
        return "_".join(w.upper() for w in words)
    if "_" in core or core.islower():
        return "_".join(w.lower() for w in words)
    joined = "".join(w[:1].upper() + w[1:].lower() for w in words)
    return joined if core[0].isupper() else joined[:1].lower() + joined[1:]


def new_identifier(old: str, taken: set[str], rng: random.Random) -> str | None:
    """A plausible new name for `old` in its style, clashing with nothing in `taken` or Python."""
    core = old.strip("_")
    lead, trail = old[:len(old) - len(old.lstrip("_"))], old[len(old.rstrip("_")):]
    words = words_of(core) if core else []
    if not words:
        return None
    lower = [w.lower() for w in words]
    swaps = [lower[:i] + [SYNONYMS[w]] + lower[i + 1:] for i, w in enumerate(lower) if w in SYNONYMS]
    affixed = [[a] + lower for a in AFFIXES] + [lower + [s] for s in SUFFIXES]
    rng.shuffle(swaps)
    rng.shuffle(affixed)
    for candidate in swaps + affixed:
        name = lead + join_like(candidate, core) + trail
        if name != old and name.isidentifier() and name not in taken and name not in RESERVED:
            return name
    return None


def rename(sites: list[Node], new: str, event: int) -> Candidate:
    edits = [Edit(n.start_byte, n.end_byte, new.encode()) for n in sites]
    return edits[event], edits[:event] + edits[event + 1:]


def definition_first(count: int, rng: random.Random) -> int:
    """The event's site: the definition (site 0) three times in four, else another site."""
    return 0 if count < 2 or rng.random() < 0.75 else rng.randrange(1, count)


@dataclass(slots=True)
class FileContext:
    source: bytes
    root: Node
    taken: set[str]  # every name and string the file holds
    rng: random.Random

    def renamed(self, sites: list[Node], event: int) -> Candidate | None:
        new = new_identifier(text(sites[0]), self.taken, self.rng)
        return None if new is None else rename(sites, new, event)


def _local_candidates(ctx: FileContext) -> Iterator[tuple[Node, list[Node]]]:
    for func in function_defs(ctx.root):
        for name in function_locals(func):
            if name not in RESERVED and name.strip("_"):
                sites = local_sites(func, name)
                if sites:
                    yield func, sites


def rename_local(ctx: FileContext) -> Iterator[Candidate | None]:
    for _, sites in _local_candidates(ctx):
        if len(sites) >= 2:
            yield ctx.renamed(sites, definition_first(len(sites), ctx.rng))


def _parameter_sites(ctx: FileContext, func: Node, node: Node) -> list[Node] | None:
    """A parameter, its uses, and its name at keyword call sites of the function."""
    sites = local_sites(func, text(node), node)
    if sites is None:
        return None
    fname = text(func.child_by_field_name("name"))
    for kw in (n for n in walk(ctx.root) if n.type == "keyword_argument"):
        name, call = kw.child_by_field_name("name"), kw.parent.parent
        callee = call.child_by_field_name("function") if call.type == "call" else None
        if text(name) == text(node) and callee is not None and text(callee).rsplit(".", 1)[-1] == fname:
            sites.append(name)
    return sorted(sites, key=lambda n: n.start_byte)


def rename_parameter(ctx: FileContext) -> Iterator[Candidate | None]:
    for func in function_defs(ctx.root):
        for i, param in enumerate(func.child_by_field_name("parameters").named_children):
            node = param_name(param)
            if node is None or text(node) in RESERVED or (i == 0 and text(node) in ("self", "cls")):
                continue
            sites = _parameter_sites(ctx, func, node)
            if sites and len(sites) >= 2:
                event = sites.index(node) if ctx.rng.random() < 0.75 else ctx.rng.randrange(len(sites))
                yield ctx.renamed(sites, event)


def rename_attribute(ctx: FileContext) -> Iterator[Candidate | None]:
    for cls in (n for n in walk(ctx.root) if n.type == "class_definition"):
        names = {}
        for method in methods(cls):
            for n in walk(method.child_by_field_name("body")):
                if n.type == "assignment" and n.child_by_field_name("left").type == "attribute":
                    names.setdefault(text(n.child_by_field_name("left").child_by_field_name("attribute")), None)
        for name in names:
            sites = self_attribute_sites(ctx.root, cls, name)
            if sites and len(sites) >= 2:
                yield ctx.renamed(sites, definition_first(len(sites), ctx.rng))


def _module_rename(ctx: FileContext, node_type: str) -> Iterator[Candidate | None]:
    for definition in top_level(ctx.root, node_type):
        sites = module_name_sites(ctx.root, definition)
        if sites and len(sites) >= 2:
            yield ctx.renamed(sites, definition_first(len(sites), ctx.rng))


def rename_function(ctx: FileContext) -> Iterator[Candidate | None]:
    return _module_rename(ctx, "function_definition")


def rename_class(ctx: FileContext) -> Iterator[Candidate | None]:
    return _module_rename(ctx, "class_definition")


def items_of(container: Node) -> list[Node] | None:
    """Parameters or arguments of a parenthesised list; None when comments sit among them."""
    items = container.named_children
    return None if any(n.type == "comment" for n in items) else items


def append_item(container: Node, item: str) -> Edit:
    items = container.named_children
    at = items[-1].end_byte if items else container.children[0].end_byte
    return Edit(at, at, ((", " if items else "") + item).encode())


def remove_item(container: Node, index: int) -> Edit:
    items = container.named_children
    if index + 1 < len(items):
        return Edit(items[index].start_byte, items[index + 1].start_byte, b"")
    if index > 0:
        return Edit(items[index - 1].end_byte, items[index].end_byte, b"")
    return Edit(items[0].start_byte, container.children[-1].start_byte, b"")


def swap_items(source: bytes, first: Node, second: Node) -> Edit:
    between = source[first.end_byte:second.start_byte]
    return Edit(first.start_byte, second.end_byte, second.text + between + first.text)


def _signatures(ctx: FileContext) -> Iterator[tuple[Node, list[Node], list[Node], list[Node]]]:
    """(function, parameters, positional parameters, call argument lists) of every undecorated
    module-level function that is only ever called, plainly, and has no comments in its lists."""
    for func in top_level(ctx.root, "function_definition"):
        sites = module_name_sites(ctx.root, func)
        calls = calls_of(ctx.root, sites) if sites and len(sites) >= 2 else None
        params = items_of(func.child_by_field_name("parameters"))
        if func.parent.type == "decorated_definition" or not calls or params is None \
                or any(items_of(a) is None for a in calls):
            continue
        positional = []
        for p in params:
            if param_name(p) is None:
                break
            positional.append(p)
        yield func, params, positional, calls


def positional_args(args: Node) -> list[Node]:
    return [a for a in args.named_children if a.type != "keyword_argument"]


def signature_add(ctx: FileContext) -> Iterator[Candidate | None]:
    for func, params, positional, calls in _signatures(ctx):
        types = {p.type for p in params}
        if "dictionary_splat_pattern" in types:
            continue
        free = [(n, v) for n, v in ADDED_PARAMS if n not in ctx.taken]
        if not free:
            continue
        name, literal = ctx.rng.choice(free)
        as_positional = len(positional) == len(params) and not types & {"default_parameter", "typed_default_parameter"}
        starred = bool(types & {"list_splat_pattern", "keyword_separator"})
        param = name if as_positional or starred else "*, " + name
        follow = [append_item(a, literal if as_positional and len(positional_args(a)) == len(a.named_children)
                              else f"{name}={literal}") for a in calls]
        yield append_item(func.child_by_field_name("parameters"), param), follow


def signature_remove(ctx: FileContext) -> Iterator[Candidate | None]:
    for func, params, positional, calls in _signatures(ctx):
        for i, param in enumerate(positional):
            name = text(param_name(param))
            if name in ("self", "cls") or identifiers(func.child_by_field_name("body"), name):
                continue
            follow = []
            for args in calls:
                passed = positional_args(args)
                by_name = [j for j, a in enumerate(args.named_children) if a.type == "keyword_argument"
                           and text(a.child_by_field_name("name")) == name]
                if i < len(passed):
                    follow.append(remove_item(args, args.named_children.index(passed[i])))
                elif by_name:
                    follow.append(remove_item(args, by_name[0]))
            if follow:
                yield remove_item(func.child_by_field_name("parameters"), params.index(param)), follow


def signature_reorder(ctx: FileContext) -> Iterator[Candidate | None]:
    for func, _, positional, calls in _signatures(ctx):
        for first, second in zip(positional, positional[1:]):
            defaults = ("default_parameter", "typed_default_parameter")
            if (first.type in defaults) != (second.type in defaults) or "self" in (text(first), text(second)):
                continue
            i = positional.index(first)
            follow = []
            for args in calls:
                passed = positional_args(args)
                if i + 1 < len(passed) and passed[i].text != passed[i + 1].text:
                    follow.append(swap_items(ctx.source, passed[i], passed[i + 1]))
            if follow:
                yield swap_items(ctx.source, first, second), follow


def literal_nodes(node: Node) -> list[Node]:
    """Numbers other than 0 and 1, and short one-line plain strings, outside docstrings."""
    found = []
    for n in walk(node):
        if n.type in ("integer", "float") and text(n) not in ("0", "1"):
            found.append(n)
        elif n.type == "string" and n.parent.type != "expression_statement":
            parts = [c.type for c in n.children]
            content = text(n)[1:-1]
            if parts == ["string_start", "string_content", "string_end"] and text(n)[0] in "'\"" \
                    and 2 <= len(content) <= 40 and "\n" not in content and "\\" not in content:
                found.append(n)
    return found


def changed_literal(node: Node, taken: set[str], rng: random.Random) -> str | None:
    """The same literal with another value: a number scaled or moved, a string's word replaced."""
    old = text(node)
    if node.type == "integer":
        return str(rng.choice([2, 10]) * int(old)) if old.isdigit() else None
    if node.type == "float":
        if not re.fullmatch(r"\d+\.\d+", old):
            return None
        decimals = len(old.split(".")[1])
        return f"{float(old) * 2:.{decimals}f}"
    quote, content = old[0], old[1:-1]
    if re.fullmatch(r"[A-Za-z_][\w.-]*", content):
        parts = re.split(r"([.-])", content)
        new = new_identifier(parts[-1], taken, rng) if parts[-1].isidentifier() else None
        return None if new is None else quote + "".join(parts[:-1]) + new + quote
    for word in re.findall(r"[A-Za-z]{3,}", content):
        if word.lower() in SYNONYMS:
            return quote + content.replace(word, SYNONYMS[word.lower()], 1) + quote
    return None


def _changed_everywhere(ctx: FileContext, sites: list[Node], new: str | None) -> Candidate | None:
    if new is None:
        return None
    edits = [Edit(n.start_byte, n.end_byte, new.encode()) for n in sites]
    event = ctx.rng.randrange(len(edits))
    return edits[event], edits[:event] + edits[event + 1:]


def literal(ctx: FileContext) -> Iterator[Candidate | None]:
    in_file = defaultdict(int)
    for n in literal_nodes(ctx.root):
        in_file[text(n)] += 1
    seen = set()
    for func in function_defs(ctx.root):
        groups = defaultdict(list)
        for n in literal_nodes(func):
            groups[text(n)].append(n)
        for value, sites in groups.items():
            key = tuple(n.start_byte for n in sites)
            if len(sites) >= 2 and in_file[value] == len(sites) and key not in seen:
                seen.add(key)
                yield _changed_everywhere(ctx, sites, changed_literal(sites[0], ctx.taken, ctx.rng))


def attribute(ctx: FileContext) -> Iterator[Candidate | None]:
    """`obj.attr` on one object (not self), changed to another attribute at every use in a function."""
    in_file = defaultdict(int)
    for n in walk(ctx.root):
        if n.type == "identifier":
            in_file[text(n)] += 1
    for func in function_defs(ctx.root):
        groups = defaultdict(list)
        for n in walk(func.child_by_field_name("body")):
            obj = n.child_by_field_name("object") if n.type == "attribute" else None
            if obj is not None and obj.type == "identifier" and text(obj) not in ("self", "cls"):
                groups[(text(obj), text(n.child_by_field_name("attribute")))].append(n.child_by_field_name("attribute"))
        for (_, name), sites in groups.items():
            if len(sites) >= 2 and in_file[name] == len(sites) and not name.startswith("__"):
                yield _changed_everywhere(ctx, sites, new_identifier(name, ctx.taken, ctx.rng))


def negative_literal(ctx: FileContext) -> Iterator[Candidate | None]:
    nodes = literal_nodes(ctx.root)
    counts = defaultdict(int)
    for n in nodes:
        counts[text(n)] += 1
    for n in nodes:
        new = changed_literal(n, ctx.taken, ctx.rng) if counts[text(n)] == 1 else None
        if new is not None:
            yield Edit(n.start_byte, n.end_byte, new.encode()), []


def negative_rename(ctx: FileContext) -> Iterator[Candidate | None]:
    """A local with no other use renamed: nothing else follows."""
    for _, sites in _local_candidates(ctx):
        uses = identifiers(ctx.root, text(sites[0]))
        if len(sites) == 1 and len(uses) == 1:
            yield ctx.renamed(sites, 0)


def negative_comment(ctx: FileContext) -> Iterator[Candidate | None]:
    for n in (n for n in walk(ctx.root) if n.type == "comment"):
        body = text(n)
        words = re.findall(r"\b[A-Za-z]{3,}\b", body)
        if body.startswith("#!") or any(s in body for s in SKIP_COMMENTS) or not words:
            continue
        swaps = [w for w in words if w.lower() in SYNONYMS]
        if swaps:
            word = ctx.rng.choice(swaps)
            new = re.sub(rf"\b{word}\b", SYNONYMS[word.lower()], body, count=1)
        else:
            new = body.rstrip() + ctx.rng.choice(COMMENT_NOTES)
        yield Edit(n.start_byte, n.end_byte, new.encode()), []


KINDS: dict[str, Callable[[FileContext], Iterator[Candidate | None]]] = {
    "rename_local": rename_local, "rename_parameter": rename_parameter, "rename_attribute": rename_attribute,
    "rename_function": rename_function, "rename_class": rename_class, "signature_add": signature_add,
    "signature_remove": signature_remove, "signature_reorder": signature_reorder, "literal": literal,
    "attribute": attribute, "negative_literal": negative_literal, "negative_rename": negative_rename,
    "negative_comment": negative_comment,
}
NEGATIVE_KINDS = frozenset(k for k in KINDS if k.startswith("negative"))

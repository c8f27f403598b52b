"""What a next edit's plan costs on the bad inputs of issue 39, as ratios to a plain edit.

    python -m bench.next_edit_bounds [--repeat N] [--json]

Each input is an edit event on a generated file: a one-character edit among 5,000 repeats, an edit
inside a string that stands on every line, a call changed in a 400 KB file (ASCII, and with
non-ASCII docstrings), a word of a docstring fixed in that file, a name that stands on every
line renamed, and a one-letter name renamed in a 400 KB file of 200,000 lines. Each is planned as
the language server plans it (`completion.next_edit.plan`, the rules' drafts, no model); the table
gives the median milliseconds of the parse and of the plan over `--repeat` runs, the plan's ratio
to the plain edit's (a 40-line file), and how many analogy sites and regions it kept (at most
`completion.edit_sites.MAX_SITES` and `completion.edit_regions.MAX_REGIONS`). Times on shared
cores are noisy: compare the ratios of one run.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence

from completion import next_edit
from completion.edit_analogy import analogy_sites
from completion.edit_events import EditEvent, diff_span
from completion.syntax import ParsedDocument


def _plain() -> tuple[str, str]:
    before = "".join(f"def f{n}(a, b):\n    return g(a, b)\n\n\n" for n in range(10))
    return before, before.replace("return g(a, b)", "return g(a, b, key=a)", 1)


def _repeats() -> tuple[str, str]:
    before = "x = [\n" + "    'a',\n" * 5000 + "]\n"
    return before, before.replace("'a'", "'b'", 1)


def _string_everywhere() -> tuple[str, str]:
    before = "".join(f'print("value of the item", {n})\n' for n in range(300))
    return before, before.replace("value of", "price of", 1)


def _big_ascii() -> tuple[str, str]:
    before = "".join(f"def f{n}(a, b):\n    return g(a, b)\n\n\n" for n in range(12_000))
    return before, before.replace("return g(a, b)", "return g(a, b, key=a)", 1)


def _big_unicode() -> str:
    return "".join(f'def f{n}(a, b):\n    """Für Straße {n}."""\n    return g(a, b)\n' for n in range(9_000))


def _big_unicode_call() -> tuple[str, str]:
    before = _big_unicode()
    return before, before.replace("return g(a, b)", "return g(a, b, key=a)", 1)


def _big_unicode_word() -> tuple[str, str]:
    before = _big_unicode()
    return before, before.replace("Für Straße 0.", "Für Strasse 0.", 1)


def _name_everywhere() -> tuple[str, str]:
    before = "".join(f"value = value + item{n}  # value\n" for n in range(12_000))
    return before, before.replace("value = value", "total = value", 1)


def _one_letter() -> tuple[str, str]:
    return "x\n" * 200_000, "y\n" + "x\n" * 199_999


INPUTS: dict[str, Callable[[], tuple[str, str]]] = {
    "plain edit, 40 lines": _plain, "one character among 5,000 repeats": _repeats,
    "a string on every line": _string_everywhere, "a call in 400 KB": _big_ascii,
    "a call in 400 KB, non-ASCII": _big_unicode_call, "a docstring word in 400 KB, non-ASCII": _big_unicode_word,
    "a name on every line": _name_everywhere, "a one-letter name, 200,000 lines": _one_letter,
}


def measure(before: str, after: str, repeat: int) -> dict:
    """Median parse and plan milliseconds of the edit before -> after, with what the plan kept."""
    event = EditEvent("file:///bench.py", before, after, diff_span(before, after), 0.0)
    parses, plans, planned, document = [], [], None, None
    for _ in range(repeat):
        started = time.perf_counter()
        document = ParsedDocument.parse("python", after)
        parses.append((time.perf_counter() - started) * 1e3)
        started = time.perf_counter()
        planned = next_edit.plan(next_edit.EditAsk(document, event, event.span.start_line, "bench", 1000,
                                                   events=[event], drafting=next_edit.Drafting.RULES))
        plans.append((time.perf_counter() - started) * 1e3)
    return {"chars": len(after), "parse_ms": round(statistics.median(parses), 1),
            "plan_ms": round(statistics.median(plans), 1), "sites": len(analogy_sites(event, document=document)),
            "regions": len(getattr(planned, "regions", []))}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.next_edit_bounds", description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs of each input (default 3)")
    parser.add_argument("--json", action="store_true", help="end with one JSON line of every figure")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat is at least 1")
    results = {name: measure(*make(), args.repeat) for name, make in INPUTS.items()}
    plain = max(results["plain edit, 40 lines"]["plan_ms"], 0.1)
    print("input | chars | parse ms | plan ms | plan / plain | sites | regions")
    for name, found in results.items():
        found["plan_ratio"] = round(found["plan_ms"] / plain, 1)
        print(f"{name} | {found['chars']} | {found['parse_ms']} | {found['plan_ms']} | {found['plan_ratio']} | "
              f"{found['sites']} | {found['regions']}")
    if args.json:
        print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())

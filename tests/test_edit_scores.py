"""The model's per-site judgement of drafted next edits (`infill.site_scores`): which tokens are
read, how a run is read left to right, and, with the bundled model, that a plain rename's site is
kept and an absurd one is dropped."""
import pytest

from infill.job import Hole, Job
from infill.paths import bundled_model_dir
from infill.serving import open_model, open_tokenizer
from infill.site_scores import (SiteScore, chain_canvases, changed_tokens, current_hole, judged, runs,
                                site_scores)

MASK = 0


def test_changed_tokens_are_the_replaced_runs_and_an_insertion_is_read_with_its_neighbours():
    assert changed_tokens([5, 6, 7], [5, 9, 7]) == ([1], [1])
    assert changed_tokens([5, 6, 7], [5, 6, 8, 8, 7]) == ([1, 2], [1, 2, 3, 4])  # inserted 8 8 after 6
    assert changed_tokens([5, 6, 7], [5, 6, 7]) is None
    assert changed_tokens([], [5]) is None  # nothing to read on the current side


def test_runs_cut_sorted_indices_where_they_stop_being_consecutive():
    assert runs([1, 2, 3, 7, 9, 10]) == [[1, 2, 3], [7], [9, 10]]
    assert runs([]) == []


def test_a_run_is_read_left_to_right_and_its_tail_at_once_in_the_last_canvas():
    ids = [10, 11, 12, 13, 14]
    reads = [(1, 0), (2, 1), (3, 2)]  # one run of three tokens at positions 1..3
    laid = chain_canvases(ids, reads, MASK, 2)
    assert [canvas for canvas, _ in laid] == [[10, MASK, MASK, MASK, 14], [10, 11, MASK, MASK, 14]]
    assert [picks for _, picks in laid] == [[(1, 0)], [(2, 1), (3, 2)]]


def test_judged_drafts_a_hole_below_minus_the_margin_as_its_current_text_and_keeps_the_others():
    holes = (Hole("multi_line", 16, "a = 1\n", ("a = 2\n",)), Hole("multi_line", 16, "b = 1\n", ("b = 2\n",)),
             Hole("multi_line", 16, "c = 1\n", ("c = 2\n",)))
    job = Job(("x\n", "", "", "y\n"), holes)
    scores = [SiteScore(-6.0, -1.0), SiteScore(-15.0, -1.0), None]  # gains -5, -14, none
    kept = judged(job, scores, 9.0)
    assert kept.holes == (holes[0], current_hole(holes[1]), holes[2])
    assert kept.holes[1].draft == ("b = 1\n",) and not kept.holes[1].slots


@pytest.fixture(scope="module")
def bundled():
    directory = bundled_model_dir()
    return open_model(directory, "cpu", "fp32", "fp32"), open_tokenizer(directory)


RENAMED = "def total(prices):\n    amount = 0\n    for price in prices:\n        amount += price\n"


RENAMING = (("    count = 0\n", "    amount = 0\n"),)  # the user's edit: the job's event


def one_site(current: str, new: str) -> Job:
    """The function above with its return line as the one drafted hole, after the user's rename."""
    return Job((RENAMED, "\n"), (Hole("multi_line", 32, current, (new,)),), events=RENAMING)


def test_the_bundled_model_ranks_an_absurd_or_misspelt_site_below_a_renamed_one(bundled):
    """The gains themselves sit low for the bundled model, trained on edit canvases where most
    regions stay as they are (the renamed site about -15); the order is what is asked."""
    model, tok = bundled
    [renamed] = site_scores(model, tok, one_site("    return count\n", "    return amount\n"))
    [absurd] = site_scores(model, tok, one_site("    return amount\n", "    return amount)(\n"))
    [misspelt] = site_scores(model, tok, one_site("    return amount\n", "    retrun amount\n"))
    assert renamed.gain > max(absurd.gain, misspelt.gain)


def test_a_hole_that_changes_nothing_or_has_slots_is_not_judged(bundled):
    model, tok = bundled
    same = Hole("multi_line", 32, "    return amount\n", ("    return amount\n",))
    slotted = Hole("multi_line", 32, "    return amount\n", ("    return amount(", ")\n"), (3,))
    assert site_scores(model, tok, Job((RENAMED, "", "\n"), (same, slotted))) == [None, None]

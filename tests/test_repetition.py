"""The repetition check cuts loops back to one copy and leaves ordinary code alone."""
from infill.repetition import cut_loop, loop_start


def test_a_short_loop_is_cut_to_its_first_copy():
    assert cut_loop([5, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2]) == [5, 1, 2]
    assert cut_loop([7] * 9) == [7]


def test_a_long_block_repeated_three_times_is_a_loop():
    line = [10, 11, 12, 13, 14]
    assert cut_loop([1] + line * 3 + [2]) == [1] + line


def test_short_runs_are_ordinary_code():
    closing = [3, 4, 9, 9, 9, 2]  # `)))`: three copies but only three tokens
    assert loop_start(closing) is None
    assert loop_start([1, 2, 3, 1, 2, 3]) is None  # two copies
    assert loop_start([]) is None


def test_the_earliest_loop_wins():
    assert loop_start([4, 4, 4, 4, 4, 4, 4, 4, 1, 2, 1, 2, 1, 2, 1, 2]) == 1

"""A parameter's default changed in a function's header goes to where its own docstring states it, in
that parameter's entry only; a default stated for another parameter, in another function's docstring,
or a change outside a default stays as it is."""
from completion.edit_defaults import default_changed
from completion.edit_rewrites import rewrite_of
from completion.syntax import ParsedDocument
from edit_samples import event, proposed

SOURCE = '''def progress(iterable, leave=False, smoothing=0.3, unit="it"):
    """Show progress.

    Parameters
    ----------
    leave  : bool, optional
        If [default: False], keeps the bar.
    smoothing  : float, optional
        Speed smoothing, 0 to 1 [default: 0.3].
    unit  : str, optional
        Defaults to "it"; the smoothing [default: 0.3] of `other` is not this one.
    """
    return iterable


def other(smoothing=0.4):
    """Like progress.

    :param smoothing: the factor (default 0.4).
    """
    return smoothing
'''


def test_a_default_changed_goes_to_its_own_entry_of_its_own_docstring():
    after = SOURCE.replace("smoothing=0.3, unit", "smoothing=0.1, unit")
    assert proposed(SOURCE, after, 0) == after.replace("to 1 [default: 0.3]", "to 1 [default: 0.1]")
    shared = SOURCE + "\n\ndef third(smoothing=0.3):\n    return smoothing\n"  # the literal rule's places too
    assert "to 1 [default: 0.1]" in proposed(shared, shared.replace("smoothing=0.3, unit", "smoothing=0.1, unit"), 0)
    keyword = SOURCE.replace("leave=False", "leave=True")
    assert proposed(SOURCE, keyword, 0) == keyword.replace("If [default: False]", "If [default: True]")
    string = SOURCE.replace('unit="it")', 'unit="items")')
    assert proposed(SOURCE, string, 0) == string.replace('Defaults to "it"', 'Defaults to "items"')
    sphinx = SOURCE.replace("def other(smoothing=0.4)", "def other(smoothing=0.5)")
    assert proposed(SOURCE, sphinx, 15) == sphinx.replace("(default 0.4)", "(default 0.5)")


def test_a_change_outside_a_default_or_to_a_sentinel_is_no_default_change():
    sentinel = SOURCE.replace("leave=False", "leave=None")
    assert proposed(SOURCE, sentinel, 0) == sentinel  # `None` stands for the default the docstring states
    renamed = SOURCE.replace("def progress(iterable,", "def progress(items,")
    document = ParsedDocument.parse("python", renamed)
    assert default_changed(rewrite_of(event(SOURCE, renamed)), event(SOURCE, renamed), document) is None
    called = SOURCE + "progress([], smoothing=0.3)\n"
    changed = called.replace("progress([], smoothing=0.3)", "progress([], smoothing=0.2)")
    document = ParsedDocument.parse("python", changed)
    assert default_changed(rewrite_of(event(called, changed)), event(called, changed), document) is None

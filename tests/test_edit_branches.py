"""An `elif` after branches that all leave made `if` goes to the file's other such `elif`s
(`completion.edit_branches`, ruff's RET505-RET508); and the bad inputs: a chain with a branch that
falls through, an `elif` made `if` after a branch that stays, 5,000 chains in one file."""
from completion.edit_branches import elif_unchained, unchained_sites
from completion.edit_sites import MAX_SITES
from completion.syntax import ParsedDocument
from edit_samples import event, proposed

FINDERS = '''def place(prefix, module):
    if prefix in THIRD:
        return "third"
    elif prefix == STDLIB:
        return "stdlib"
    elif module in CONDA:
        return "conda"
    return None


def newline(contents):
    if "\\r\\n" in contents:
        return "\\r\\n"
    elif "\\r" in contents:
        return "\\r"
    else:
        return "\\n"


def skip(lines):
    for line in lines:
        if not line:
            continue
        elif line.startswith("#"):
            break


def fallen(value):
    if value is None:
        value = 0
    elif value < 0:
        return -value
    elif value > 9:
        return 9
    return value
'''


def test_an_elif_after_branches_that_leave_made_if_goes_to_the_others_alike():
    after = FINDERS.replace("    elif prefix == STDLIB:", "    if prefix == STDLIB:")
    unchained = (after.replace("    elif module in CONDA:", "    if module in CONDA:")
                 .replace('    elif "\\r" in', '    if "\\r" in')
                 .replace("        elif line.startswith", "        if line.startswith"))
    assert proposed(FINDERS, after, 3) == unchained  # isort's finders: not `fallen`, whose first branch stays


def test_an_elif_made_if_after_a_branch_that_stays_is_no_such_fix():
    after = FINDERS.replace("    elif value < 0:", "    if value < 0:")
    sites = unchained_sites(31, event(FINDERS, after), ParsedDocument.parse("python", after))
    assert sites is None and elif_unchained("    elif value < 0:", "    if value < 0:")
    assert not elif_unchained("    elif value < 0:", "    if value <= 0:") and not elif_unchained("x = 1", "x = 2")


def test_five_thousand_chains_give_a_bounded_answer():
    chain = "def f{n}(x):\n    if x:\n        return 1\n    elif x > 1:\n        return 2\n\n\n"
    text = "".join(chain.format(n=n) for n in range(5000))
    after = text.replace("    elif x > 1:", "    if x > 1:", 1)
    sites = unchained_sites(3, event(text, after), ParsedDocument.parse("python", after))
    assert len(sites) == MAX_SITES and sites[0].line == 10

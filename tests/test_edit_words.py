"""Two words of prose joined into one (`in to` -> `into`) go to the file's other places where the same two
stand apart in strings and comments (`completion.edit_words`); and the bad inputs: the pair in code, two
names run together, a join typed in code, 5,000 sentences in one file."""
from completion.edit_sites import MAX_SITES
from completion.edit_words import apart_sites, words_joined
from edit_samples import event, proposed

SOURCE = '''def split(text):
    """Split rich text in to lines."""
    return text


def join(strips):
    """Join a number of strips in to one."""
    log_in = 1
    print(log_in, to)  # log in to the server
    found = log_in in to
    return "go in toward"
'''


def test_two_words_joined_in_prose_go_to_the_others_in_prose_only():
    joined = SOURCE.replace("Split rich text in to lines", "Split rich text into lines")
    expected = joined.replace("strips in to one", "strips into one").replace("log in to the", "log into the")
    assert proposed(SOURCE, joined, 1) == expected  # not `in toward`, nor code


def test_only_two_words_of_english_that_make_one_are_joined():
    assert words_joined(" ", "", "Split rich text in", "to lines.") == ("in", "to")
    assert words_joined(" ", "", "it can", "not be") == ("can", "not")
    assert words_joined(" ", "", "x = foo", "bar") is None  # no words of English
    assert words_joined(" ", "", "text in", "the lines") is None  # `inthe` is no word
    assert words_joined("  ", "", "text in", "to lines") is None
    assert words_joined(" ", "", "self.in", "to") is None  # a name's part


def test_a_join_typed_in_code_or_without_a_tree_has_no_sites():
    code = "in to = 1\nin to = 2\n"
    joined = "into = 1\nin to = 2\n"
    assert apart_sites("in", "to", 0, 2, event(code, joined), lambda offset: False) is None
    assert apart_sites("in", "to", 0, 2, event(code, joined), None) is None


def test_five_thousand_sentences_give_the_nearest_sites():
    many = "".join(f"# step {n}: log in to the server\n" for n in range(5000))
    joined = many.replace("log in to", "log into", 1)
    sites = apart_sites("in", "to", 0, 14, event(many, joined), lambda offset: True)
    assert [site.line for site in sites] == list(range(1, MAX_SITES + 1))

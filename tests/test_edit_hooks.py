"""A test class's nose-style hook renamed for pytest (`setup` -> `setup_method`) goes to the file's other
test classes' hooks (`completion.edit_hooks`); and the bad inputs: a fixture that shares the name, a
module's function of that name, a rename pytest never asked for, 5,000 classes in one file."""
from completion.edit_hooks import hook_renamed, hook_sites
from completion.edit_sites import MAX_SITES
from completion.syntax import ParsedDocument
from edit_samples import event, proposed

TESTS = '''import pytest


def setup():
    print("module")


class TestFields:
    def setup(self):
        self.field = Field()

    def teardown(self):
        self.field = None


class TestPagination:
    def setup(self):
        self.pager = Pager()

    @pytest.fixture
    def teardown(self):
        yield


class TestSerializer:
    @pytest.fixture
    def setup(self):
        return Serializer()
'''


def test_a_hook_renamed_for_pytest_goes_to_the_other_classes_hooks_only():
    renamed = TESTS.replace("def setup(self):\n        self.field", "def setup_method(self):\n        self.field")
    expected = renamed.replace("def setup(self):\n        self.pager", "def setup_method(self):\n        self.pager")
    assert proposed(TESTS, renamed, 8) == expected  # the module's setup and a fixture keep their names


def test_only_the_names_pytest_asks_for_are_hooks():
    assert hook_renamed("teardown", "teardown_method", "    def ", "(self):")
    assert not hook_renamed("setup", "setup_class", "    def ", "(self):")
    assert not hook_renamed("setup", "setup_method", "    self.", "()")
    assert not hook_renamed("setup", "setup_method", "    undef ", "(self):")
    renamed = TESTS.replace("def teardown(self):\n        self.field", "def teardown_method(self):\n        self.field")
    after = ParsedDocument.parse("python", renamed)
    sites = hook_sites(11, "teardown", "teardown_method", event(TESTS, renamed), after)
    assert sites == []  # the other `teardown` is a fixture's


def test_five_thousand_classes_give_the_nearest_sites():
    many = "".join(f"class Test{n}:\n    def setup(self):\n        pass\n\n\n" for n in range(5000))
    renamed = many.replace("def setup(self):", "def setup_method(self):", 1)
    sites = hook_sites(1, "setup", "setup_method", event(many, renamed), ParsedDocument.parse("python", renamed))
    assert [site.line for site in sites] == [5 * n + 1 for n in range(1, MAX_SITES + 1)]

"""`-> None` put on a function that returns nothing goes to the file's other functions that return
nothing (`completion.edit_returns`, ruff's ANN201); and the bad inputs: a function that returns a value
or yields, a test's annotation beside helpers, 5,000 functions in one file."""
from completion.edit_returns import none_annotated, none_return_sites
from completion.edit_sites import MAX_SITES
from completion.syntax import ParsedDocument
from edit_samples import event, proposed

SERVER = '''class Server:
    def __init__(self, sock):
        self.sock = sock

    def start(self):
        self.sock.listen()

    def address(self):
        return self.sock.getsockname()

    def __exit__(self, *info):
        self.sock.close()

    def lines(self):
        yield from self.sock

    async def stop(
        self,
        code,
    ):
        def close():
            return self.sock.close()
        await close()

    def flush(self) -> bool:
        return True

    def reset(self):
        """Reset the socket."""
        raise NotImplementedError


def serve(sock):
    Server(sock).start()
'''


def test_none_put_on_one_function_goes_to_the_others_that_return_nothing():
    annotated = SERVER.replace("    def start(self):", "    def start(self) -> None:")
    expected = annotated.replace("def __init__(self, sock):", "def __init__(self, sock) -> None:").replace(
        "def serve(sock):", "def serve(sock) -> None:")
    assert proposed(SERVER, annotated, 4) == expected  # a value, a yield, a dunder, a nested return, a raise: stay
    assert none_annotated("", " -> None", "    def start(self)", ":") and none_annotated("", " -> None", "    )", ":")
    assert not none_annotated("", " -> int", "    def start(self)", ":")
    assert not none_annotated("", " -> None", "    x = f(y)", "")


def test_a_test_s_annotation_goes_to_tests_only_and_a_multiline_header_takes_it_after_its_parenthesis():
    tests = '''def helper(x):
    print(x)


def test_one():
    helper(1)


async def test_two(
    client,
):
    await client.get()
'''
    annotated = tests.replace("def test_one():", "def test_one() -> None:")
    assert proposed(tests, annotated, 4) == annotated.replace("):\n    await", ") -> None:\n    await")
    annotation = "x = f(1) -> None"  # no function's header: the other rules read it
    after = ParsedDocument.parse("python", tests + "\n" + annotation + "\n")
    assert none_return_sites(13, 8, event(tests, tests + "\n" + annotation + "\n"), after) is None


def test_five_thousand_functions_give_the_nearest_sites():
    many = "".join(f"def f{n}(x):\n    print(x)\n\n\n" for n in range(5000))
    annotated = many.replace("def f0(x):", "def f0(x) -> None:", 1)
    sites = none_return_sites(0, 9, event(many, annotated), ParsedDocument.parse("python", annotated))
    assert sites is not None and [site.line for site in sites] == [4 * n for n in range(1, MAX_SITES + 1)]

"""A trailing comma put after a definition's last parameter, alone on its line, goes to the file's
other definitions whose last parameter stands alike and is of the same sort (`completion.edit_commas`,
ruff's COM812); and the bad inputs: parameters joined on one line, a call's last argument, a splat
beside a plain parameter, a comma put on no parameter's line, 5,000 definitions in one file."""
from completion.edit_commas import comma_put, parameter_comma_sites
from completion.edit_sites import MAX_SITES
from completion.syntax import ParsedDocument
from edit_samples import event, proposed

ROUTES = '''async def read_me(
    user: User = Depends(current_user)
):
    return user


async def login(
    form: Form = Depends()
) -> Token:
    return token(form)


async def items(
    user: User, token: str = Depends(scheme)
):
    return send(
        user
    )


def render(
    name: str,
    **context: t.Any
) -> str:
    return name


def joined(user: User = Depends(current_user)
):
    return user
'''


def test_a_comma_after_a_lone_last_parameter_goes_to_the_definitions_written_alike():
    put = ROUTES.replace("Depends(current_user)\n):\n    return user\n\n\nasync def login",
                         "Depends(current_user),\n):\n    return user\n\n\nasync def login")
    expected = put.replace("form: Form = Depends()\n", "form: Form = Depends(),\n")
    # two on one line, a call's argument, a splat after others, a parameter on the header's line: stay
    assert proposed(ROUTES, put, 1) == expected


def test_a_splat_s_comma_goes_to_the_other_splats_only():
    more = ROUTES + '''

def stream(
    name: str,
    **context: t.Any
) -> Iterator[str]:
    yield name
'''
    put = more.replace("**context: t.Any\n) -> str:", "**context: t.Any,\n) -> str:")
    assert proposed(more, put, 23) == put.replace("**context: t.Any\n) -> Iterator", "**context: t.Any,\n) -> Iterator")


def test_a_comma_on_no_lone_parameter_is_left_to_the_other_rules():
    assert comma_put("", ",", "") and comma_put("", ",", "  ")
    assert not comma_put("", ", x", "") and not comma_put("", ",", " # note") and not comma_put("x", ",", "")
    put = ROUTES.replace("    user\n    )", "    user,\n    )")  # a call's last argument
    line = put.splitlines().index("        user,")
    assert parameter_comma_sites(line, event(ROUTES, put), ParsedDocument.parse("python", put)) is None


def test_five_thousand_definitions_give_the_nearest_sites():
    many = "".join(f"def f{n}(\n    x\n):\n    return x\n\n\n" for n in range(5000))
    put = many.replace("def f0(\n    x\n", "def f0(\n    x,\n", 1)
    sites = parameter_comma_sites(1, event(many, put), ParsedDocument.parse("python", put))
    assert sites is not None and [site.line for site in sites] == [6 * n + 1 for n in range(1, MAX_SITES + 1)]

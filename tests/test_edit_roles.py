"""A Sphinx role's `py:` domain taken off or put on goes to the file's other Python roles in prose
(`completion.edit_roles`); and the bad inputs: a role of another domain, code that reads like a
role, a directive's `::`, half a domain typed, 5,000 roles in one file."""
from completion.edit_roles import domain_change, domain_sites
from completion.edit_sites import MAX_SITES
from edit_samples import event, proposed

APP = '''class App:
    """An application.

    Args:
        media_type (str): the default for :py:class:`~.RequestOptions` and
            :py:class:`~.ResponseOptions`.
        router: see :py:attr:`~.router_options` and :py:meth:`add_route`,
            and :ref:`routing` (no Python role).
    """

    text = ":py:class:`x`"  # a string's role is prose too
    pattern = {":py:class:": 1}
'''


def test_the_domain_taken_off_one_role_goes_off_the_file_s_other_python_roles():
    edited = APP.replace(":py:class:`~.RequestOptions`", ":class:`~.RequestOptions`")
    expected = edited.replace(":py:class:`~.ResponseOptions`", ":class:`~.ResponseOptions`") \
        .replace(":py:attr:", ":attr:").replace(":py:meth:", ":meth:").replace('":py:class:`x`"', '":class:`x`"')
    assert proposed(APP, edited, 4) == expected  # not `:ref:`, nor the dict's key: no backtick follows


def test_the_domain_put_on_one_role_goes_on_the_others():
    bare = APP.replace(":py:", ":")
    edited = bare.replace(":class:`~.ResponseOptions`", ":py:class:`~.ResponseOptions`")
    expected = bare.replace(":class:`~", ":py:class:`~").replace(":attr:`", ":py:attr:`") \
        .replace(":meth:`", ":py:meth:`").replace('":class:`x`"', '":py:class:`x`"')
    assert proposed(bare, edited, 5) == expected


def test_only_py_between_a_colon_and_a_python_role_is_the_domain():
    assert domain_change("py:", "", "see :", "attr:`x`") is True
    assert domain_change("", "py:", "see :", "meth:`x`") is False
    assert domain_change("py:", "", "see :", "ref:`x`") is None  # the standard domain's role
    assert domain_change("py:", "", "see :", "attr: x") is None  # no backtick: not a role
    assert domain_change("py:", "", ".. note::", "attr:`x`") is None  # after a directive's `::`
    assert domain_change("p", "", "see :", "y:attr:`x`") is None  # half the domain
    assert domain_change("js:", "", "see :", "func:`x`") is None  # another domain


def test_five_thousand_roles_give_the_nearest_sites_and_none_without_a_tree():
    many = '"""Roles.\n\n' + "".join(f"See :py:func:`f{n}`.\n" for n in range(5000)) + '"""\n'
    edited = many.replace(":py:func:`f0`", ":func:`f0`")
    sites = domain_sites(True, 2, event(many, edited), lambda offset: True)
    assert [site.line for site in sites] == list(range(3, 3 + MAX_SITES))
    assert {site.new for site in sites} == {""}
    assert domain_sites(True, 2, event(many, edited), None) == []

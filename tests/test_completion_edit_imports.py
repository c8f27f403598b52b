"""An import's module changed on one line, carried to the other from-imports of the same place (the
shapes of real commits: an absolute import made relative, a module moved, a dot put before one),
through the rules' whole plan; and what it must leave: other packages, a package imported as a
whole, other depths of relative import, a name imported in place of another."""
from completion.edit_imports import import_sites, module_change
from edit_samples import proposed

HEAD = '''"""Shell completion.

Use it as the package's users do:

    from click.shell import complete
"""
import os
from click.utils import echo
from click.parser import split_arg_string
from click.core import MultiCommand, Option
from clicker import fast
from click import types


def complete(args):
    from click.termui import style
    return style(echo(split_arg_string(args)))
'''


def test_an_import_made_relative_goes_to_the_package_s_other_imports_only():
    after = HEAD.replace("from click.utils", "from .utils")
    expected = after.replace("from click.parser", "from .parser").replace("from click.core", "from .core") \
        .replace("from click.termui", "from .termui")
    assert proposed(HEAD, after, 7) == expected  # not `clicker`, `from click import` (no `from  import`), the docstring


def test_a_module_moved_goes_to_the_other_names_imported_from_it():
    before = "if TYPE_CHECKING:\n    from wsgiref.types import StartResponse\n    from wsgiref.types import Env\n" \
             "    from wsgiref.util import guess\n"
    change = module_change("    from wsgiref.types import StartResponse",
                           "    from _typeshed.wsgi import StartResponse")
    assert (change.old, change.new) == ("wsgiref.types", "_typeshed.wsgi")
    [site] = import_sites(change, before, range(1, 2))
    assert before[site.start:site.end] == "wsgiref.types" and site.new == "_typeshed.wsgi" and site.line == 2


def test_a_dot_put_before_a_module_goes_to_that_module_alone():
    change = module_change("    from _termui_impl import open_url", "    from ._termui_impl import open_url")
    text = "from _termui_impl import open_url\nfrom _termui_impl import getchar as f\nfrom _compat import PY2\n"
    assert [(site.line, site.new) for site in import_sites(change, text, range(0, 1))] == [(1, "._termui_impl")]


def test_a_package_put_under_the_head_goes_to_that_module_alone():
    change = module_change("from blib2to3.driver import TokenProxy", "from blib2to3.pgen2.driver import TokenProxy")
    assert (change.old, change.new) == ("blib2to3", "blib2to3.pgen2")
    text = "from blib2to3.driver import TokenProxy\nfrom blib2to3.driver import Driver\n" \
           "from blib2to3.pgen2.grammar import Grammar\nfrom blib2to3.pytree import Leaf\n"
    sites = [(site.line, site.new) for site in import_sites(change, text, range(0, 1))]
    assert sites == [(1, "blib2to3.pgen2.driver")]  # no `pgen2.pgen2`, and `pytree` stays where it is


def test_a_relative_import_goes_to_imports_as_relative_as_it():
    change = module_change("from ..utils import echo", "from .utils import echo")
    text = "from ..utils import echo\nfrom ..core import A\nfrom .core import B\nfrom ...x import C\n"
    assert [(site.line, site.new) for site in import_sites(change, text, range(0, 1))] == [(1, ".core")]


def test_a_name_imported_in_place_of_another_is_no_module_change():
    assert module_change("from .core import BaseCommand", "from .core import Command") is None
    assert module_change("import click.utils", "import click.parser") is None  # a plain import: not this rule
    assert module_change("from .core import A", "from .core import A  # noqa") is None

"""The editors' mirrors of the server's custom protocol name what `lsp_server.protocol` declares."""
from __future__ import annotations

import re

from infill.paths import REPO_ROOT
from lsp_server import protocol

MIRRORS = {
    "VS Code": ["editors/vscode/src/protocol.ts", "editors/vscode/src/arena.ts"],
    "Neovim": ["editors/nvim/lua/infill/protocol.lua", "editors/nvim/lua/infill/arena.lua"],
}
QUOTED = re.compile(r"""["']([A-Za-z]+[./][A-Za-z./]+)["']""")


def names_in(paths: list[str]) -> set[str]:
    return {name for path in paths for name in QUOTED.findall((REPO_ROOT / path).read_text())}


def test_every_custom_name_is_mirrored_by_each_editor():
    for editor, paths in MIRRORS.items():
        missing = set(protocol.NAMES) - set(protocol.CLIENT_MAY_IGNORE) - names_in(paths)
        assert not missing, f"{editor} lacks {sorted(missing)} (in {', '.join(paths)})"


def test_the_mirrors_name_no_custom_method_the_server_does_not_declare():
    # a method (infill/...), a server command (infill.camelCase) or Copilot's next-edit methods;
    # not a Lua module (infill.lsp) nor an editor's own command (infill.arena.takeTop)
    ours = re.compile(r"^(infill/|infill\.[a-z]+[A-Z]|textDocument/(copilot|didShowInline))")
    for editor, paths in MIRRORS.items():
        unknown = {n for n in names_in(paths) if ours.match(n)} - set(protocol.NAMES)
        assert not unknown, f"{editor} names {sorted(unknown)}, which lsp_server.protocol lacks"

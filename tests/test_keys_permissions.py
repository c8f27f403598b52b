"""Key folder permissions: `infill keys` makes them private whatever the umask, and loading
refuses folders and secrets that another user could change (`engine.wire.keys`, `engine.wire.private`)."""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from engine.wire import keys


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def key_dir(tmp_path) -> Path:
    """Keys made under umask 000, in a folder two levels below one that exists."""
    previous = os.umask(0)
    try:
        keys.create_keys(tmp_path / "config" / "keys")
    finally:
        os.umask(previous)
    return tmp_path / "config" / "keys"


def test_keys_made_under_umask_000_are_private(key_dir):
    for folder in (key_dir.parent, key_dir, key_dir / "authorized"):
        assert mode(folder) == 0o700, folder
    for name in ("server.secret", "client.secret"):
        assert mode(key_dir / name) == 0o600
    for name in ("server.public", "client.public", "authorized/client.public"):
        assert mode(key_dir / name) == 0o644
    assert keys.load_server_keys(key_dir).public == keys.load_client_keys(key_dir).server_public


@pytest.mark.parametrize("target, loosened, fix", [
    ("", 0o777, "chmod 700"),
    ("authorized", 0o777, "chmod 700"),
    ("server.secret", 0o640, "chmod 600"),
])
def test_the_worker_refuses_keys_others_can_change(key_dir, target, loosened, fix):
    path = key_dir / target
    good = mode(path)
    path.chmod(loosened)
    with pytest.raises(ValueError, match=f"run `{fix} {path}`"):
        keys.load_server_keys(key_dir)
    path.chmod(good)
    assert keys.load_server_keys(key_dir).authorized == key_dir / "authorized"


@pytest.mark.parametrize("target, loosened, fix", [("", 0o777, "chmod 700"),
                                                   ("client.secret", 0o604, "chmod 600")])
def test_a_client_refuses_keys_others_can_change(key_dir, target, loosened, fix):
    (key_dir / target).chmod(loosened)
    with pytest.raises(ValueError, match=f"run `{fix} {key_dir / target}`"):
        keys.load_client_keys(key_dir)


def test_keys_of_another_user_are_refused(key_dir, monkeypatch):
    monkeypatch.setattr(os, "getuid", lambda: key_dir.stat().st_uid + 1)
    with pytest.raises(ValueError, match="not to you"):
        keys.load_client_keys(key_dir)


def test_the_allow_list_refuses_an_open_folder_and_skips_open_files(key_dir):
    authorized = key_dir / "authorized"
    (authorized / "planted.public").write_bytes(keys.load_server_keys(key_dir).public + b"\n")
    (authorized / "planted.public").chmod(0o666)
    assert keys.authorized_keys(authorized) == {keys.load_client_keys(key_dir).public}
    authorized.chmod(0o777)
    with pytest.raises(ValueError, match="writable by other users"):
        keys.authorized_keys(authorized)


def test_infill_keys_refuses_an_open_folder(tmp_path, capsys):
    folder = tmp_path / "open"
    folder.mkdir()
    folder.chmod(0o777)
    assert keys.main(["--dir", str(folder)]) == 1
    assert f"chmod 700 {folder}" in capsys.readouterr().err
    assert not (folder / "server.secret").exists()

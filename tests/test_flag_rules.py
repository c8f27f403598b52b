"""The worker's model flags have one rule each (`engine.wire.flags`), and every place that takes
them agrees: the worker's own command line (`infill serve`), the command line of a front end that
starts its own worker (`infill lsp`, `infill run`, `infill gateway`) and the language server's
settings. Once `cuda:100` passed the command line and was refused as a setting."""
from __future__ import annotations

import argparse

import pytest

from engine.wire.flags import check_local_worker_flags, is_device, is_dtype
from engine.worker import cli
from lsp_server import main as lsp_cli
from lsp_server.settings import ServerSettings

DEVICES = {"auto": True, "cpu": True, "cuda": True, "cuda:0": True, "cuda:100": True, "cuda:999": True,
           "cuda:1000": False, "cuda:": False, "gpu": False, "CPU": False, "cuda:-1": False, "": False}
DTYPES = {"auto": True, "bf16": True, "fp16": True, "fp32": True, "int4": False, "float32": False, "": False}


def accepted(parser: argparse.ArgumentParser, check, argv: list[str]) -> bool:
    """Whether `check(parser, args)` takes `argv` (argparse's choices or the check's usage error)."""
    try:
        check(parser, parser.parse_args(argv))
    except SystemExit:
        return False
    return True


def serve_accepts(argv: list[str]) -> bool:
    return accepted(cli.build_parser(), cli.check_model_flags, argv)


def lsp_accepts(argv: list[str]) -> bool:
    return accepted(lsp_cli.build_parser(), check_local_worker_flags, argv)


def setting_accepted(name: str, value: object) -> bool:
    settings, problems = ServerSettings.from_options({name: value})
    assert (getattr(settings, name) == value) == (not problems)
    return not problems


@pytest.mark.parametrize("device, valid", DEVICES.items())
def test_a_device_is_taken_or_refused_alike_everywhere(device, valid, capsys):
    assert is_device(device) is valid
    assert serve_accepts(["--device", device]) is valid
    assert lsp_accepts(["--device", device]) is valid
    assert setting_accepted("device", device) is valid
    if not valid:
        assert "is not a device" in capsys.readouterr().err


@pytest.mark.parametrize("dtype, valid", DTYPES.items())
def test_a_dtype_is_taken_or_refused_alike_everywhere(dtype, valid):
    assert is_dtype(dtype) is valid
    assert serve_accepts(["--dtype", dtype]) is valid
    assert lsp_accepts(["--dtype", dtype]) is valid
    assert setting_accepted("dtype", dtype) is valid


@pytest.mark.parametrize("value", [3, 1.5, ["cpu"], {"device": "cpu"}])
def test_a_setting_that_is_no_string_is_no_device_nor_dtype(value):
    assert not is_device(value) and not is_dtype(value)
    assert not setting_accepted("device", value) and not setting_accepted("dtype", value)


@pytest.mark.parametrize("argv, complaint", [
    (["--max-context", "0"], "--max-context must be at least 1 token, got 0"),
    (["--prefix-cache-mb", "-1"], "--prefix-cache-mb must be 0 or more, got -1"),
])
def test_context_and_cache_limits_are_refused_in_the_same_words_by_both_command_lines(argv, complaint, capsys):
    assert not serve_accepts(argv)
    serve_error = capsys.readouterr().err
    assert not lsp_accepts(argv)
    assert complaint in serve_error and complaint in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["--max-context", "1"], ["--prefix-cache-mb", "0"]])
def test_the_least_context_and_cache_are_taken_by_both_command_lines(argv):
    assert serve_accepts(argv) and lsp_accepts(argv)

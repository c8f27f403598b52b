"""Hostile input at the upstream path (issue 43's 2, 6 and 10, issue 42's base URLs), with real
files and real processes (`tests/upstream_server.py` on a real socket, the language server and
`infill complete` as the user runs them):

- a key comes only from the command line or the `backend` setting, which a workspace cannot write;
  an arena backend (which it can) naming a key file is refused, and borrows the trusted key only for
  the trusted backend's own origin; a key file that is not one printable ASCII line is refused, saying why;
- an event stream that never breaks its line costs the language server a capped buffer, not memory
  without bound, and a gzip-encoded answer is refused, not inflated (identity is asked for);
- whatever an answer raises on (JSON nested too deep) is a bad answer with one message and a backoff,
  and the upstream's text and messages reach editors and terminals without control characters or
  lone surrogates;
- a base URL with or without `/v1` reaches the same endpoints, one naming an endpoint is refused.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types

from engine.wire.protocol import CompleteRequest
from infill.paths import REPO_ROOT
from lsp_server.settings import ServerSettings
from test_lsp_e2e import CURSOR, start_session
from test_upstream import Server, ask_three, fim_request
from test_upstream_lsp import messages_of, texts_at, until
from upstream.backend import MAX_LINE_BYTES, HttpBackend
from upstream.config import BackendSettingError, base_url, read_key, upstream_of
from upstream.dialects import UNPRINTABLE

PEAK_RSS_BYTES = 300 * 1024 * 1024  # issue 43's target for the language server under such a stream
KEY = "sk-hostile-test-5e1d"
BAD_KEYS = {  # a key file's bytes -> what the refusal says
    b"\xef\xbb\xbfsk-abc\n": "byte order mark",
    "sk-ab\u00e9c\n".encode(): "not ASCII",
    b"sk-a\x1bbc\n": "control character",
    b"sk-abc\nsk-def\n": "2 lines",
    b"sk abc\n": "space",
    b"\n\n": "empty",
    b"x" * 5000: "5000 bytes",
}


@pytest.fixture
def started(tmp_path):
    """Start `tests/upstream_server.py MODE` servers; all are stopped at the end."""
    servers: list[Server] = []

    def start(mode: str) -> Server:
        folder = tmp_path / f"server{len(servers)}"
        folder.mkdir()
        servers.append(Server(mode, folder))
        return servers[-1]
    yield start
    for server in servers:
        server.stop()


def private_file(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    path.chmod(0o600)
    return path


def complete_cli(tmp_path: Path, *flags: str) -> subprocess.CompletedProcess:
    source = tmp_path / "example.py"
    source.write_text("def add(a, b):\n    return \n")
    return subprocess.run([sys.executable, "-m", "cli", "complete", str(source), "--line", "1", "--col", "11",
                           *flags], check=False, cwd=REPO_ROOT, capture_output=True, timeout=120)


def test_a_key_file_that_is_not_one_printable_ascii_line_is_refused_saying_why(tmp_path):
    for index, (data, why) in enumerate(BAD_KEYS.items()):
        with pytest.raises(BackendSettingError, match=why) as refused:
            read_key(private_file(tmp_path / f"key{index}", data))
        assert "sk-" not in str(refused.value)
    os.mkfifo(tmp_path / "fifo", 0o600)
    with pytest.raises(BackendSettingError, match="not a regular file"):
        read_key(tmp_path / "fifo")
    assert read_key(private_file(tmp_path / "good", b"sk-abc\r\n")) == "sk-abc"


@pytest.mark.slow
def test_infill_complete_refuses_a_key_file_with_a_byte_order_mark_in_one_line(tmp_path, started):
    server = started("ok")
    key = private_file(tmp_path / "key", b"\xef\xbb\xbf" + KEY.encode() + b"\n")
    answer = complete_cli(tmp_path, "--backend", server.url, "--backend-key-file", str(key))
    assert answer.returncode == 2 and b"byte order mark" in answer.stderr
    assert len(answer.stderr.decode().strip().splitlines()) == 1 and server.requests() == []


@pytest.mark.slow
async def test_the_language_server_says_why_a_key_file_with_a_non_ascii_character_is_refused(tmp_path, started):
    server = started("ok")
    key = private_file(tmp_path / "key", KEY.replace("-", "\u2010").encode() + b"\n")
    session = await start_session(tmp_path, dict(os.environ), "--backend", server.url,
                                  options={"maxTokens": 8, "deadlineMs": 5000})
    shown = messages_of(session)
    session.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"infill": {"backend": {"url": server.url, "apiKeyFile": str(key)}}}))
    await until(lambda: shown, "the message")
    assert await texts_at(session, CURSOR) == []
    assert await session.end() == 0
    assert len(shown) == 1 and "not ASCII" in shown[0] and server.requests() == []
    assert "Traceback" not in session.log.read_text()


def test_an_arena_backend_may_not_name_a_key_file():
    backends = [{"name": "a", "backend": {"url": "http://127.0.0.1:1", "apiKeyFile": "~/.git-credentials"}},
                {"name": "b"}]
    settings, problems = ServerSettings.from_options({"arena": True, "arenaBackends": backends})
    assert settings.arena_backends is None and "apiKeyFile" in problems[0]
    with pytest.raises(BackendSettingError, match="may not name an apiKeyFile"):
        upstream_of(backends[0]["backend"], trusted=False)


@pytest.mark.slow
async def test_a_workspaces_arena_backends_never_carry_a_key_to_a_url_they_choose(tmp_path, started):
    """The key of `--backend-key-file` goes to its backend's origin, an arena side there included, and
    to no other; an arena backend naming a user's private file as its key is refused."""
    trusted, chosen = started("ok"), started("ok")
    key = private_file(tmp_path / "key", KEY.encode() + b"\n")
    credentials = private_file(tmp_path / "git-credentials", b"https://user:token@example.com\n")
    refused = [{"name": "steal", "backend": {"url": chosen.url, "apiKeyFile": str(credentials)}}, {"name": "own"}]
    sides = [{"name": "same", "backend": {"url": f"{trusted.url}/v1"}},
             {"name": "other", "backend": {"url": chosen.url}}]
    for index, backends in enumerate((refused, sides)):
        (tmp_path / str(index)).mkdir()
        options = {"maxTokens": 8, "deadlineMs": 5000, "arena": True, "arenaBackends": backends}
        session = await start_session(tmp_path / str(index), dict(os.environ), "--backend", trusted.url,
                                      "--backend-key-file", str(key), options=options)
        assert await texts_at(session, CURSOR) == ["pass"]
        assert await session.end() == 0
        if index == 0:
            assert chosen.requests() == [] and "apiKeyFile" in session.log.read_text()
    assert len(chosen.requests()) >= 1 and all(line.split()[1] == "False" for line in chosen.requests())
    assert len(trusted.requests()) >= 2 and all(line.split()[1] == "True" for line in trusted.requests())


@pytest.mark.slow
async def test_an_unterminated_event_stream_costs_the_language_server_a_capped_buffer(tmp_path, started):
    """The upstream writes one line of 384 MiB as fast as it is read; the server gives up at the line
    cap, so its peak memory stays far under issue 43's 300 MB (it held all of it before)."""
    server = started("unterminated")
    session = await start_session(tmp_path, dict(os.environ), "--backend", server.url,
                                  options={"maxTokens": 8, "deadlineMs": 20000})
    shown = messages_of(session)
    assert await texts_at(session, CURSOR) == []
    await until(lambda: shown, "the status message")
    status = Path(f"/proc/{session.process.pid}/status").read_text()
    peak_kib = int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")))
    assert await session.end() == 0
    assert peak_kib * 1024 < PEAK_RSS_BYTES, f"peak RSS {peak_kib} KiB"
    assert f"runs past {MAX_LINE_BYTES} bytes" in shown[0]


async def test_a_gzip_encoded_answer_is_refused_not_inflated_and_identity_was_asked_for(started):
    server = started("gzip")
    messages: list[str] = []
    backend = HttpBackend(upstream_of({"url": server.url}), messages.append)
    assert await ask_three(backend) == [[], [], []]
    await backend.aclose()
    assert len(messages) == 1 and "gzip-encoded" in messages[0]
    assert [line.split()[2] for line in server.requests()] == ["identity"]


@pytest.mark.parametrize("mode", ["deep", "error_escapes"])
async def test_an_answer_that_raises_or_carries_escapes_is_one_clean_message_and_a_backoff(started, mode):
    server = started(mode)
    messages: list[str] = []
    backend = HttpBackend(upstream_of({"url": server.url}), messages.append)
    assert await ask_three(backend) == [[], [], []]
    await backend.aclose()
    assert len(messages) == 1 and len(server.requests()) == 1 and backend.failures == 1
    assert not UNPRINTABLE.search(messages[0]) and "\n" not in messages[0] and "\t" not in messages[0]
    assert ("RecursionError" if mode == "deep" else "loaded second line") in messages[0]


async def test_an_upstreams_text_loses_control_characters_and_lone_surrogates(started):
    server = started("controls")
    backend = HttpBackend(upstream_of({"url": server.url}), lambda message: None)
    result = await backend.complete(fim_request())
    await backend.aclose()
    text = result.items[0].text
    assert text.startswith("pa") and text.endswith("ss\n") and not UNPRINTABLE.search(text)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["deep", "controls"])
def test_infill_complete_prints_a_hostile_answer_cleanly_or_fails_with_one_line(tmp_path, started, mode):
    server = started(mode)
    answer = complete_cli(tmp_path, "--backend", server.url)
    out, err = answer.stdout.decode(), answer.stderr.decode()
    assert "Traceback" not in err and not UNPRINTABLE.search(out + err)
    if mode == "deep":
        last = err.strip().splitlines()[-1]
        assert answer.returncode == 1 and last.startswith("infill: no completions") and "could not be read" in last
    else:
        assert answer.returncode == 0 and out.startswith("pa") and "ss" in out


def test_base_urls_as_users_write_them_and_urls_that_name_an_endpoint():
    for written in ("http://h:8000", "http://h:8000/", "http://h:8000/v1", "http://h:8000/v1/"):
        assert base_url(written) == "http://h:8000"
    assert base_url("https://api.example.com/inference/v1") == "https://api.example.com/inference"
    for wrong, why in (("http://h:8000/v1/completions", "names an endpoint"), ("http://h/infill", "names an endpoint"),
                       ("http://h:8000/v1?x=1", "no query"), ("http://h:8000/v1#top", "no query or fragment"),
                       ("http://user:pw@h/v1", "user or password"), ("http://h:port", "must be")):
        with pytest.raises(BackendSettingError, match=why) as refused:
            base_url(wrong)
        assert "pw" not in str(refused.value)
    with pytest.raises(BackendSettingError, match=r"http://h:8000 or http://h:8000/v1"):
        upstream_of({"url": "http://h:8000/v1/chat/completions", "allowInsecureHttp": True})


@pytest.mark.parametrize("kind", ["openai", "fim", "llama.cpp", "edit"])
async def test_every_kind_reaches_the_same_endpoint_with_or_without_v1(started, kind):
    server = started("ok")
    for url in (server.url, f"{server.url}/v1", f"{server.url}/v1/"):
        backend = HttpBackend(upstream_of({"url": url, "kind": kind}), lambda message: None)
        request = CompleteRequest("r", "fim", "def f():\n    ", "\n", max_tokens=16, deadline_ms=5000)
        assert [item.text for item in (await backend.complete(request)).items] == ["pass"]
        await backend.aclose()
    paths = [line.split()[0] for line in server.requests()]
    assert len(paths) == 3 and len(set(paths)) == 1 and not paths[0].startswith("/v1/v1")



def test_stream_lines_are_joined_across_reads_and_the_unended_one_is_capped():
    from upstream.backend import _complete_lines
    from upstream.dialects import BadAnswer

    pending = bytearray()
    reads = [b'data: {"choi', b'ces": []}\r\n\r\nda', b"ta: [DONE]", b"\n"]
    lines = [line for chunk in reads for line in _complete_lines(pending, chunk)]
    assert lines == [b'data: {"choices": []}\r', b"\r", b"data: [DONE]"] and pending == b""
    with pytest.raises(BadAnswer, match="no line break"):
        for _ in range(MAX_LINE_BYTES // 1024 + 1):
            _complete_lines(pending, b"x" * 1024)
    assert len(pending) <= MAX_LINE_BYTES + 1024


@pytest.mark.slow
@pytest.mark.parametrize("program", [["-m", "lsp_server"],
                                     ["-m", "cli", "complete", "x.py", "--line", "0", "--col", "0"]])
def test_a_backend_url_naming_an_endpoint_is_refused_at_start_with_the_form_to_use(program):
    answer = subprocess.run([sys.executable, *program, "--backend", "http://127.0.0.1:8012/v1/completions"],
                            check=False, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120,
                            stdin=subprocess.DEVNULL)
    assert answer.returncode == 2 and "Traceback" not in answer.stderr
    assert "names an endpoint" in answer.stderr and "http://127.0.0.1:8012/v1" in answer.stderr


async def test_an_edits_rewrite_keeps_the_control_characters_of_the_code_it_was_sent_and_loses_others(started):
    from engine.wire.protocol import Hole

    server = started("edit_escapes")
    backend = HttpBackend(upstream_of({"url": server.url, "kind": "edit"}), lambda message: None)
    regions = [Hole("single_line", 16, "    y = count\n"), Hole("single_line", 16, "    return count\n")]
    job = CompleteRequest("e", "edit", "def f(total):\n", "\n", max_tokens=64, deadline_ms=5000, holes=regions,
                          pieces=["\x0c\n"])
    result = await backend.complete(job)
    await backend.aclose()
    assert [item.text for item in result.items] == ["    y = total[2J\n", "    return total\n"]

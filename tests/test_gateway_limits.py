"""The gateway's limits in time: a keyless gateway caps the deadline it gives the worker at
`KEYLESS_MAX_DEADLINE_MS` whatever a request asks (a keyed one gives what is asked, up to the
protocol's cap), checked as the deadline the fake worker was given (`tests/fake_worker.py`'s
`# fake-deadline`); and a body that stops arriving is refused with a 408 once `BODY_TIMEOUT_S`
has passed, checked in process with that limit made short, while a body that arrives whole is
read. No assertion here is about how long anything took."""
from __future__ import annotations

import asyncio
import shutil
import tempfile

import httpx
import pytest

import fake_worker
from engine.launch import start_worker_process, stop_worker
from engine.wire.protocol import MAX_DEADLINE_MS
from gateway import app as gateway_app
from gateway.app import GatewayState, build_app
from gateway.guard import Rules
from gateway.main import KEYLESS_MAX_DEADLINE_MS
from gateway_procs import Gateway

WAIT_S = 30.0  # only a broken gateway takes this long
ASKED_MS = 50_000  # far over the keyless cap, within the protocol's
DEADLINE_PROMPT = {"input_prefix": fake_worker.DEADLINE_MARKER + "\nx = ", "input_suffix": "\n",
                   "t_max_predict_ms": ASKED_MS}


@pytest.fixture(scope="module")
def worker():
    folder = tempfile.mkdtemp(prefix="iw-")  # a short path: ipc:// caps it near 100 bytes
    address = f"ipc://{folder}/w.sock"
    process = start_worker_process(fake_worker.argv(address), address, timeout_s=30)
    yield address
    stop_worker(process)
    shutil.rmtree(folder, ignore_errors=True)


def deadline_given(url: str, headers: dict[str, str] | None = None) -> int:
    """The milliseconds the worker was given for an `/infill` that asks for ASKED_MS."""
    with httpx.Client(base_url=url, timeout=WAIT_S) as client:
        answer = client.post("/infill", json=DEADLINE_PROMPT, headers=headers or {})
    assert answer.status_code == 200, answer.text
    return int(answer.json()["content"])


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_keyless_gateway_caps_the_deadline_a_keyed_one_does_not(worker, tmp_path):
    assert ASKED_MS <= MAX_DEADLINE_MS
    keyless = Gateway(["--worker", worker])
    try:
        assert 0 < deadline_given(keyless.url) <= KEYLESS_MAX_DEADLINE_MS
    finally:
        keyless.stop()
    keys = tmp_path / "keys"
    keys.write_text("secret\n")
    keyed = Gateway(["--worker", worker, "--api-keys", str(keys)])
    try:
        assert KEYLESS_MAX_DEADLINE_MS < deadline_given(keyed.url, {"Authorization": "Bearer secret"}) <= ASKED_MS
    finally:
        keyed.stop()


class Connection:
    """One HTTP request to an ASGI app: its body sent in `chunks`, then, unless `whole`, nothing
    more ever (a client that stalls); what the app sends back is kept."""

    def __init__(self, chunks: list[bytes], whole: bool) -> None:
        self.chunks, self.whole = list(chunks), whole
        self.sent: list[dict] = []
        self.stalled = asyncio.Event()  # set once the app waits for a chunk that never comes

    async def receive(self) -> dict:
        if self.chunks:
            chunk = self.chunks.pop(0)
            return {"type": "http.request", "body": chunk, "more_body": bool(self.chunks) or not self.whole}
        if self.whole:
            return {"type": "http.disconnect"}
        self.stalled.set()
        await asyncio.Event().wait()  # the rest of the body never arrives
        raise AssertionError("unreachable")

    async def send(self, message: dict) -> None:
        self.sent.append(message)

    def status(self) -> int:
        return next(m["status"] for m in self.sent if m["type"] == "http.response.start")

    def body(self) -> bytes:
        return b"".join(m.get("body", b"") for m in self.sent if m["type"] == "http.response.body")


def post_scope(path: str, length: int) -> dict:
    headers = [(b"host", b"127.0.0.1"), (b"content-type", b"application/json"),
               (b"content-length", str(length).encode())]
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
            "scheme": "http", "path": path, "raw_path": path.encode(), "root_path": "", "query_string": b"",
            "headers": headers, "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8012)}


async def post(body: bytes, cut: int, whole: bool) -> Connection:
    """`body` posted to /v1/edit/completions of an app with no next-edit handler (a body read whole
    is a 501 there), sent as two chunks split at `cut`: the second never comes unless `whole`."""
    state = GatewayState(completer=None, pool=None, model_id="m", rules=Rules("127.0.0.1"))
    connection = Connection([body[:cut], body[cut:]] if whole else [body[:cut]], whole)
    await asyncio.wait_for(build_app(state)(post_scope("/v1/edit/completions", len(body)),
                                            connection.receive, connection.send), WAIT_S)
    return connection


BODY = b'{"messages": [{"role": "user", "content": "x"}]}'


def test_a_body_that_stops_arriving_is_a_408_and_one_that_arrives_is_read(monkeypatch):
    monkeypatch.setattr(gateway_app, "BODY_TIMEOUT_S", 0.05)  # the 10 s limit, made short
    stalled = asyncio.run(post(BODY, 10, whole=False))
    assert stalled.stalled.is_set() and stalled.status() == 408
    assert b'"code":"body_timeout"' in stalled.body().replace(b" ", b"")
    read = asyncio.run(post(BODY, 10, whole=True))
    assert not read.stalled.is_set() and read.status() == 501  # read whole: no next edits served here

"""The gateway against hostile and careless clients, as real processes over a fake worker: web
pages (a simple cross-origin POST, a foreign origin, a rebinding host), a client that leaves,
large bodies, bursts, slow-loris and idle connections, bad JSON, keys that are not ASCII.
Every outcome is waited for as an event (a reply, a count, a closed socket) with a generous bound;
nothing here asserts a duration."""
from __future__ import annotations

import asyncio
import json
import os
import socket
import tempfile
import threading
import time

import httpx
import pytest

import fake_worker
from engine.client.calls import MAX_IDLE_SOCKETS
from engine.launch import start_worker_process, stop_worker
from engine.client.sync_client import WorkerClient
from gateway.app import MAX_JSON_DEPTH, parse_json
from gateway.errors import ApiError
from gateway.guard import Rules, host_name, refusal
from gateway_procs import Gateway

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

ALLOWED = "http://localhost:3000"
HEADER_TIMEOUT_S = "1"
MAX_CONNECTIONS = 16
MAX_STREAMS = 8
BURST_CONNECTIONS = MAX_CONNECTIONS - 2  # all busy at once, and more than MAX_IDLE_SOCKETS and MAX_STREAMS
WAIT_S = 30.0  # only a broken gateway takes this long
LONG = "# fake-stream: 40 0.1\ndef f():\n"  # 40 steps of 0.1 s: 4 s of work unless cancelled


@pytest.fixture(scope="module")
def worker():
    folder = tempfile.mkdtemp(prefix="ih-")
    address = f"ipc://{folder}/w.sock"
    process = start_worker_process(fake_worker.argv(address), address, timeout_s=30)
    yield address
    stop_worker(process)


@pytest.fixture(scope="module")
def gateway(worker):
    server = Gateway(["--worker", worker, "--deadline-ms", "10000", "--max-deadline-ms", "10000",
                      "--allow-origin", ALLOWED, "--header-timeout", HEADER_TIMEOUT_S,
                      "--max-connections", str(MAX_CONNECTIONS), "--max-streams", str(MAX_STREAMS),
                      "--max-body-bytes", str(2 * 1024 * 1024)])
    yield server
    server.stop()


@pytest.fixture
def http(gateway):
    with httpx.Client(base_url=gateway.url, timeout=WAIT_S) as client:
        yield client


def worker_health(address: str):
    """The worker's Health reply, however long it takes (up to WAIT_S)."""
    with WorkerClient(address, timeout_s=WAIT_S) as probe:
        return probe.health()


def wait_until(condition, within_s: float = WAIT_S, what: str = "the condition") -> None:
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < within_s, f"{what} never held"
        time.sleep(0.05)


def metric(http: httpx.Client, name: str) -> float:
    for line in http.get("/metrics").text.splitlines():
        if line.startswith(f"infill_gateway_{name} "):
            return float(line.split()[1])
    raise AssertionError(f"no metric {name}")


def logged_errors(gateway: Gateway) -> set[str]:
    return {line for line in list(gateway.log) if "ERROR" in line or "Traceback" in line}


COMPLETION = {"prompt": "def f(x):\n    return ", "suffix": "\n"}


def test_pages_are_refused_before_the_worker_does_any_work(http, worker):
    served = worker_health(worker).served
    text_plain = http.post("/v1/completions", content=json.dumps(COMPLETION),
                           headers={"Content-Type": "text/plain;charset=UTF-8"})
    foreign = http.post("/v1/completions", json=COMPLETION, headers={"Origin": "http://evil.example"})
    rebound = http.post("/v1/completions", json=COMPLETION, headers={"Host": "evil.example:8012"})
    preflight = http.options("/v1/completions", headers={
        "Origin": "http://evil.example", "Access-Control-Request-Method": "POST"})
    assert [text_plain.status_code, foreign.status_code, rebound.status_code] == [415, 403, 421]
    assert preflight.status_code in (400, 403)
    assert "access-control-allow-origin" not in preflight.headers
    for answer in (text_plain, foreign, rebound):
        error = answer.json()["error"]
        assert set(error) == {"message", "type", "param", "code"} and error["type"] != "server_error"
    assert worker_health(worker).served == served  # nothing reached the worker
    good = http.post("/v1/completions", json=COMPLETION, headers={"Host": "localhost:8012"})
    assert good.status_code == 200 and good.json()["choices"][0]["text"]


def test_an_allowed_origin_gets_its_preflight_and_cors_headers(http):
    preflight = http.options("/v1/completions", headers={
        "Origin": ALLOWED, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type"})
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == ALLOWED
    answer = http.post("/v1/completions", json=COMPLETION, headers={"Origin": ALLOWED})
    assert answer.status_code == 200 and answer.headers["access-control-allow-origin"] == ALLOWED


def test_an_unstreamed_request_whose_client_leaves_is_cancelled_at_the_worker(http, gateway, worker):
    steps = worker_health(worker).steps
    gone = metric(http, "client_gone_total")
    body = json.dumps({"input_prefix": LONG, "input_suffix": "\n", "t_max_predict_ms": 10000}).encode()
    host, port = gateway.url.removeprefix("http://").rsplit(":", 1)
    client = socket.create_connection((host, int(port)))
    client.sendall(b"POST /infill HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                   b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    wait_until(lambda: worker_health(worker).live_requests == 1, what="the request reaching the worker")
    client.close()
    wait_until(lambda: worker_health(worker).live_requests == 0, what="the request ending")
    assert worker_health(worker).steps - steps < 40  # it did not decode to its end
    wait_until(lambda: metric(http, "client_gone_total") == gone + 1, what="the cancel being counted")


STREAMS = {"infill": ("/infill", {"input_prefix": LONG, "input_suffix": "\n", "stream": True}),
           "openai": ("/v1/completions", {"prompt": LONG, "suffix": "\n", "stream": True})}


def send_stream(url: str, route: str, body: dict) -> socket.socket:
    """A raw connection that has sent a streamed request (and reads nothing yet)."""
    raw = json.dumps(body).encode()
    host, port = url.removeprefix("http://").rsplit(":", 1)
    client = socket.create_connection((host, int(port)))
    client.sendall(f"POST {route} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                   f"Content-Length: {len(raw)}\r\n\r\n".encode() + raw)
    return client


@pytest.mark.parametrize("route, body", STREAMS.values(), ids=STREAMS)
def test_a_dropped_stream_is_cancelled_with_no_error_logged(http, gateway, worker, route, body):
    steps, errors = worker_health(worker).steps, logged_errors(gateway)
    client = send_stream(gateway.url, route, body)
    assert client.recv(4096).startswith(b"HTTP/1.1 200")
    client.close()
    wait_until(lambda: worker_health(worker).live_requests == 0, what="the stream's request ending")
    assert worker_health(worker).steps - steps < 40
    assert http.get("/health").status_code == 200  # and the log is written up to here
    assert logged_errors(gateway) <= errors


def test_dropped_streams_count_as_clients_gone(http, gateway, worker):
    """Each stream whose client leaves after its first bytes counts once in client_gone_total."""
    gone = metric(http, "client_gone_total")
    clients = [send_stream(gateway.url, *STREAMS[name]) for name in ("infill", "openai") * (MAX_STREAMS // 2 - 1)]
    for client in clients:
        assert client.recv(4096).startswith(b"HTTP/1.1 200")
        client.close()
    wait_until(lambda: metric(http, "client_gone_total") == gone + len(clients), what="every dropped stream counted")
    wait_until(lambda: worker_health(worker).live_requests == 0, what="the streams' requests ending")
    assert metric(http, "client_gone_total") == gone + len(clients)


ABUSERS, ROUNDS = 64, 5  # as the probe of issue 43: 64 clients at once, each round past the worker's intake


def test_abusive_stream_clients_leave_no_task_exception_unretrieved(worker):
    """Rounds of 64 clients that start streams and leave, some before the answer's first bytes:
    requests refused by the overloaded worker race their cancel, and no task's exception is ever
    left for asyncio to log."""
    server = Gateway(["--worker", worker, "--max-streams", str(ABUSERS), "--max-connections", str(2 * ABUSERS)])
    server.log = []  # the whole log, not its last lines
    try:
        def abuse(index: int) -> None:
            client = send_stream(server.url, *STREAMS[("infill", "openai")[index % 2]])
            if index % 3:
                client.recv(4096)
            client.close()

        for _ in range(ROUNDS):
            threads = [threading.Thread(target=abuse, args=(i,)) for i in range(ABUSERS)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        with httpx.Client(base_url=server.url, timeout=WAIT_S) as client:
            wait_until(lambda: metric(client, "live_streams") == 0, what="the streams ending")
            assert metric(client, "client_gone_total") > 0
        wait_until(lambda: worker_health(worker).live_requests == 0, what="the worker going idle")
    finally:
        server.stop()  # its exit collects every task left
    log = "".join(server.log)
    assert "never retrieved" not in log and "Traceback" not in log, log[-3000:]


BIG = {"prompt": "x = 1\n" * 170_000 + "def f(x):\n    return ", "suffix": "\n" + "y = 2\n" * 10_000}


def test_health_answers_while_a_megabyte_body_is_still_being_sent(http, gateway):
    """/health is answered between the two halves of a 1 MB body, and that request only after
    its second half: reading a body never holds the gateway's other requests."""
    raw = json.dumps(BIG).encode()
    assert len(raw) > 1_000_000
    host, port = gateway.url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port))) as client:
        client.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                       b"Content-Length: " + str(len(raw)).encode() + b"\r\n\r\n" + raw[:len(raw) // 2])
        health = http.get("/health")  # answered while the body's second half is still to come
        assert health.status_code in (200, 503) and health.json()  # answered, in llama.cpp's shape
        client.setblocking(False)
        with pytest.raises(BlockingIOError):
            client.recv(1)  # the big request has no answer yet: it waits for the rest of its body
        client.setblocking(True)
        client.settimeout(WAIT_S)
        client.sendall(raw[len(raw) // 2:])
        assert client.recv(4096).startswith(b"HTTP/1.1 200")


def test_megabyte_bodies_never_take_the_worker_down(http, gateway, worker):
    """Four 1 MB bodies at once are each answered, and every probe of the worker made meanwhile
    answers it is up, the same process throughout (its uptime only grows), however slowly."""
    answers, probes = [], []

    def post() -> None:
        with httpx.Client(base_url=gateway.url, timeout=WAIT_S) as client:
            answers.append(client.post("/v1/completions", json=BIG).status_code)

    threads = [threading.Thread(target=post) for _ in range(4)]
    for thread in threads:
        thread.start()
    while any(thread.is_alive() for thread in threads):
        probes.append(worker_health(worker))
    for thread in threads:
        thread.join()
    probes.append(worker_health(worker))
    assert answers == [200] * 4
    uptimes = [probe.uptime_s for probe in probes]
    assert len(probes) >= 2 and uptimes == sorted(uptimes)  # no restart: no probe found a new process


def fd_count(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def test_after_a_burst_the_worker_sockets_go_back_to_the_idle_pool(worker, tmp_path):
    """48 requests held at the worker at once take 48 worker sockets; once they are answered at
    most MAX_IDLE_SOCKETS stay (each is one or two descriptors: its socket and ZeroMQ's
    signaler). Keeping them all would leave about 70 more descriptors open."""
    server = Gateway(["--worker", worker, "--deadline-ms", "10000", "--max-deadline-ms", "10000"])
    gate = tmp_path / "gate"
    try:
        with httpx.Client(base_url=server.url, timeout=WAIT_S) as client:
            assert client.post("/v1/completions", json=COMPLETION).status_code == 200
        before = fd_count(server.process.pid)

        async def burst() -> list[int]:
            async with httpx.AsyncClient(base_url=server.url, timeout=WAIT_S,
                                         limits=httpx.Limits(max_connections=48)) as client:
                body = {"prompt": f"gate:{gate}\ndef f():\n", "suffix": "\n"}
                calls = [asyncio.ensure_future(client.post("/v1/completions", json=body))
                         for _ in range(48)]
                while worker_health(worker).live_requests < 48:  # all held by the gate
                    assert not any(call.done() for call in calls)
                    await asyncio.sleep(0.05)
                gate.touch()
                return [answer.status_code for answer in await asyncio.gather(*calls)]

        assert asyncio.run(asyncio.wait_for(burst(), WAIT_S)) == [200] * 48
        wait_until(lambda: fd_count(server.process.pid) <= before + 2 * MAX_IDLE_SOCKETS + 8,
                   what="the gateway's descriptors going back down")
    finally:
        gate.touch()
        server.stop()


def closed_by_peer(sock: socket.socket, within_s: float = WAIT_S) -> bool:
    sock.settimeout(within_s)
    try:
        while sock.recv(4096):
            pass
        return True
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def test_a_slow_loris_connection_is_closed_after_the_header_timeout(gateway):
    host, port = gateway.url.removeprefix("http://").rsplit(":", 1)
    silent = socket.create_connection((host, int(port)))
    slow = socket.create_connection((host, int(port)))
    slow.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    stop = threading.Event()

    def dribble() -> None:  # a header byte every 0.2 s, for ever
        while not stop.wait(0.2):
            try:
                slow.sendall(b"X")
            except OSError:
                return

    threading.Thread(target=dribble, daemon=True).start()
    try:
        assert closed_by_peer(silent) and closed_by_peer(slow)
    finally:
        stop.set()
        silent.close()
        slow.close()


def test_idle_connections_past_the_limit_never_keep_a_client_out(http, gateway):
    host, port = gateway.url.removeprefix("http://").rsplit(":", 1)
    idle = [socket.create_connection((host, int(port))) for _ in range(4 * MAX_CONNECTIONS)]
    try:
        for _ in range(3):  # each new client closes the oldest idle connection to get in
            with httpx.Client(base_url=gateway.url, timeout=WAIT_S) as client:
                assert client.post("/v1/completions", json=COMPLETION).status_code == 200
        assert fd_count(gateway.process.pid) < 200
    finally:
        for sock in idle:
            sock.close()
    refusals = [line for line in gateway.log if "connection" in line and "Traceback" not in line]
    assert refusals and not [line for line in gateway.log if "Traceback" in line]


def test_a_burst_of_streams_never_has_more_than_the_limit_live(gateway):
    async def burst() -> list[int]:
        async with httpx.AsyncClient(base_url=gateway.url, timeout=WAIT_S,
                                     limits=httpx.Limits(max_connections=BURST_CONNECTIONS)) as client:
            body = {"prompt": "# fake-stream: 4 0.2\ndef f():\n", "suffix": "\n", "stream": True}
            answers = await asyncio.gather(*(client.post("/v1/completions", json=body)
                                             for _ in range(64)))
            return [a.status_code for a in answers]

    statuses = asyncio.run(burst())
    assert set(statuses) <= {200, 429} and 200 in statuses
    with httpx.Client(base_url=gateway.url, timeout=WAIT_S) as client:
        assert 1 <= metric(client, "peak_streams") <= MAX_STREAMS
        assert metric(client, "live_streams") == 0


@pytest.mark.parametrize("route", ["/infill", "/v1/edit/completions", "/v1/completions"])
@pytest.mark.parametrize("raw", [b"[" * 100_000 + b"]" * 100_000,
                                 b'{"input_prefix": "\\ud800", "prompt": "\\udfff x", '
                                 b'"messages": [{"role": "user", "content": "\\ud83d"}]}'],
                         ids=["deep", "surrogates"])
def test_deep_nesting_and_lone_surrogates_are_a_400(http, route, raw):
    answer = http.post(route, content=raw, headers={"Content-Type": "application/json"})
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["code"] == "malformed_json"


def test_json_rules():
    assert parse_json(b'{"a": [[{"b": "x\\\\"}], "[[[["]}') == {"a": [[{"b": "x\\"}], "[[[["]}
    deep = b'{"a": ' + b"[" * MAX_JSON_DEPTH + b"]" * MAX_JSON_DEPTH + b"}"
    with pytest.raises(ApiError, match="deeper"):
        parse_json(deep)
    assert parse_json('{"k": "\\ud83d\\ude00 caf\u00e9"}'.encode()) == {"k": "\U0001F600 caf\u00e9"}


def test_host_rules():
    assert host_name("LocalHost:8012") == "localhost" and host_name("[::1]:80") == "::1"
    rules = Rules("127.0.0.1")
    scope = {"path": "/v1/completions", "method": "GET"}
    for host, status in [(b"127.0.0.1:1", None), (b"localhost", None), (b"[::1]:9", None),
                         (b"evil.example", 421), (b"127.0.0.1.evil.example:80", 421)]:
        refused = refusal(rules, {**scope, "headers": [(b"host", host)]})
        assert (refused and refused.status) == status


def test_a_key_that_is_not_ascii_is_matched_and_a_missing_key_file_logs_once(worker, tmp_path):
    keys = tmp_path / "keys"
    keys.write_text("# keys\nclé-ünï-42\n", encoding="utf-8")
    server = Gateway(["--worker", worker, "--api-keys", str(keys)])
    try:
        with httpx.Client(base_url=server.url, timeout=WAIT_S) as client:
            good = {"Authorization": "Bearer clé-ünï-42".encode()}
            assert client.post("/v1/completions", json=COMPLETION, headers=good).status_code == 200
            bad = {"Authorization": "Bearer cle-uni-42"}
            assert client.post("/v1/completions", json=COMPLETION, headers=bad).status_code == 401
            keys.unlink()
            for _ in range(5):  # the keys last read still hold
                assert client.post("/v1/completions", json=COMPLETION, headers=good).status_code == 200
            wait_until(lambda: any("cannot read the key file" in line for line in server.log))
    finally:
        server.stop()
    assert sum("cannot read the key file" in line for line in server.log) == 1

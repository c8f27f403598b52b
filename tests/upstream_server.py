"""A misbehaving model server for the upstream tests: `python tests/upstream_server.py MODE LOG`.

It listens on a free loopback port, writes `listening on http://127.0.0.1:PORT` to stderr, appends
one line per request to LOG (`PATH AUTHORIZATION-PRESENT ACCEPT-ENCODING`; never the key itself), and
answers every POST as MODE says: ok (a FIM answer `pass`), slow (after 30 s), 401, 429 (Retry-After: 1),
500, garbage (not JSON), redirect (302 elsewhere), huge (a 2 MiB body), endless (an event stream that
never ends), stream (`pass` in three chunks), no_text (a choice without text), error_200 (an error
object in a 200), long (a text far over any max_tokens), fenced (a chat answer in a Markdown fence),
unterminated (an event stream whose one line gets `UNTERMINATED_BYTES` long, as fast as it is read,
and then stays open), gzip (a gzip-encoded answer that inflates to 64 MiB), deep (JSON nested 100,000
deep), controls (a text with terminal escapes, control characters and a lone surrogate), error_escapes (an
error object whose message holds them), edit_escapes (a next edit's rewrite with escapes and a form feed).
"""
from __future__ import annotations

import gzip
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODE, LOG = sys.argv[1], sys.argv[2]
UNTERMINATED_BYTES = 384 << 20  # far over what a language server may hold (300 MB)
NESTING = 100_000
ESCAPES = "\x1b[2J\x1b]0;owned\x07\x9b31m\x00\x08\r"


def completion(text) -> bytes:
    return json.dumps({"object": "text_completion", "choices": [{"index": 0, "text": text}]}).encode()


ANSWERS = {
    "ok": (200, completion("pass")),
    "401": (401, b'{"error": {"message": "bad key"}}'),
    "429": (429, b'{"error": {"message": "slow down"}}'),
    "500": (500, b"oops"),
    "garbage": (200, b"<html>not json</html>"),
    "huge": (200, b'{"choices": [{"text": "' + b"x" * (2 << 20) + b'"}]}'),
    "no_text": (200, b'{"choices": [{"index": 0, "finish_reason": "stop"}]}'),
    "error_200": (200, b'{"error": {"message": "model overloaded"}}'),
    "long": (200, completion("x = 1\n" * 5000)),
    "fenced": (200, json.dumps({"choices": [{"message": {"role": "assistant",
                                                        "content": "```python\npass\n```"}}]}).encode()),
    "deep": (200, b'{"choices": ' + b"[" * NESTING + b"]" * NESTING + b"}"),
    "controls": (200, completion(f"pa{ESCAPES}ss\ud800\n")),
    "edit_escapes": (200, json.dumps({"choices": [{"message": {
        "role": "assistant", "content": "    y = total\x1b[2J\n\x0c\n    return total\x07\n"}}]}).encode()),
    "error_escapes": (200, json.dumps({"error": {"message": f"over{ESCAPES}loaded\nsecond line"}}).encode()),
}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args) -> None:
        return None

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        with open(LOG, "a") as log:
            encoding = (self.headers.get("Accept-Encoding") or "-").replace(" ", "")
            log.write(f"{self.path} {'Authorization' in self.headers} {encoding}\n")
        if MODE == "slow":
            time.sleep(30)
        if MODE == "redirect":
            self._send(302, b"", {"Location": "http://127.0.0.1:9/elsewhere"})
        elif MODE == "stream":
            self._send_head(200, {"Content-Type": "text/event-stream"})
            for piece in ("pa", "s", "s"):
                self.wfile.write(b"data: " + completion(piece) + b"\n\n")
                self.wfile.flush()
                time.sleep(0.05)
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            self.close_connection = True
        elif MODE == "endless":
            self._send_head(200, {"Content-Type": "text/event-stream"})
            while True:
                self.wfile.write(b": keep-alive\n\n")
                self.wfile.flush()
                time.sleep(0.05)
        elif MODE == "unterminated":
            self._send_unterminated()
        elif MODE == "gzip":
            body = gzip.compress(b'{"choices": [{"text": "' + b" " * (64 << 20) + b'"}]}', compresslevel=1)
            self._send(200, body, {"Content-Encoding": "gzip"})
        else:
            status, body = ANSWERS[MODE]
            self._send(status, body, {"Retry-After": "1"} if status == 429 else {})

    def _send_unterminated(self) -> None:
        self._send_head(200, {"Content-Type": "text/event-stream"})
        piece = b"x" * (1 << 16)
        try:
            self.wfile.write(b'data: {"choices": [{"text": "')
            for _ in range(UNTERMINATED_BYTES // len(piece)):
                self.wfile.write(piece)
            self.wfile.flush()
        except OSError:  # the client gave up: what this mode is for
            return
        time.sleep(60)

    def _send_head(self, status: int, headers: dict) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()

    def _send(self, status: int, body: bytes, headers: dict) -> None:
        self._send_head(status, {"Content-Type": "application/json", "Content-Length": str(len(body)),
                                 **headers})
        self.wfile.write(body)


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    sys.stderr.write(f"listening on http://127.0.0.1:{server.server_address[1]}\n")
    sys.stderr.flush()
    server.serve_forever()

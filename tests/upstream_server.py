"""A misbehaving model server for the upstream tests: `python tests/upstream_server.py MODE LOG`.

It listens on a free loopback port, writes `listening on http://127.0.0.1:PORT` to stderr, appends
one line per request to LOG (`PATH AUTHORIZATION-PRESENT`; never the key itself), and answers every
POST as MODE says: ok (a FIM answer `pass`), slow (after 30 s), 401, 429 (Retry-After: 1), 500,
garbage (not JSON), redirect (302 elsewhere), huge (a 2 MiB body), endless (an event stream that
never ends), stream (`pass` in three chunks), no_text (a choice without text), error_200 (an error object in a 200), long (a text
far over any max_tokens), fenced (a chat answer in a Markdown fence).
"""
from __future__ import annotations

import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODE, LOG = sys.argv[1], sys.argv[2]


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
}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args) -> None:
        return None

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        with open(LOG, "a") as log:
            log.write(f"{self.path} {'Authorization' in self.headers}\n")
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
        else:
            status, body = ANSWERS[MODE]
            self._send(status, body, {"Retry-After": "1"} if status == 429 else {})

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

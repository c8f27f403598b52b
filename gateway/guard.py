"""The checks every request passes before a route sees it, and the counters of its whole answer.

Browsers are the hostile clients of a loopback server: any web page can send a request to
127.0.0.1, and a DNS-rebinding page can read the answer. So, in this order:
- a `Host` header that names neither the bound address nor loopback (`localhost`, `127.0.0.1`,
  `[::1]`) is a 421: the page reached us through a name of its own (a gateway with API keys
  takes any host, as users reach a shared one by its names; a page cannot send a key it does
  not know);
- a request with an `Origin` header (only browsers send one) is a 403 unless the origin is on the
  allow-list the user gave (`--allow-origin`); allowed origins get CORS headers
  (`build_app` adds Starlette's CORS middleware for them);
- without a valid bearer key, when the gateway has keys, a 401 (all routes but `/health`);
- a POST whose `Content-Type` is not `application/json` is a 415: every real client sends it,
  and a browser can only send another type without a CORS preflight, which the origin rule refuses.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from gateway.api_keys import KeyFile, bearer_token
from gateway.errors import ApiError, error_response
from gateway.metrics import Metrics

LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
OPEN_ROUTES = ("/health",)  # answered without a key, as llama.cpp's server does
JSON_TYPE = "application/json"


@dataclass(frozen=True, slots=True)
class Rules:
    bound_host: str  # the address the gateway listens on
    origins: frozenset[str] = field(default_factory=frozenset)  # browser origins allowed in
    keys: KeyFile | None = None


def host_name(header: str) -> str:
    """The host of a `Host` header, without its port and IPv6 brackets, lowercased."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:].partition("]")[0]
    return header.rpartition(":")[0] if header.count(":") == 1 else header


def host_refusal(rules: Rules, host: str | None) -> ApiError | None:
    """The 421 for a `Host` this gateway is not reached by (no header: a non-browser client)."""
    if host is None or rules.keys is not None:
        return None
    name = host_name(host)
    if name in LOOPBACK_HOSTS or name == rules.bound_host.lower():
        return None
    return ApiError(421, "this gateway answers only requests addressed to "
                         f"{rules.bound_host} or localhost", None, "misdirected_request")


def origin_refusal(rules: Rules, origin: str | None) -> ApiError | None:
    """The 403 for a browser page whose origin the user did not allow."""
    if origin is None or origin in rules.origins:
        return None
    return ApiError(403, "requests from web pages are refused; start the gateway with "
                         "--allow-origin ORIGIN to let a page of that origin in", None,
                    "origin_not_allowed")


def key_refusal(rules: Rules, path: str, authorization: bytes | None) -> ApiError | None:
    """The 401 for a request without a valid key, when the gateway has keys. The header's bytes
    are read as UTF-8, as clients send a key that is not ASCII."""
    if rules.keys is None or path in OPEN_ROUTES:
        return None
    token = bearer_token(None if authorization is None else authorization.decode("utf-8", "replace"))
    if token is None:
        return ApiError(401, "a valid API key is required: send `Authorization: Bearer KEY`",
                        None, "missing_api_key")
    if not rules.keys.allows(token):
        return ApiError(401, "the API key is not valid", None, "invalid_api_key")
    return None


def type_refusal(method: str, content_type: str | None) -> ApiError | None:
    """The 415 for a POST body that is not declared as JSON."""
    if method != "POST":
        return None
    declared = (content_type or "").partition(";")[0].strip().lower()
    if declared == JSON_TYPE:
        return None
    return ApiError(415, f"the body must be sent as Content-Type: {JSON_TYPE}, got "
                         f"{declared[:60] or 'none'}", None, "unsupported_media_type")


def refusal(rules: Rules, scope: dict) -> ApiError | None:
    """The first rule of the module that `scope`'s request breaks, or None."""
    headers = dict(scope["headers"])

    def text(name: bytes) -> str | None:
        value = headers.get(name)
        return None if value is None else value.decode("latin-1")

    return (host_refusal(rules, text(b"host")) or origin_refusal(rules, text(b"origin"))
            or key_refusal(rules, scope["path"], headers.get(b"authorization"))
            or type_refusal(scope["method"], text(b"content-type")))


class Guard:
    """ASGI middleware: the rules above, then the counters of the whole answer (a stream's too)."""

    def __init__(self, app, rules: Rules, metrics: Metrics, routes: tuple[str, ...]) -> None:
        self.app, self.rules, self.metrics, self.routes = app, rules, metrics, routes

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started, path = time.monotonic(), scope["path"]
        route = path if path in self.routes else "other"
        status = 500

        async def counted_send(message: dict) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            refused = refusal(self.rules, scope)
            if refused is not None:
                await error_response(refused)(scope, receive, counted_send)
                return
            await self.app(scope, receive, counted_send)
        finally:
            self.metrics.observe(route, status, time.monotonic() - started)

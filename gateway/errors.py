"""Errors in OpenAI's shape, `{"error": {"message", "type", "param", "code"}}`, with their statuses.

Every failure a route meets is an `ApiError`, answered by `error_response`: 400 bad values or
malformed JSON, 422 wrong types, 401 a missing or wrong key, 403 a browser origin not allowed, 404
an unknown model or route, 408 a body that came too slowly, 413 a body too large, 415 a body not
sent as JSON, 421 a host this gateway is not, 429 overloaded workers or too many streams, 501 what
is not served, 503 no worker.
Messages say what to change.
"""
from __future__ import annotations

from fastapi.responses import JSONResponse

from engine.client.calls import WorkerError, WorkerTimeout
from engine.client.pool import WorkerUnavailable
from engine.wire.protocol import ErrorCode

TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
         404: "invalid_request_error", 408: "invalid_request_error", 413: "invalid_request_error",
         415: "invalid_request_error", 421: "invalid_request_error", 422: "invalid_request_error",
         429: "rate_limit_error", 501: "not_implemented_error", 503: "service_unavailable_error",
         500: "server_error"}


class ApiError(Exception):
    """One request's failure: its HTTP status, a message, the field at fault and a short code."""

    def __init__(self, status: int, message: str, param: str | None = None,
                 code: str | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.param, self.code = status, message, param, code

    def body(self) -> dict:
        return {"error": {"message": self.message, "type": TYPES.get(self.status, "server_error"),
                          "param": self.param, "code": self.code}}


def bad_value(param: str, problem: str) -> ApiError:
    return ApiError(400, f"'{param}' {problem}", param, "invalid_value")


def wrong_type(param: str, wanted: str, value: object) -> ApiError:
    return ApiError(422, f"'{param}' must be {wanted}, got {type(value).__name__}", param,
                    "invalid_type")


def error_response(error: ApiError) -> JSONResponse:
    headers = {"WWW-Authenticate": "Bearer"} if error.status == 401 else None
    return JSONResponse(error.body(), status_code=error.status, headers=headers)


def worker_failure(exc: Exception) -> ApiError:
    """The API error for a failed worker call."""
    if isinstance(exc, WorkerUnavailable):
        return ApiError(503, f"no worker is available: {exc.message}", None, "no_worker")
    if isinstance(exc, WorkerTimeout):
        return ApiError(503, f"the workers did not answer in time: {exc}", None, "timeout")
    if isinstance(exc, WorkerError) and exc.code == ErrorCode.OVERLOADED:
        return ApiError(429, f"the workers are overloaded; retry shortly ({exc.message})", None,
                        "overloaded")
    if isinstance(exc, WorkerError) and exc.code == ErrorCode.SHUTTING_DOWN:
        return ApiError(503, exc.message, None, "shutting_down")
    if isinstance(exc, WorkerError) and exc.code in (ErrorCode.INVALID_FIELD, ErrorCode.TOO_LARGE):
        return ApiError(400, exc.message, None, exc.code)
    return ApiError(500, f"the completion failed: {exc}", None, "internal")

"""Logging for the language server and the one-shot CLI: stderr or a file, never stdout.

On stdio, stdout carries the LSP messages, so a single stray line there breaks the client. Each
log line names the request it belongs to: handlers set `request_id` (a context variable, so it
follows the handler's task and the threads it starts) and a filter copies it into the record.
"""
from __future__ import annotations

import contextvars
import logging
import sys
from pathlib import Path

request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"


class RequestIdFilter(logging.Filter):
    """Adds the current request id (or "-") to every record as `request_id`."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id.get()
        return True


def configure_logging(log_file: Path | None = None, level: int = logging.INFO) -> None:
    """Send the root logger's records to `log_file`, or to stderr when there is none."""
    if log_file is None:
        handler: logging.Handler = logging.StreamHandler(sys.stderr)
    else:
        handler = logging.FileHandler(log_file, encoding="utf-8")
    handler.addFilter(RequestIdFilter())
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)

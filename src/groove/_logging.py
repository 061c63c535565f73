"""Logging set-up: always stderr, level from ``GROOVE_LOG`` (default ``info``).

stdout belongs to results (and to MCP frames under ``serve`` on stdio), so no
handler here ever writes to it.
"""

from __future__ import annotations

import logging
import os
import sys

_LEVELS = {"debug", "info", "warning", "error", "critical"}
#: Loggers of the libraries groove starts (HTTP server, MCP SDK, HTTP client):
#: GROOVE_LOG applies to them too, not only to groove's own.
THIRD_PARTY_LOGGERS = ("uvicorn", "uvicorn.error", "uvicorn.access", "mcp", "starlette",
                       "sse_starlette", "httpx", "httpcore", "watchfiles")


class _CurrentStderr(logging.StreamHandler):  # type: ignore[type-arg,unused-ignore]
    """A stream handler that writes to whatever ``sys.stderr`` is *now*.

    A handler bound to the stderr of the first call would keep writing to a
    stream that an embedding program (or a test runner) has since replaced.
    """

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property  # type: ignore[override,unused-ignore]
    def stream(self) -> object:
        return sys.stderr

    @stream.setter
    def stream(self, _value: object) -> None:
        pass


def configure_logging(level: str | None = None) -> None:
    """Route the ``groove`` loggers to stderr at the level GROOVE_LOG asks for."""
    name = (level or os.environ.get("GROOVE_LOG") or "info").strip().lower()
    if name not in _LEVELS:
        name = "info"
    logging.getLogger().setLevel(name.upper())
    for other in THIRD_PARTY_LOGGERS:
        logging.getLogger(other).setLevel(name.upper())
    root = logging.getLogger("groove")
    root.setLevel(name.upper())
    if not any(getattr(h, "_groove", False) for h in root.handlers):
        handler = _CurrentStderr()
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        handler._groove = True  # type: ignore[attr-defined]
        root.addHandler(handler)
    # Our handler is the one that prints; the MCP SDK installs its own on the
    # root logger, and propagating would print every line twice.
    root.propagate = False

"""Logging set-up: always stderr, level from ``GROOVE_LOG`` (default ``note``).

stdout belongs to results (and to MCP frames under ``serve`` on stdio), so no
handler here ever writes to it.

The default is quiet: warnings, errors and *notes* (:data:`NOTE`, the few
lines a user running a command wants to see: the address a server listens
on, a model being downloaded, what the watcher re-indexed). Routine details
(which configuration file was read, an index reopened) are ``info`` and only
shown with ``GROOVE_LOG=info`` or ``debug``.
"""

from __future__ import annotations

import logging
import os
import sys

#: Between INFO and WARNING: shown by default (:func:`note` logs at it).
NOTE = 25
logging.addLevelName(NOTE, "NOTE")
_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "note": NOTE,
           "warning": logging.WARNING, "error": logging.ERROR, "critical": logging.CRITICAL}
#: The level when GROOVE_LOG is unset (or not one of the names above).
DEFAULT_LEVEL = "note"
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
    name = (level or os.environ.get("GROOVE_LOG") or DEFAULT_LEVEL).strip().lower()
    number = _LEVELS.get(name, _LEVELS[DEFAULT_LEVEL])
    logging.getLogger().setLevel(number)
    for other in THIRD_PARTY_LOGGERS:
        logging.getLogger(other).setLevel(number)
    root = logging.getLogger("groove")
    root.setLevel(number)
    if not any(getattr(h, "_groove", False) for h in root.handlers):
        handler = _CurrentStderr()
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        handler._groove = True  # type: ignore[attr-defined]
        root.addHandler(handler)
    # Our handler is the one that prints; the MCP SDK installs its own on the
    # root logger, and propagating would print every line twice.
    root.propagate = False


def note(logger: logging.Logger, message: str, *args: object) -> None:
    """Log ``message`` at :data:`NOTE`: shown at the default level, unlike ``info``."""
    logger.log(NOTE, message, *args)

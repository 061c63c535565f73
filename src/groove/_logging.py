"""Logging set-up: always stderr, level from ``GROOVE_LOG`` (default ``note``).

GrooveSeek's ``RUST_LOG`` is read when ``GROOVE_LOG`` is not set
(:func:`level_from_rust_log`), with one note saying so.

stdout belongs to results (and to MCP frames under ``serve`` on stdio), so no
handler here ever writes to it.

Log messages carry text from outside (stdin lines, file names, server
answers): :class:`_EscapingFormatter` writes control characters other than
newline and tab as backslash escapes, so no message can move the cursor,
rewrite a line or change the terminal's colours.

The default is quiet: warnings, errors and *notes* (:data:`NOTE`, the few
lines a user running a command wants to see: the address a server listens
on, a model being downloaded, what the watcher re-indexed). Routine details
(which configuration file was read, an index reopened) are ``info`` and only
shown with ``GROOVE_LOG=info`` or ``debug``.
"""

from __future__ import annotations

import logging
import os
import re
import sys

#: Between INFO and WARNING: shown by default (:func:`note` logs at it).
NOTE = 25
logging.addLevelName(NOTE, "NOTE")
_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "note": NOTE,
           "warning": logging.WARNING, "error": logging.ERROR, "critical": logging.CRITICAL}
#: The level when GROOVE_LOG is unset (or not one of the names above: then one warning).
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


#: C0 controls except tab and newline, DEL, and the C1 controls.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
#: Every control character, tab and newline included: what a name printed inside a line
#: must not hold.
ANY_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def escape_controls(text: str, *, one_line: bool = False) -> str:
    """``text`` with control characters (not tab or newline) written as escapes; with
    ``one_line``, tab, newline and carriage return too (a value printed inside a line,
    which must not start a line of its own)."""
    pattern = ANY_CONTROL if one_line else _CONTROL
    return pattern.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)



class _EscapingFormatter(logging.Formatter):
    """The usual formatter, with :func:`escape_controls` applied to the message."""

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 - logging's name
        return escape_controls(super().formatMessage(record))


#: RUST_LOG level names -> groove's (``trace`` has no finer groove level; ``off`` keeps errors).
_RUST_LEVELS = {"trace": "debug", "debug": "debug", "info": "info", "warn": "warning",
                "error": "error", "off": "critical"}
#: RUST_LOG targets that mean "this program" (GrooveSeek's crate, or groove).
_OWN_TARGETS = ("grooveseek", "groove")
_noted: set[str] = set()


def level_from_rust_log(value: str) -> str | None:
    """The level a GrooveSeek ``RUST_LOG`` asks of this program, or None if it names none.

    ``grooveseek=debug`` (or ``groove=debug``) wins over a bare default level
    (``debug``, ``info,hyper=warn``); other crates' targets are ignored.
    """
    default = own = None
    for directive in value.split(","):
        target, eq, level = directive.strip().partition("=")
        if not eq:
            target, level = "", target
        mapped = _RUST_LEVELS.get(level.strip().lower())
        if mapped is None:
            continue
        if not target:
            default = mapped
        elif target.strip().split("::")[0] in _OWN_TARGETS:
            own = mapped
    return own or default


def configure_logging(level: str | None = None) -> None:
    """Route the ``groove`` loggers to stderr at the level GROOVE_LOG asks for."""
    rust_log = os.environ.get("RUST_LOG", "")
    from_rust = None
    if level is None and not os.environ.get("GROOVE_LOG") and rust_log.strip():
        from_rust = level_from_rust_log(rust_log)
    name = (level or os.environ.get("GROOVE_LOG") or from_rust or DEFAULT_LEVEL).strip().lower()
    number = _LEVELS.get(name, _LEVELS[DEFAULT_LEVEL])
    logging.getLogger().setLevel(number)
    for other in THIRD_PARTY_LOGGERS:
        logging.getLogger(other).setLevel(number)
    root = logging.getLogger("groove")
    root.setLevel(number)
    if not any(getattr(h, "_groove", False) for h in root.handlers):
        handler = _CurrentStderr()
        handler.setFormatter(_EscapingFormatter("%(levelname)s %(name)s: %(message)s"))
        handler._groove = True  # type: ignore[attr-defined]
        root.addHandler(handler)
    # Our handler is the one that prints; the MCP SDK installs its own on the
    # root logger, and propagating would print every line twice.
    root.propagate = False
    if name not in _LEVELS and f"GROOVE_LOG={name}" not in _noted:
        _noted.add(f"GROOVE_LOG={name}")
        root.warning("GROOVE_LOG=%s is not a level; accepted: %s (using %s)",
                     name, ", ".join(_LEVELS), DEFAULT_LEVEL)
    if from_rust is not None and rust_log not in _noted:
        _noted.add(rust_log)
        print(f"note: RUST_LOG={rust_log} is GrooveSeek's setting; read as GROOVE_LOG="
              f"{from_rust} (set GROOVE_LOG instead)", file=sys.stderr)


def note(logger: logging.Logger, message: str, *args: object) -> None:
    """Log ``message`` at :data:`NOTE`: shown at the default level, unlike ``info``."""
    logger.log(NOTE, message, *args)

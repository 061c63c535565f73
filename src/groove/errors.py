"""The exceptions groove raises on purpose.

Every error a user or client can trigger is a :class:`GrooveError` with a
message that names what was wrong and what is accepted. The CLI maps them to
exit codes, the MCP server to tool errors; anything else is a bug and is
logged, never shown as a traceback to a client.
"""

from __future__ import annotations

from collections.abc import Iterable


def did_you_mean(given: str, accepted: Iterable[str]) -> str:
    """`` (did you mean NAME?)`` when ``given`` looks like a misspelling of one of the
    ``accepted`` names (``modle``, ``limt``), else nothing: for a refusal's message."""
    import difflib  # only a refusal needs it: not every process's start-up

    close = difflib.get_close_matches(given, list(accepted), n=1)
    return f" (did you mean {close[0]}?)" if close else ""


class GrooveError(Exception):
    """Base class: a message meant for a person or a model to act on."""

    exit_code = 2


class ConfigError(GrooveError):
    """groove.toml (or a CLI override) is missing, malformed or out of range."""


class SchemaError(GrooveError):
    """groove-schema.toml is unreadable or asks for something validate cannot check."""


class InvalidArgument(GrooveError):
    """A request argument is outside its accepted range (checked before any model loads)."""


class NoIndexError(GrooveError):
    """There is no index at the configured db path."""


class IndexMismatchError(GrooveError):
    """The index was built with another model / dimension / schema than requested."""


class CorruptIndexError(GrooveError):
    """The index file is damaged; the message names the file and the recovering command."""


class FullTextDamaged(CorruptIndexError):
    """The full-text folder cannot be used as it is (damaged, truncated, missing, holding a
    planted FIFO or link): derived data, rebuilt from the database."""


class ModelLoadError(GrooveError):
    """An embedding or reranking model could not be loaded (e.g. download failed)."""


class InputRejected(ModelLoadError):
    """A remote embedder refused one input (HTTP 400, 413 or 422): sending it again cannot
    help, but the rest of the knowledge base is not affected."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class PathRefused(GrooveError):
    """A path argument escapes kb_path, is a link, or names an unservable file."""


class NotFound(GrooveError):
    """A document or resource that was asked for does not exist in the index."""


class Busy(GrooveError):
    """An exclusive operation (e.g. rebuild_index) is already running."""


class UnsafeFile(GrooveError):
    """A file groove keeps beside the index is a link, a directory, a FIFO or not writable."""

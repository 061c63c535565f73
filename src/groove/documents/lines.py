"""Line windows and byte caps on a document's text (docs/mcp.md, 'get_document').

Two rules, each written once and shared by ``get_document``, ``multi_get``
and ``groove get``:

* **A line window** picks lines ``first..last`` (1-based, inclusive) of a
  text. Lines are what an editor numbers: the text split at ``\\n``, a
  final newline ending the last line rather than starting an empty one. A
  location may be written into the path itself, ``guides/setup.md:120`` or
  ``guides/setup.md:120-140`` (the ``path:line`` a code hit or ``groove
  search --format md`` shows); a ``:`` can never be part of an indexed name
  (docs/indexing.md, 'Names that cannot travel'), so the spelling is never
  ambiguous.
* **A byte cap** keeps the longest prefix of a text that fits in a number of
  UTF-8 bytes, ending at a line end when one fits and never inside a
  character, so what is returned is always exactly the file's first lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from groove.errors import InvalidArgument

#: ``path:120`` or ``path:120-140`` at the end of a path argument.
_LOCATION = re.compile(r"(?P<path>.+):(?P<first>[0-9]+)(?:-(?P<last>[0-9]+))?", re.DOTALL)


def split_location(path: str) -> tuple[str, int | None, int | None]:
    """``"a.md:120-140"`` -> ``("a.md", 120, 140)``; a path without a location is returned as is.

    Line numbers are 1-based; ``0`` is refused (no line 0), and so is a
    range that ends before it starts.
    """
    match = _LOCATION.fullmatch(path) if isinstance(path, str) else None
    if match is None:
        return path, None, None
    first = int(match["first"])
    last = int(match["last"]) if match["last"] is not None else None
    if first < 1:
        raise InvalidArgument(f"path {path!r}: there is no line 0; accepted: path:LINE or "
                              "path:FIRST-LAST with lines counted from 1")
    if last is not None and last < first:
        raise InvalidArgument(f"path {path!r}: the range ends before it starts; accepted: "
                              "path:FIRST-LAST with FIRST <= LAST")
    return match["path"], first, last


def text_lines(text: str) -> list[str]:
    """The text's lines without their ``\\n``; a final newline adds no empty line."""
    if not text:
        return []
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines


@dataclass(frozen=True)
class LineWindow:
    """Lines ``first..last`` of a text (``text`` joins them with ``\\n``) out of ``total``."""

    text: str
    first: int
    last: int
    total: int


def line_window(text: str, first: int | None, last: int | None, max_lines: int | None = None,
                *, path: str = "the document") -> LineWindow:
    """The window ``first..last`` (defaults: 1 and the last line), at most ``max_lines`` long.

    ``last`` past the end means "to the end". A window that starts past the
    end, or ends before it starts, is refused with the document's line count
    so the caller can ask again correctly.
    """
    lines = text_lines(text)
    if first is None and last is None and max_lines is None:  # the whole text, verbatim
        return LineWindow(text, 1 if lines else 0, len(lines), len(lines))
    start = 1 if first is None else first
    if last is not None and last < start:
        raise InvalidArgument(f"line_end: {last} is before line_start {start}; accepted: a "
                              "line number >= line_start")
    if start > len(lines):
        if not lines:
            raise InvalidArgument(f"line_start: {start} is past the end of {path}, which has "
                                  "no lines (it is empty)")
        raise InvalidArgument(f"line_start: {start} is past the end of {path} "
                              f"({len(lines)} lines); accepted: 1..{len(lines)}")
    end = len(lines) if last is None else min(last, len(lines))
    if max_lines is not None:
        end = min(end, start + max_lines - 1)
    if not lines:  # an empty document, asked for as a whole
        return LineWindow("", 0, 0, 0)
    return LineWindow("\n".join(lines[start - 1:end]), start, end, len(lines))


def cut_to_bytes(text: str, max_bytes: int) -> str:
    """The longest prefix of ``text`` within ``max_bytes`` UTF-8 bytes.

    It ends just after the last ``\\n`` that fits, so only whole lines are
    kept; only when not even the first line fits is it cut inside that line,
    and then on a character boundary. ``text`` itself when it fits.
    """
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return text
    head = data[:max_bytes]
    newline = head.rfind(b"\n")
    if newline >= 0:
        return head[:newline + 1].decode("utf-8", "surrogatepass")
    while head:  # drop the bytes of a character the cap split (at most 3)
        try:
            return head.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            head = head[:-1]
    return ""


def utf8_size(text: str) -> int:
    """Bytes of ``text`` in UTF-8 (what every cap counts)."""
    return len(text.encode("utf-8", "surrogatepass"))

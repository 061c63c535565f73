"""Fenced code blocks in Markdown (CommonMark's rule), shared by the section parser
(a ``#`` inside a fence is not a heading) and the link finder (a ``[[…]]`` inside
one is not a link)."""

from __future__ import annotations

import re

_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_FENCE_CLOSE = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t]*$")

#: An open fenced code block: its character and the length of its opening run.
Fence = tuple[str, int]


def fence_opened(line: str) -> Fence | None:
    """The fence ``line`` opens (CommonMark: three or more backticks or tildes, a backtick
    fence's info string holding no backtick), or None."""
    opened = _FENCE_OPEN.match(line)
    if opened is None or (opened.group(1)[0] == "`" and "`" in opened.group(2)):
        return None
    return opened.group(1)[0], len(opened.group(1))


def fence_closed(line: str, fence: Fence) -> bool:
    """Whether ``line`` closes ``fence`` (the same character, a run at least as long)."""
    close = _FENCE_CLOSE.match(line)
    return close is not None and close.group(1)[0] == fence[0] and len(close.group(1)) >= fence[1]

"""A bounded look at how deeply a source file nests, taken before tree-sitter sees it.

tree-sitter grammars are C code, and some crash the whole process on a
pathologically nested file: tree-sitter-python's external scanner overflows
its state buffer on about 550 nested indented blocks (a 0.5 MB file of nested
``def``s ending in a string literal dies with SIGSEGV). Nothing in Python can
catch that, and a knowledge base is untrusted input, so a file whose
indentation or bracket nesting is deeper than :data:`MAX_NESTING` is never
given to a parser: it is chunked by lines (``parse:too-deep``), every line
still indexed.

Both measures are upper bounds of what a grammar sees (brackets inside strings
and comments count too), and both cost one pass over the bytes: the
indentation stack is only walked when some line is indented at least
:data:`MAX_NESTING` columns, since each level needs one more column.
"""

from __future__ import annotations

import re

import numpy as np

#: Deepest indentation stack or bracket nesting handed to a grammar. Far above what
#: real code uses, far below where tree-sitter-python crashes (~550).
MAX_NESTING = 200

_INDENT = re.compile(rb"^[ \t]+(?=[^ \t\r\n])", re.MULTILINE)
_OPEN = np.zeros(256, dtype=np.int8)
_OPEN[list(b"([{")] = 1
_OPEN[list(b")]}")] = -1


def bracket_depth(source: bytes) -> int:
    """The deepest run of unclosed ``( [ {`` (a closer with nothing open counts as none)."""
    if not source:
        return 0
    steps = _OPEN[np.frombuffer(source, dtype=np.uint8)]
    depth = np.cumsum(steps[steps != 0], dtype=np.int32)
    if not depth.size:
        return 0
    # A stray closer must not hide later openers: measure from the lowest point before.
    return int(np.max(depth - np.minimum.accumulate(np.minimum(depth, 0))))


def indent_depth(source: bytes) -> int:
    """How many indentation levels are open at once (an indentation stack, as Python's
    tokenizer keeps it; a tab counts as one column), or an upper bound of it below
    :data:`MAX_NESTING` when no line is indented that far."""
    widths = [m.end() - m.start() for m in _INDENT.finditer(source)]
    if not widths or max(widths) < MAX_NESTING:
        return min(len(set(widths)), max(widths, default=0))
    stack: list[int] = []
    deepest = 0
    for line in source.split(b"\n"):
        body = line.lstrip(b" \t")
        if not body.strip():
            continue
        width = len(line) - len(body)
        while stack and stack[-1] >= width:
            stack.pop()
        if width:
            stack.append(width)
        deepest = max(deepest, len(stack))
    return deepest


def too_deep(source: bytes) -> int | None:
    """The nesting depth when it is deeper than :data:`MAX_NESTING` (None: safe to parse)."""
    depth = max(indent_depth(source), bracket_depth(source))
    return depth if depth > MAX_NESTING else None

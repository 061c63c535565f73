"""Path globs as ``path_globs`` takes them: gitignore patterns with GrooveSeek's
brace groups (``docs/{a,b}/**``).

The request model checks a glob here when it is given (:func:`check_glob`), and
the filter expands it here when it is applied (:func:`expand_braces`), so both
read a glob the same way.
"""

from __future__ import annotations

import re

import pathspec

from groove.errors import InvalidArgument

#: At most this many patterns one brace glob may expand to (``{a,b}{c,d}`` is 4).
MAX_BRACE_EXPANSION = 256


def _brace_group(pattern: str) -> tuple[int, int, list[str]] | None:
    """The first top-level ``{…}`` holding a comma: (start, end, alternatives), else None."""
    depth, start = 0, -1
    cuts: list[int] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "{":
            if depth == 0:
                start, cuts = i, []
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0 and cuts:
                bounds = [start, *cuts, i]
                return start, i, [pattern[a + 1:b] for a, b in zip(bounds, bounds[1:], strict=False)]
        elif ch == "," and depth == 1:
            cuts.append(i)
        i += 1
    return None


def expand_braces(pattern: str) -> list[str]:
    """``docs/{a,b}/**`` -> ``["docs/a/**", "docs/b/**"]``, as GrooveSeek's globs match.

    Groups nest (``{a,{b,c}}``) and multiply (``{a,b}/{c,d}``); a brace
    without a comma, or unbalanced, is a literal character, as in gitignore.
    More than :data:`MAX_BRACE_EXPANSION` results is refused.
    """
    out: list[str] = []
    todo = [pattern]
    while todo:
        current = todo.pop()
        group = _brace_group(current)
        if group is None:
            out.append(current)
        else:
            start, end, alternatives = group
            todo += [current[:start] + alt + current[end + 1:] for alt in reversed(alternatives)]
        if len(out) + len(todo) > MAX_BRACE_EXPANSION:
            raise InvalidArgument(f"path glob {pattern!r} expands to more than "
                                  f"{MAX_BRACE_EXPANSION} patterns; accepted: fewer brace "
                                  "alternatives")
    return out


def check_glob(glob: str) -> None:
    """Refuse a glob the gitignore matcher cannot compile (``[z-a]``), naming it.

    Each brace alternative is compiled as the filter will use it
    (:func:`expand_braces`).
    """
    try:
        pathspec.PathSpec.from_lines("gitignore", expand_braces(glob.removeprefix("!")))
    except (re.error, ValueError, TypeError) as exc:
        detail = getattr(exc, "msg", None) or str(exc)
        raise ValueError(f"{glob!r} is not a valid glob ({detail})") from None

"""Code chunks that only import things rank after the others (docs/search.md, "Code").

The lines before a file's first definition (``use std::error::Error;``,
``import os``) are kept as a chunk so every byte of the file is searchable,
but they answer no question about what the code does, and their words
(``Error``, ``File``) are exactly the words of many questions. Such a chunk
(:func:`groove.indexing.quality.is_import_only`) goes behind every other
candidate of the pool, in its fused order (a stable partition), unless the
question is about it: it names one of the imported names *and* is about
importing (it says ``import``, ``require``, ``depends``, ``module``...) or
writes that name as code (``std::fs``, ``os.path``, ``snake_case``). Only
the candidate pool is read, so the cost does not grow with the knowledge
base.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from groove.fulltext.identifiers import split_identifier
from groove.indexing.quality import is_import_only
from groove.models import ChunkRow

Ranked = list[tuple[int, float]]

#: Words of a question about imports and dependencies (lower-case stems).
_ABOUT_IMPORTS = re.compile(
    r"\b(?:import\w*|requir\w*|includ\w*|depend\w*|module\w*|crate\w*|package\w*|librar\w*)\b")
#: Words every import line holds: naming them names nothing.
_KEYWORDS = frozenset({"use", "pub", "crate", "self", "super", "mod", "extern", "import",
                       "from", "as", "package", "include", "using", "require", "const",
                       "let", "var", "export", "std"})
_CODE_SHAPED = re.compile(r"::|\w\.\w|_|[a-z][A-Z]")


def _names(content: str) -> set[str]:
    """Every imported name and its parts, lower-cased (``std::fs::File`` -> std, fs, file)."""
    out: set[str] = set()
    for word in re.findall(r"\w+", content):
        out.add(word.lower())
        out.update(part.lower() for part in split_identifier(word))
    return out - _KEYWORDS


def names_an_import(question: str, content: str) -> bool:
    """Whether ``question`` asks about the imports in ``content`` (see the module docstring)."""
    names = _names(content)
    about = _ABOUT_IMPORTS.search(question.lower()) is not None
    for token in re.findall(r"[\w.:]+", question):
        words = {w.lower() for w in re.findall(r"\w+", token)}
        if words & names and (about or _CODE_SHAPED.search(token)):
            return True
    return False


def is_code_gap(row: ChunkRow) -> bool:
    """A chunk of a source file outside every definition (the only kind that can be
    import-only). Prose chunks carry line numbers too, so the document's language
    decides, not the presence of a line range."""
    return row.language is not None and row.symbol_kind is None


def demote_import_stubs(pool: Ranked, question: str,
                        content_of: Callable[[Sequence[int]], dict[int, str]]) -> Ranked:
    """``pool`` with its import-only code chunks moved behind the others (stable)."""
    texts = content_of([c for c, _ in pool])
    stubs = {c for c, text in texts.items()
             if is_import_only(text) and not names_an_import(question, text)}
    if not stubs:
        return pool
    return [h for h in pool if h[0] not in stubs] + [h for h in pool if h[0] in stubs]

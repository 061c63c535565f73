"""Code chunks outside every definition rank after the others (docs/search.md, "Code").

The lines of a source file outside its definitions (the imports before the
first one, module-level statements between two, the closing lines of a block
whose definitions were cut out) are kept as chunks so every byte of the file
is searchable. They answer few questions: imports hold exactly the words of
many questions (``Error``, ``File``), and a three-line fragment such as
``process.on("beforeExit", ...)`` reads close to anything. Such a chunk is a
*stub* when it only imports (:func:`groove.indexing.quality.is_import_only`)
or when its file holds definitions (the definitions are what a question
about the file's code is answered by); a file without any definition (a
script) keeps its chunks where they rank. A stub goes behind every other
candidate of the pool, in its fused order (a stable partition), unless the
question is about it: it names one of the chunk's names *and* is about
importing (it says ``import``, ``require``, ``depends``, ``module``...) or
writes that name as code (``std::fs``, ``os.path``, ``snake_case``). Only
the candidate pool is read, so the cost does not grow with the knowledge
base.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

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
    """A chunk of a source file outside every definition (the only kind that can be a
    stub). Prose chunks carry line numbers too, so the document's language decides,
    not the presence of a line range."""
    return row.language is not None and row.symbol_kind is None


def stub_texts(rows: Iterable[ChunkRow], defined: Callable[[set[int]], set[int]]
               ) -> dict[int, str]:
    """``{chunk id: content}`` of the rows that are stubs unless a question is about them:
    code gaps that only import, or whose document holds definitions (``defined`` gives
    those of some document ids)."""
    gaps = [row for row in rows if is_code_gap(row)]
    with_definitions = defined({row.doc_id for row in gaps}) if gaps else set()
    return {row.id: row.content for row in gaps
            if row.doc_id in with_definitions or is_import_only(row.content)}


def demote_stubs(pool: Ranked, question: str, texts: dict[int, str]) -> Ranked:
    """``pool`` with its stubs (``texts``: each stub's content, :func:`stub_texts`) moved
    behind the others (stable), but for those the question is about."""
    stubs = {c for c, text in texts.items() if not names_an_import(question, text)}
    if not stubs:
        return pool
    return [h for h in pool if h[0] not in stubs] + [h for h in pool if h[0] in stubs]

"""The package's layout, read from its own files and imports.

Three rules a reader of ``docs/architecture.md`` relies on: no module of
``src/groove`` takes part in an import circle (each one can be read, and
tested, from the modules below it); nothing under ``indexing/`` reaches up
into ``checks/`` (the checks read what indexing wrote, never the other way);
and no module grows past what one reader holds (``MAX_LINES``: split it along
the lines it already has, as ``store/sqlite/`` was).
Imports under ``if TYPE_CHECKING:`` are annotations only and do not count; an
import inside a function does (it is a circle deferred, not untied).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "groove"
#: The longest a module of the package may be, in lines.
MAX_LINES = 700


def module_name(path: Path, src: Path = SRC) -> str:
    """``src/groove/search/fusion.py`` -> ``groove.search.fusion`` (a package is its ``__init__``)."""
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement outside ``if TYPE_CHECKING:`` blocks."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def imported_modules(source: str, name: str, is_package: bool,
                     known: set[str]) -> set[str]:
    """The modules of ``known`` that module ``name``'s source imports.

    ``from . import x`` names the submodule ``x`` when it is one, else the
    package itself; ``import a.b.c`` depends on ``a.b.c`` (its parents'
    ``__init__`` run too, but a parent package is never counted as a circle
    with its own children, which every re-exporting facade would be).
    """
    base = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()
    for node in _imports(ast.parse(source)):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            if node.level:
                anchor = base.split(".")
                anchor = anchor[:len(anchor) - (node.level - 1)]
                root = ".".join(anchor + ([node.module] if node.module else []))
            else:
                root = node.module or ""
            targets = [f"{root}.{alias.name}" if f"{root}.{alias.name}" in known else root
                       for alias in node.names]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name and not name.startswith(target + "."):
                found.add(target)
    return found


def import_graph(src: Path = SRC) -> dict[str, set[str]]:
    """Module -> the package's modules it imports."""
    files = {module_name(p, src): p for p in (src / PACKAGE).rglob("*.py")}
    known = set(files)
    return {name: imported_modules(path.read_text(encoding="utf-8"), name,
                                   path.name == "__init__.py", known)
            for name, path in files.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))
    return found


def test_the_circle_finder_finds_a_circle_and_only_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circles(graph) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_relative_and_deferred_imports_are_read_and_type_checking_ones_are_not():
    known = {"groove", "groove.search", "groove.search.fusion", "groove.search.mmr",
             "groove.kb", "groove.models"}
    source = (
        "from typing import TYPE_CHECKING\n"
        "from . import mmr\n"
        "from ..kb import KnowledgeBase\n"
        "if TYPE_CHECKING:\n"
        "    from groove.models import Hit\n"
        "def f():\n"
        "    import groove.search.mmr\n"
    )
    assert imported_modules(source, "groove.search.fusion", False, known) == {
        "groove.search.mmr", "groove.kb"}


def test_no_module_of_the_package_is_in_an_import_circle():
    assert circles(import_graph()) == []


def test_indexing_never_imports_from_checks():
    graph = import_graph()
    upward = {name: sorted(t for t in targets if t.startswith("groove.checks"))
              for name, targets in graph.items() if name.startswith("groove.indexing")}
    assert {name: targets for name, targets in upward.items() if targets} == {}


def test_no_module_is_longer_than_one_reader_holds():
    long = {str(p.relative_to(SRC)): n for p in (SRC / PACKAGE).rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}, f"modules over {MAX_LINES} lines: {long}"

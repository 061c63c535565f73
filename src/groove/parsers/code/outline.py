"""A parsed syntax tree -> the file's definitions as nested whole-line ranges.

Language-neutral rules (the language knowledge stays in the grammar and its
tags query):

* the unit is a ``@definition.<kind>`` capture; its kind is the grammar's
  word renamed to the language's own (:mod:`groove.parsers.code.kinds`) and
  the name is the capture's ``@name``;
* a captured declarator (C's ``function_declarator``) stands for the
  declaration around it, and a wrapper that only decorates a definition
  (Python decorators, ``export``, C++ ``template <...>``, a ``const``
  holding an arrow function), or spans exactly its bytes, belongs to it;
* the range starts at the doc comment: an unbroken run of comment nodes
  directly above, each alone on its line (a blank line ends the run);
* the scope is the first ancestor carrying a ``name`` field (or, for a
  keyword-led block such as Rust's ``impl``, a ``type`` field), written as
  its keyword and name: ``impl Database``, ``class Config``;
* a definition nested inside another becomes its child; one that shares a
  line with a neighbour without being inside it is dropped (its lines stay
  in the chunks around it, so nothing is lost).

The walk to the root that finds a scope is bounded by :data:`MAX_DEPTH`
steps: a file nested deeper is chunked by lines instead
(``parse:too-deep``), so a pathological file costs a bounded amount of work.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from groove.models import Definition
from groove.parsers.code.kinds import symbol_kind

#: How many ancestors a definition may sit under before the file is chunked by lines.
MAX_DEPTH = 64
MAX_SCOPE_CHARS = 120

_WRAPPERS = frozenset({
    "decorated_definition", "export_statement", "template_declaration",
    "lexical_declaration", "variable_declaration",
})
_DECLARATIONS = frozenset({"function_definition", "declaration", "field_declaration"})


class TooDeep(Exception):
    """A definition sits under more than MAX_DEPTH ancestors."""


@dataclass
class _Def:
    first: int
    last: int
    name: str
    kind: str
    scope: str | None
    children: list[_Def] = field(default_factory=list)

    def frozen(self) -> Definition:
        return Definition(self.first, self.last, self.name, self.kind, self.scope,
                          tuple(c.frozen() for c in self.children))


def definitions(tree: Any, query: Any, source: bytes) -> tuple[Definition, ...]:
    """The top-level definitions of a parsed file (nested ones below them).

    Raises :class:`TooDeep` when one sits deeper than :data:`MAX_DEPTH`.
    """
    import tree_sitter

    lines = source.split(b"\n")
    found: dict[tuple[int, int], _Def] = {}
    for _pattern, captures in tree_sitter.QueryCursor(query).matches(tree.root_node):
        kinds = [k for k in captures if k.startswith("definition.")]
        names = captures.get("name")
        if not kinds or not names:
            continue
        node = _definition_node(captures[kinds[0]][0])
        scope = _scope(node)
        first = _doc_comment_start(node, lines)
        last = _last_row(node)
        name = _text(names[0])
        if (first, last) not in found and name:
            kind = symbol_kind(kinds[0].split(".", 1)[1], captures[kinds[0]][0])
            found[(first, last)] = _Def(first, last, name, kind, scope)
    return tuple(d.frozen() for d in _nest(sorted(found.values(), key=lambda d: (d.first, -d.last))))


def _nest(ordered: list[_Def]) -> list[_Def]:
    """Definitions sorted by (first, -last) -> a forest by line containment."""
    roots: list[_Def] = []
    stack: list[_Def] = []
    for d in ordered:
        while stack and stack[-1].last < d.first:
            stack.pop()
        if stack and d.last > stack[-1].last:
            continue  # shares a line with its neighbour without being inside it
        (stack[-1].children if stack else roots).append(d)
        stack.append(d)
    return roots


def _definition_node(node: Any) -> Any:
    """The node whose lines a capture stands for (see the module docstring)."""
    if node.type.endswith("declarator"):
        while node.parent is not None and node.parent.type.endswith("declarator"):
            node = node.parent
        if node.parent is not None and node.parent.type in _DECLARATIONS:
            node = node.parent
    while node.parent is not None and (node.parent.type in _WRAPPERS or (
            node.parent.byte_range == node.byte_range and node.parent.parent is not None)):
        node = node.parent
    return node


def _scope(node: Any) -> str | None:
    """The first named ancestor as ``keyword name``; counts the walk against MAX_DEPTH."""
    scope = None
    steps = 0
    current = node.parent
    while current is not None:
        steps += 1
        if steps > MAX_DEPTH:
            raise TooDeep
        if scope is None:
            scope = _scope_label(current)
        current = current.parent
    return scope


def _scope_label(node: Any) -> str | None:
    keyword = None
    first_child = node.child(0)  # never ``children[0]``: that builds a list of them all
    if first_child is not None and not first_child.is_named:
        word = first_child.type
        keyword = word if word.isalpha() else None
    name = node.child_by_field_name("name")
    if name is not None:
        label = _text(name)
    elif keyword is not None and node.child_by_field_name("type") is not None:
        typ = _text(node.child_by_field_name("type"))
        trait = node.child_by_field_name("trait")
        label = f"{_text(trait)} for {typ}" if trait is not None else typ
    else:
        return None
    label = " ".join(label.split())
    if not label:
        return None
    full = f"{keyword} {label}" if keyword else label
    return full[:MAX_SCOPE_CHARS]


def _doc_comment_start(node: Any, lines: list[bytes]) -> int:
    """The first line of the unbroken comment run right above ``node`` (or its own first line)."""
    first = node.start_point.row
    sibling = node.prev_sibling
    while sibling is not None and "comment" in sibling.type:
        if _last_row(sibling) != first - 1:
            break
        row, column = sibling.start_point.row, sibling.start_point.column
        if lines[row][:column].strip():
            break  # a trailing comment on a line of code
        first = row
        sibling = sibling.prev_sibling
    return first


def _last_row(node: Any) -> int:
    end = node.end_point
    return end.row - 1 if end.column == 0 and end.row > node.start_point.row else end.row


def _text(node: Any) -> str:
    raw: bytes = node.text or b""
    return raw.decode("utf-8", errors="replace")

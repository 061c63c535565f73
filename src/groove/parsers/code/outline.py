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
* a block that holds definitions without being one itself (Rust's ``impl``,
  a C++ ``namespace``: keyword-led, named, and not reported by the tags
  query) becomes a *container* definition of its own, kind and keyword its
  keyword, name the rest of its label (``impl Summary for NewsArticle`` is
  kind ``impl``, name ``Summary for NewsArticle``), so the chunker sees the
  block around its members: a small one is one chunk, header included, and
  a large one's header line joins its first member instead of standing
  alone;
* each definition records its keyword: the source's own word before its
  name (``fn``, ``def``, ``struct``), so a breadcrumb reads like the code;
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
#: Keywords of a block that becomes a container definition when the tags query does not
#: report it itself (Rust's ``impl``, a C++ or PHP ``namespace``).
_CONTAINER_KEYWORDS = frozenset({
    "impl", "namespace", "mod", "module", "trait", "class", "interface", "struct", "enum",
    "extension", "object",
})
#: How many leading children are read for a definition's keyword (modifiers come first).
_KEYWORD_LOOKAHEAD = 8


class TooDeep(Exception):
    """A definition sits under more than MAX_DEPTH ancestors."""


@dataclass
class _Def:
    first: int
    last: int
    name: str
    kind: str
    scope: str | None
    keyword: str | None = None
    container: bool = False
    children: list[_Def] = field(default_factory=list)

    def frozen(self) -> Definition:
        return Definition(self.first, self.last, self.name, self.kind, self.scope,
                          tuple(c.frozen() for c in self.children), self.keyword,
                          self.container)


def definitions(tree: Any, query: Any, source: bytes) -> tuple[Definition, ...]:
    """The top-level definitions of a parsed file (nested ones below them).

    Raises :class:`TooDeep` when one sits deeper than :data:`MAX_DEPTH`.
    """
    import tree_sitter

    lines = source.split(b"\n")
    found: dict[tuple[int, int], _Def] = {}
    defined: set[tuple[int, int]] = set()  # byte ranges of the definitions' own nodes
    holders: dict[tuple[int, int], Any] = {}  # the nodes their scopes were read from
    for _pattern, captures in tree_sitter.QueryCursor(query).matches(tree.root_node):
        kinds = [k for k in captures if k.startswith("definition.")]
        names = captures.get("name")
        if not kinds or not names:
            continue
        captured = captures[kinds[0]][0]
        node = _definition_node(captured)
        defined.update((captured.byte_range, node.byte_range))
        scope, holder = _scope(node)
        if holder is not None:
            holders.setdefault(holder.byte_range, holder)
        first = _doc_comment_start(node, lines)
        last = _last_row(node)
        name = _text(names[0])
        if (first, last) not in found and name:
            kind = symbol_kind(kinds[0].split(".", 1)[1], captured)
            found[(first, last)] = _Def(first, last, name, kind, scope,
                                        _keyword(captured, names[0]))
    for byte_range, holder in holders.items():
        container = None if byte_range in defined else _container(holder, lines)
        if container is not None and (container.first, container.last) not in found:
            found[(container.first, container.last)] = container
    return tuple(d.frozen() for d in _nest(sorted(found.values(), key=lambda d: (d.first, -d.last))))


def _container(node: Any, lines: list[bytes]) -> _Def | None:
    """A keyword-led block holding definitions (``impl Summary for NewsArticle``) as a
    definition of its own, or None when its keyword is not a container's."""
    parts = _scope_parts(node)
    if parts is None or parts[0] is None or parts[0] not in _CONTAINER_KEYWORDS:
        return None
    keyword, label = parts[0], parts[1]
    return _Def(_doc_comment_start(node, lines), _last_row(node), label, keyword,
                _scope(node)[0], keyword, container=True)


def _keyword(captured: Any, name: Any) -> str | None:
    """The last keyword token before the definition's name (``pub async fn`` -> ``fn``)."""
    keyword = None
    for index in range(_KEYWORD_LOOKAHEAD):
        child = captured.child(index)
        if child is None or child.start_byte >= name.start_byte:
            break
        if not child.is_named and child.type.isalpha():
            keyword = child.type
    return keyword


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


def _scope(node: Any) -> tuple[str | None, Any]:
    """The first named ancestor as ``keyword name``, and that ancestor; counts the walk
    against MAX_DEPTH."""
    scope = None
    holder = None
    steps = 0
    current = node.parent
    while current is not None:
        steps += 1
        if steps > MAX_DEPTH:
            raise TooDeep
        if scope is None:
            scope = _scope_label(current)
            holder = current if scope is not None else None
        current = current.parent
    return scope, holder


def _scope_label(node: Any) -> str | None:
    parts = _scope_parts(node)
    if parts is None:
        return None
    keyword, label = parts
    full = f"{keyword} {label}" if keyword else label
    return full[:MAX_SCOPE_CHARS]


def _scope_parts(node: Any) -> tuple[str | None, str] | None:
    """``(keyword, label)`` of a node that names a scope (``("impl", "Summary for
    NewsArticle")``), or None."""
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
    label = " ".join(label.split())[:MAX_SCOPE_CHARS]
    return (keyword, label) if label else None


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

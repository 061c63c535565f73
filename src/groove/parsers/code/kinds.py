"""A definition's kind in the words people use for it in its language.

The grammars' tags queries speak one vocabulary for every language: Rust's
``struct`` and ``enum`` are ``class``, its ``trait`` is ``interface``, Go's
every ``type`` is ``type``, a Python method is a ``function``. A developer
filtering by ``symbol_kind`` or reading a hit expects the language's own
word, so :func:`symbol_kind` renames the tags query's kind from the syntax
node it captured. What is not renamed keeps the query's word (``function``,
``method``, ``class``, ``interface``, ``module``, ``constant``, ``macro``...).
"""

from __future__ import annotations

from typing import Any

#: Syntax node type -> kind, across the grammars (node types do not collide).
NODE_KINDS: dict[str, str] = {
    # Rust
    "struct_item": "struct",
    "enum_item": "enum",
    "union_item": "union",
    "type_item": "type",
    "trait_item": "trait",
    "mod_item": "module",
    # C, C++
    "struct_specifier": "struct",
    "enum_specifier": "enum",
    "union_specifier": "union",
    "type_definition": "type",
    # TypeScript, Java, PHP
    "interface_declaration": "interface",
    "type_alias_declaration": "type",
    "enum_declaration": "enum",
    "trait_declaration": "trait",
    "internal_module": "module",
    "method_declaration": "method",
}

#: Go's ``type X ...``: the kind of the type it declares.
_GO_TYPES = {"struct_type": "struct", "interface_type": "interface"}

#: The body node between a class and the functions defined in it.
_CLASS_BODIES = {("block", "class_definition")}


def symbol_kind(query_kind: str, captured: Any) -> str:
    """The kind of a definition: ``query_kind`` (the tags query's word), renamed from
    ``captured`` (the node the query captured) where the language has its own word."""
    if captured.type == "type_spec":
        declared = captured.child_by_field_name("type")
        return _GO_TYPES.get(declared.type, "type") if declared is not None else "type"
    renamed = NODE_KINDS.get(captured.type)
    if renamed is not None:
        return renamed
    if query_kind == "function" and _in_class_body(captured):
        return "method"
    return query_kind


def _in_class_body(node: Any) -> bool:
    """A Python ``def`` (decorated or not) directly inside a class body, not nested in a
    function."""
    if node.parent is not None and node.parent.type == "decorated_definition":
        node = node.parent
    body = node.parent
    return (body is not None and body.parent is not None
            and (body.type, body.parent.type) in _CLASS_BODIES)

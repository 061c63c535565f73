"""The frontmatter schema (``<kb>/groove-schema.toml``): which keys a knowledge base
declares and the rule each must follow.

It sits in ``config/`` because two layers read it: the indexer stores the
declared keys for ``--field`` filters (:func:`declared_field_names`,
:func:`field_strings`), and ``groove validate`` (``checks/validate.py``) checks
every document against the rules. The file format is documented in
``checks/validate.py`` and docs/cli.md ('validate').
"""

from __future__ import annotations

import datetime as dt
import logging
import math
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groove._logging import ANY_CONTROL
from groove.errors import SchemaError
from groove.store.files import check_regular, read_bytes

log = logging.getLogger("groove.checks")

SCHEMA_FILENAME = "groove-schema.toml"
TYPES = ("string", "integer", "float", "boolean", "date", "list")
#: GrooveSeek's type names, read as groove's (one warning line each).
GROOVESEEK_TYPES = {"array": "list"}
_FIELD_KEYS = ("required", "type", "pattern", "enum", "min_length", "max_length", "allow_empty")
_OPTION_KEYS = ("allow_unknown_fields",)
#: Frontmatter keys the Markdown parser keeps in fields of their own: always
#: declared, never stored as declared fields.
PARSER_FIELDS = ("title", "date", "tags", "category", "topic")
_LENGTH_TYPES = ("string", "list")
_PATTERN_TYPES = ("string", "date", "list")


# --- the schema ------------------------------------------------------------------
@dataclass(frozen=True)
class FieldRule:
    name: str
    required: bool = False
    type: str | None = None
    pattern: re.Pattern[str] | None = None
    enum: tuple[Any, ...] | None = None
    min_length: int | None = None
    max_length: int | None = None
    allow_empty: bool = True


@dataclass(frozen=True)
class Schema:
    """A loaded ``groove-schema.toml``: its field rules and its ``[options]``."""

    rules: tuple[FieldRule, ...]
    allow_unknown_fields: bool = True

    @property
    def declared(self) -> frozenset[str]:
        return frozenset(rule.name for rule in self.rules)


def declared_field_names(schema: Schema | None) -> tuple[str, ...]:
    """The keys the index stores for this schema: declared, minus the parser's own fields."""
    if schema is None:
        return ()
    return tuple(sorted(schema.declared - set(PARSER_FIELDS)))


def kb_schema(kb_path: Path) -> Schema | None:
    """``<kb_path>/groove-schema.toml`` loaded, or None when there is none (a broken one raises)."""
    path = Path(kb_path) / SCHEMA_FILENAME
    check_regular(path, "the schema file")  # a link (to outside the KB) or a FIFO: refused
    return load_schema(path) if path.is_file() else None


def field_strings(value: Any) -> tuple[str, ...]:
    """A frontmatter value as the strings a ``--field`` filter compares with.

    A string, number or boolean is the one string it prints as (``true``,
    ``3``, ``2.5``; a date arrives as its ISO text); a list of such scalars is
    one string per item; a mapping, a nested list or an empty value holds none.
    """
    def scalar(item: Any) -> str | None:
        if isinstance(item, bool):
            return "true" if item else "false"
        if isinstance(item, int | float | str):
            return str(item)
        return None

    if isinstance(value, list):
        items = [scalar(item) for item in value]
        if any(item is None for item in items):
            return ()
        return tuple(dict.fromkeys(item for item in items if item is not None))
    one = scalar(value)
    return () if one is None else (one,)


def load_schema(path: Path) -> Schema:
    """Parse and check a schema file; every refusal names the field and the key."""
    try:
        raw = tomllib.loads(read_bytes(path, "the schema file").decode("utf-8"))
    except OSError as exc:
        raise SchemaError(f"cannot read schema {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise SchemaError(f"schema {path} is not UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        raise SchemaError(f"schema {path} is not valid TOML: {exc}") from None
    unknown = sorted(set(raw) - {"fields", "options"})
    if unknown:
        raise SchemaError(f"schema {path}: unknown top-level key {unknown[0]!r}; "
                          "declare fields as [fields.<name>] tables and options under [options]")
    options = raw.get("options", {})
    if not isinstance(options, dict):
        raise SchemaError(f"schema {path}: 'options' must be a table ([options])")
    for key, value in options.items():
        if key not in _OPTION_KEYS:
            raise SchemaError(f"schema {path}: [options] key {key!r} is not an option; "
                              f"accepted: {', '.join(_OPTION_KEYS)}")
        if not isinstance(value, bool):
            raise SchemaError(f"schema {path}: [options] {key} must be true or false")
    fields = raw.get("fields", {})
    if not isinstance(fields, dict):
        raise SchemaError(f"schema {path}: 'fields' must be a table of [fields.<name>] tables")
    rules = []
    for name, spec in fields.items():
        if ANY_CONTROL.search(name) or not name.strip():
            raise SchemaError(f"schema {path}: field name {name!r} is refused: it is empty or "
                              "holds a control character (a newline, a tab, an escape); "
                              "accepted: a frontmatter key of printable characters")
        if not isinstance(spec, dict):
            raise SchemaError(f"schema {path}: field {name!r} must be a table ([fields.{name}])")
        rules.append(_field_rule(path, name, spec))
    return Schema(tuple(rules), options.get("allow_unknown_fields", True))


def _field_rule(path: Path, name: str, spec: dict[str, Any]) -> FieldRule:
    def bad(key: str, why: str) -> SchemaError:
        return SchemaError(f"schema {path}: field {name!r}: key {key!r} {why}")

    for key in spec:
        if key not in _FIELD_KEYS:
            raise bad(key, f"is not a rule; accepted: {', '.join(_FIELD_KEYS)}")
    for key in ("required", "allow_empty"):
        if key in spec and not isinstance(spec[key], bool):
            raise bad(key, "must be true or false")
    kind = spec.get("type")
    if kind in GROOVESEEK_TYPES:
        log.warning("schema %s: field %r: type = %r is GrooveSeek's spelling, read as type = %r; "
                    "please change it (docs/grooveseek.md)", path, name, kind, GROOVESEEK_TYPES[kind])
        kind = GROOVESEEK_TYPES[kind]
    if kind is not None and kind not in TYPES:
        raise bad("type", f"must be one of {', '.join(TYPES)}, got {kind!r}")
    lengths = {}
    for key in ("min_length", "max_length"):
        if key in spec:
            value = spec[key]
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise bad(key, f"must be a non-negative integer, got {value!r}")
            if kind is not None and kind not in _LENGTH_TYPES:
                raise bad(key, f"applies to string or list fields, not {kind}")
            lengths[key] = value
    if lengths.get("min_length", 0) > lengths.get("max_length", math.inf):
        raise bad("min_length", f"({lengths['min_length']}) is above max_length "
                  f"({lengths['max_length']})")
    pattern = None
    if "pattern" in spec:
        if not isinstance(spec["pattern"], str):
            raise bad("pattern", "must be a regular expression string")
        if kind is not None and kind not in _PATTERN_TYPES:
            raise bad("pattern", f"applies to string, date or list fields, not {kind}")
        try:
            pattern = re.compile(spec["pattern"])
        except re.error as exc:
            raise bad("pattern", f"is not a valid regular expression ({exc})") from None
    enum = None
    if "enum" in spec:
        if not isinstance(spec["enum"], list) or not spec["enum"]:
            raise bad("enum", "must be a non-empty list of allowed values")
        enum = tuple(_plain(v) for v in spec["enum"])
    required = spec.get("required", False)
    return FieldRule(name=name, required=required, type=kind, pattern=pattern, enum=enum,
                     min_length=lengths.get("min_length"), max_length=lengths.get("max_length"),
                     allow_empty=spec.get("allow_empty", not required))


def _plain(value: Any) -> Any:
    """TOML dates compare with frontmatter values as ISO strings (which is how those arrive)."""
    return value.isoformat() if isinstance(value, dt.date | dt.time) else value

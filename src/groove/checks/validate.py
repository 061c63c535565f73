"""``groove validate``: frontmatter checked against ``groove-schema.toml`` (docs/cli.md).

Schema format (``<kb>/groove-schema.toml`` or ``--schema``)::

    [fields.title]
    required = true
    type = "string"          # string | integer | float | boolean | date | list
    min_length = 3           # characters (string) or items (list)
    max_length = 120
    pattern = "^[A-Z]"       # re.search on the string (each item of a list)
    enum = ["a", "b"]        # allowed values (each item of a list)
    allow_empty = false      # "", [] and a bare key; default: false when required

    [fields.status]          # any key may be declared; an empty table checks nothing

    [options]
    allow_unknown_fields = false   # report each undeclared key (as ``--strict`` does)

The keys a schema declares beyond the parser's own (:data:`PARSER_FIELDS`)
are also what the index stores for ``--field`` filters
(:func:`declared_field_names`, docs/search.md 'Fields').

Decisions made here: an empty value of an optional field is
allowed unless ``allow_empty = false`` says otherwise, and counts as "not
given" for the other rules; ``float`` accepts integers; ``date`` accepts YAML
dates and ISO ``YYYY-MM-DD`` strings (optionally with a time); ``list`` means a
YAML list (a comma string is a string). A broken schema is a GrooveError (exit
2) naming the field and key. The frontmatter is read with the Markdown
parser's own :func:`~groove.parsers.markdown.split_frontmatter`, and the files
are exactly the Markdown files the index walk would take.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import math
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from groove._logging import ANY_CONTROL
from groove.errors import GrooveError
from groove.store.files import check_regular, read_bytes

if TYPE_CHECKING:
    from groove.config import Config
    from groove.kb import KnowledgeBase

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
#: The violation kinds (``kind`` in ``validate --format json``), one per rule broken.
MISSING = "required_missing"
EMPTY = "empty_value"
WRONG_TYPE = "wrong_type"
TOO_SHORT = "too_short"
TOO_LONG = "too_long"
PATTERN = "pattern_mismatch"
NOT_IN_ENUM = "enum_mismatch"
#: What ``--strict`` / ``allow_unknown_fields = false`` reports.
UNDECLARED_FIELD = "undeclared_field"
#: A frontmatter block that does not parse (the document is indexed without it).
FRONTMATTER_UNPARSED = "frontmatter_unparsed"
KINDS = (MISSING, EMPTY, WRONG_TYPE, TOO_SHORT, TOO_LONG, PATTERN, NOT_IN_ENUM, UNDECLARED_FIELD,
         FRONTMATTER_UNPARSED)
_LENGTH_TYPES = ("string", "list")
_PATTERN_TYPES = ("string", "date", "list")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?"
                       r"(?:Z|[+-]\d{2}:?\d{2})?)?$")


class SchemaError(GrooveError):
    """groove-schema.toml is unreadable or asks for something validate cannot check."""


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


# --- checking one value ----------------------------------------------------------
def _is_empty(value: Any) -> bool:
    return value is None or (isinstance(value, str | list | dict) and not (
        value.strip() if isinstance(value, str) else value))


def _type_ok(kind: str, value: Any) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "float":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "date":
        return isinstance(value, str) and _valid_iso_date(value)
    return isinstance(value, list)


def _valid_iso_date(text: str) -> bool:
    if not _ISO_DATE.match(text):
        return False
    try:
        dt.date.fromisoformat(text[:10])
    except ValueError:
        return False
    return True


def _type_name(value: Any) -> str:
    names = {bool: "boolean", int: "integer", float: "float", str: "string", list: "list",
             dict: "mapping"}
    return names.get(type(value), type(value).__name__)


def check_value(rule: FieldRule, value: Any, present: bool) -> list[tuple[str, str]]:
    """Violations of ``rule`` by one frontmatter value (``present``: the key exists), as
    (kind, message): each kind one of :data:`KINDS`."""
    if not present:
        return [(MISSING, f"required field {rule.name!r} is missing")] if rule.required else []
    if _is_empty(value):
        return [] if rule.allow_empty else [(EMPTY, f"field {rule.name!r} is empty")]
    if rule.type is not None and not _type_ok(rule.type, value):
        shown = json.dumps(value, ensure_ascii=False, default=str)[:80]
        if rule.type == "date" and isinstance(value, str):
            return [(WRONG_TYPE, f"field {rule.name!r} must be a date (YYYY-MM-DD), got {shown}")]
        return [(WRONG_TYPE,
                 f"field {rule.name!r} must be {rule.type}, got {_type_name(value)} {shown}")]
    out = []
    if isinstance(value, str | list):
        size = len(value)
        unit = "characters" if isinstance(value, str) else "items"
        if rule.min_length is not None and size < rule.min_length:
            out.append((TOO_SHORT, f"field {rule.name!r} has {size} {unit}, fewer than "
                                   f"min_length {rule.min_length}"))
        if rule.max_length is not None and size > rule.max_length:
            out.append((TOO_LONG, f"field {rule.name!r} has {size} {unit}, more than "
                                  f"max_length {rule.max_length}"))
    items = value if isinstance(value, list) else [value]
    if rule.pattern is not None:
        for item in items:
            if isinstance(item, str) and not rule.pattern.search(item):
                out.append((PATTERN, f"field {rule.name!r} value {item!r} does not match "
                                     f"pattern {rule.pattern.pattern!r}"))
    if rule.enum is not None:
        for item in items:
            if item not in rule.enum:
                allowed = ", ".join(json.dumps(v, ensure_ascii=False) for v in rule.enum)
                out.append((NOT_IN_ENUM, f"field {rule.name!r} value "
                                         f"{json.dumps(item, ensure_ascii=False)} is not one of "
                                         f"{allowed}"))
    return out


# --- the report ------------------------------------------------------------------
@dataclass(frozen=True)
class Violation:
    path: str  # relative to kb_path
    line: int
    field: str | None
    message: str
    #: Which rule was broken, one of :data:`KINDS`.
    kind: str

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "field": self.field,
                "message": self.message, "kind": self.kind}


@dataclass
class ValidateReport:
    kb_path: Path
    schema: str | None
    files_checked: int = 0
    violations: list[Violation] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return 1 if self.violations else 0

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": not self.violations,
            "schema": self.schema,
            "files_checked": self.files_checked,
            "violations": [v.to_json() for v in self.violations],
            "notes": list(self.notes),
        }

    def summary(self) -> str:
        files = len({v.path for v in self.violations})
        if not self.violations:
            return f"{self.files_checked} file(s) checked, no violations"
        return (f"{len(self.violations)} violation(s) in {files} file(s); "
                f"{self.files_checked} file(s) checked")

    def render_text(self) -> str:
        lines = [f"{v.path}:{v.line}: {v.message}" for v in self.violations]
        lines.append(self.summary())
        return "\n".join(lines) + "\n"

    def render_github(self, cwd: Path | None = None) -> str:
        """GitHub workflow commands: one ``::error`` per violation, ``::notice`` for notes."""
        lines = []
        for v in self.violations:
            where = _github_file(self.kb_path / v.path, cwd or Path.cwd())
            lines.append(f"::error file={_gh_property(where)},line={v.line}::{_gh_data(v.message)}")
        lines += [f"::notice::{_gh_data(n)}" for n in self.notes]
        lines.append(self.summary())
        return "\n".join(lines) + "\n"


def _github_file(full: Path, cwd: Path) -> str:
    """The path as GitHub wants it: relative to the workspace (cwd) when inside it."""
    try:
        return full.resolve().relative_to(cwd.resolve()).as_posix()
    except ValueError:
        return full.as_posix()


def _gh_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_property(text: str) -> str:
    return _gh_data(text).replace(":", "%3A").replace(",", "%2C")


# --- running -----------------------------------------------------------------------
def _key_line(text: str, key: str) -> int:
    """1-based line of a top-level ``key:`` inside the leading frontmatter block (1 if unseen)."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return 1
    wanted = re.compile(r"""^(?:{k}|"{k}"|'{k}')\s*:""".format(k=re.escape(key)))
    for i, line in enumerate(lines[1:], start=2):
        if line.rstrip() in ("---", "..."):
            break
        if wanted.match(line):
            return i
    return 1


def _markdown_files(config: Config) -> tuple[list[str], list[str]]:
    """(paths the index walk would take that the Markdown parser reads, notes)."""
    from groove.indexing.fileset import FileSet
    from groove.parsers import get_parser

    markdown = get_parser("md")
    if markdown is None or "md" not in config.parsers.enabled:
        return [], ["the Markdown parser is not enabled in [parsers]; no frontmatter to check"]
    files = FileSet.from_config(config, extensions=markdown.extensions)
    return list(files.walk()), files.warnings


def _check_file(kb_path: Path, rel: str, schema: Schema, strict: bool
                ) -> tuple[list[Violation], str | None]:
    """Violations in one file, or a note when the file cannot be read as the indexer would."""
    from groove.indexing.walk import read_file_safely
    from groove.parsers.base import decode_utf8
    from groove.parsers.markdown import split_frontmatter

    try:
        text = decode_utf8(read_file_safely(kb_path, rel), rel)
    except GrooveError as exc:
        return [], f"skipped {rel}: {exc}"
    split = split_frontmatter(text)
    front = split.mapping
    if split.problem is not None:
        found = re.search(r"at line (\d+)", split.problem)
        return [Violation(rel, int(found.group(1)) if found else 1, None,
                          f"{split.problem}; indexed without frontmatter",
                          FRONTMATTER_UNPARSED)], None
    out = []
    for rule in schema.rules:
        present = rule.name in front
        line = _key_line(text, rule.name) if present else 1
        out += [Violation(rel, line, rule.name, message, kind)
                for kind, message in check_value(rule, front.get(rule.name), present)]
    if strict:
        known = schema.declared | set(PARSER_FIELDS)
        out += [Violation(rel, _key_line(text, key), key,
                          f"field {key!r} is not declared in the schema", UNDECLARED_FIELD)
                for key in sorted(front) if key not in known]
    return out, None


def run_validate(knowledge_base: KnowledgeBase, schema_path: Path | None = None,
                 fail_fast: bool = False, strict: bool = False) -> ValidateReport:
    """Check every indexable Markdown file's frontmatter; stop at the first violation if ``fail_fast``.

    ``strict`` (or ``[options] allow_unknown_fields = false`` in the schema)
    also reports every frontmatter key the schema does not declare, once per
    key, as an ``undeclared_field`` violation.

    The knowledge base's configuration decides which files belong to it (the
    walk's exclusions and the enabled parsers); no index is needed.
    """
    config = knowledge_base.config
    kb = Path(config.kb_path)
    explicit = schema_path is not None
    schema = Path(os.path.abspath(schema_path)) if schema_path is not None else kb / SCHEMA_FILENAME
    report = ValidateReport(kb_path=kb, schema=str(schema))
    if not schema.is_file():
        if explicit:
            raise SchemaError(f"schema file {schema} does not exist")
        report.schema = None
        report.notes.append(f"no schema file at {schema}; nothing to validate "
                            f"(create {SCHEMA_FILENAME} or pass --schema)")
        return report
    loaded = load_schema(schema)
    strict = strict or not loaded.allow_unknown_fields
    paths, notes = _markdown_files(config)
    report.notes += notes
    for rel in paths:
        violations, note = _check_file(kb, rel, loaded, strict)
        if note is not None:
            report.notes.append(note)
            continue
        report.files_checked += 1
        if fail_fast and violations:
            report.violations.append(violations[0])
            break
        report.violations += violations
    return report

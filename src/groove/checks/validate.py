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
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from groove.config.schema import (
    PARSER_FIELDS,
    SCHEMA_FILENAME,
    FieldRule,
    Schema,
    load_schema,
)
from groove.errors import GrooveError, SchemaError

if TYPE_CHECKING:
    from groove.config import Config
    from groove.kb import KnowledgeBase

log = logging.getLogger("groove.checks")

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
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?"
                       r"(?:Z|[+-]\d{2}:?\d{2})?)?$")


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

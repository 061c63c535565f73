"""The golden set: its file, its parsing, and warnings about the set itself.

A hit *matches* an expected entry when the paths are equal and, if the entry
names a heading, the headings are equal too (docs/evaluation.md).
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from groove.errors import GrooveError, InvalidArgument
from groove.search.exclusions import check_searchable
from groove.store.files import read_bytes

if TYPE_CHECKING:
    from groove.kb import KnowledgeBase

log = logging.getLogger("groove.evaluation")


class GoldenError(GrooveError):
    """The golden YAML is missing, unreadable or does not have the documented shape."""


# --- golden set ---------------------------------------------------------------


@dataclass(frozen=True)
class Expected:
    path: str
    heading: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path}
        if self.heading is not None:
            out["heading"] = self.heading
        return out


@dataclass(frozen=True)
class GoldenQuery:
    id: str
    query: str
    expected: tuple[Expected, ...]


@dataclass(frozen=True)
class GoldenSet:
    path: Path
    sha256: str
    queries: tuple[GoldenQuery, ...]


def load_golden(path: Path) -> GoldenSet:
    """Read and validate a golden file; errors name the entry and the field."""
    try:
        raw = read_bytes(path, "the golden file")  # a FIFO or a link: refused, never waited on
    except FileNotFoundError:
        raise GoldenError(
            f"no golden file at {path}: create it with `queries: [{{query, expected: "
            f"[{{path, heading?}}]}}]` or pass --golden"
        ) from None
    except OSError as exc:
        raise GoldenError(f"cannot read golden file {path}: {exc.strerror or exc}") from None
    try:
        data = yaml.safe_load(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise GoldenError(f"golden file {path} is not UTF-8 text") from None
    except yaml.YAMLError as exc:
        raise GoldenError(f"golden file {path} is not valid YAML: {exc}") from None
    queries = parse_golden(data, source=str(path))
    return GoldenSet(path=path, sha256=hashlib.sha256(raw).hexdigest(), queries=queries)


#: Keys GrooveSeek reserved in golden files without giving them a meaning: read
#: and ignored, one warning line each (docs/grooveseek.md).
GROOVESEEK_TOP_KEYS = ("defaults",)
GROOVESEEK_QUERY_TAGS = "tags"


def _ignored(what: str) -> None:
    log.warning("%s is reserved by GrooveSeek's golden format and has no effect in groove; "
                "it is ignored (docs/grooveseek.md)", what)


def _without_grooveseek_keys(data: dict[str, Any], source: str) -> dict[str, Any]:
    if not any(key in data for key in GROOVESEEK_TOP_KEYS):
        return data
    for key in GROOVESEEK_TOP_KEYS:
        if key in data:
            _ignored(f"{source}: top-level `{key}`")
    return {k: v for k, v in data.items() if k not in GROOVESEEK_TOP_KEYS}


def parse_golden(data: Any, *, source: str = "golden file") -> tuple[GoldenQuery, ...]:
    """Validate the parsed YAML document (a mapping with a non-empty ``queries`` list)."""
    if not isinstance(data, dict) or "queries" not in data:
        raise GoldenError(f"{source}: the top level must be a mapping with a `queries` list")
    data = _without_grooveseek_keys(data, source)
    unknown = sorted(set(data) - {"queries"})
    if unknown:
        raise GoldenError(f"{source}: unknown top-level key(s) {unknown}; only `queries` is accepted")
    entries = data["queries"]
    if not isinstance(entries, list) or not entries:
        raise GoldenError(f"{source}: `queries` must be a non-empty list")
    out: list[GoldenQuery] = []
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        query = _parse_entry(entry, index, source)
        if query.id in seen:
            raise GoldenError(f"{source}: queries[{index}]: duplicate id {query.id!r}; ids must be unique")
        seen.add(query.id)
        out.append(query)
    return tuple(out)


def load_unanswerable(path: Path) -> tuple[str, ...]:
    """Questions the KB does not answer: ``queries:`` a list of strings or ``{query, id?}``.

    Used for the ``unanswerable_low_confidence_rate`` metric (docs/evaluation.md).
    """
    try:
        data = yaml.safe_load(read_bytes(path, "the unanswerable-questions file").decode("utf-8"))
    except FileNotFoundError:
        raise GoldenError(f"no unanswerable-questions file at {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise GoldenError(f"cannot read unanswerable-questions file {path}: {exc}") from None
    except yaml.YAMLError as exc:
        raise GoldenError(f"unanswerable-questions file {path} is not valid YAML: {exc}") from None
    entries = data.get("queries") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not entries:
        raise GoldenError(f"{path}: the top level must be a mapping with a non-empty `queries` list")
    out: list[str] = []
    for index, entry in enumerate(entries):
        query = entry.get("query") if isinstance(entry, dict) else entry
        if not isinstance(query, str) or not query.strip():
            raise GoldenError(f"{path}: queries[{index}] must be a non-empty string or {{query: ...}}")
        out.append(query)
    return tuple(out)


def _parse_entry(entry: Any, index: int, source: str) -> GoldenQuery:
    where = f"{source}: queries[{index}]"
    if not isinstance(entry, dict):
        raise GoldenError(f"{where}: must be a mapping with `query` and `expected`")
    raw_id = entry.get("id", index + 1)
    if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)) or str(raw_id).strip() == "":
        raise GoldenError(f"{where}: field `id` must be a non-empty string or an integer")
    qid = str(raw_id)
    where = f"{source}: queries[{index}] (id {qid!r})"
    if GROOVESEEK_QUERY_TAGS in entry:
        entry = {k: v for k, v in entry.items() if k != GROOVESEEK_QUERY_TAGS}
        _ignored(f"{where}: `{GROOVESEEK_QUERY_TAGS}`")
    unknown = sorted(set(entry) - {"id", "query", "expected"})
    if unknown:
        raise GoldenError(f"{where}: unknown field(s) {unknown}; accepted: id, query, expected")
    query = entry.get("query")
    if not isinstance(query, str) or not query.strip():
        raise GoldenError(f"{where}: field `query` must be a non-empty string")
    try:
        check_searchable(query)
    except InvalidArgument as exc:
        raise GoldenError(f"{where}: {exc}") from None
    expected = entry.get("expected")
    if not isinstance(expected, list) or not expected:
        raise GoldenError(f"{where}: field `expected` must be a non-empty list of {{path, heading?}}")
    items = tuple(_parse_expected(item, f"{where}: expected[{j}]") for j, item in enumerate(expected))
    if len(set(items)) != len(items):
        raise GoldenError(f"{where}: field `expected` lists the same entry twice")
    return GoldenQuery(id=qid, query=query, expected=items)


def _parse_expected(item: Any, where: str) -> Expected:
    if isinstance(item, str):
        item = {"path": item}
    if not isinstance(item, dict):
        raise GoldenError(f"{where}: must be a mapping with `path` (and optional `heading`)")
    unknown = sorted(set(item) - {"path", "heading"})
    if unknown:
        raise GoldenError(f"{where}: unknown field(s) {unknown}; accepted: path, heading")
    path = item.get("path")
    if not isinstance(path, str) or not path.strip():
        raise GoldenError(f"{where}: field `path` must be a non-empty string (relative to the KB)")
    heading = item.get("heading")
    if heading is not None and (not isinstance(heading, str) or not heading.strip()):
        raise GoldenError(f"{where}: field `heading` must be a non-empty string when given")
    return Expected(path=path.strip().replace("\\", "/").removeprefix("./"), heading=heading)


# --- warnings about the golden set itself ----------------------------------------------

_WS = re.compile(r"\s+")


def _normalise(text: str) -> str:
    return _WS.sub(" ", text).strip().casefold()


def quoted_golden_warnings(kb: KnowledgeBase, golden: GoldenSet) -> list[str]:
    """Warn when one document contains ≥ 2 golden queries verbatim (case-insensitive).

    Such a document makes the golden set measure string matching, not
    retrieval. Whitespace runs are collapsed so line wrapping cannot hide a quote.
    """
    phrases = {_normalise(q.query): q.id for q in golden.queries}
    warnings: list[str] = []
    for path in sorted(kb.document_hashes()):
        try:
            text = _normalise(kb.read_document(path).text)
        except GrooveError as exc:
            log.debug("quoted-golden check skipped %s: %s", path, exc)
            continue
        quoted = [qid for phrase, qid in phrases.items() if phrase and phrase in text]
        if len(quoted) >= 2:
            message = (f"{path} quotes {len(quoted)} golden queries verbatim "
                       f"(ids {', '.join(quoted)}); paraphrase them so eval measures retrieval")
            warnings.append(message)  # reported once, by whoever shows the report
    return warnings


def _check_expected_paths(kb: KnowledgeBase, golden: GoldenSet) -> list[str]:
    """Warn about expected entries that cannot match anything (typo'd path or heading)."""
    warnings: list[str] = []
    headings: dict[str, set[str | None] | None] = {}
    for q in golden.queries:
        for exp in q.expected:
            if exp.path not in headings:
                headings[exp.path] = kb.document_headings(exp.path)
            known = headings[exp.path]
            if known is None:
                msg = f"query {q.id!r}: expected path {exp.path!r} is not an indexed document"
            elif exp.heading is not None and exp.heading not in known:
                msg = f"query {q.id!r}: {exp.path!r} has no section headed {exp.heading!r}"
            else:
                continue
            warnings.append(msg)
    return warnings

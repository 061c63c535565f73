"""Markdown: YAML frontmatter plus heading-delimited sections (docs/indexing.md, 'Markdown').

Only ATX headings (``#`` .. ``######``) start sections; a ``#`` line inside a
fenced code block (``` or ~~~, CommonMark closing rules) is code, not a
heading. A broken frontmatter never costs the document: it is indexed without
it, tagged ``frontmatter:unparsed``, and the reason lands in ``ParsedDocument.warnings``.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from groove.models import MARKDOWN_EXTENSIONS, ParsedDocument, Section
from groove.parsers.base import Parser, decode_utf8, path_category_topic, title_from_filename
from groove.parsers.fences import Fence, fence_closed, fence_opened

_HEADING = re.compile(r"^ {0,3}(#{1,6})(?=[ \t]|$)(.*)$")
#: The run of spaces before closing hashes starts where the run does (the lookbehind): a
#: search from every blank of a long run cost the square of its length.
_CLOSING_HASHES = re.compile(r"(?:^|(?<![ \t])[ \t]+)#+$")

#: A frontmatter block made only of these characters (plain keys and scalars, flow
#: and block lists, quotes, dates) is read by libyaml, several times faster than
#: PyYAML's own parser and, for such text, to the same values (tests check it on
#: random blocks); anything else (tabs, tags, anchors, block scalars, comments,
#: unusual line breaks) and every block libyaml refuses goes to PyYAML's parser,
#: whose messages the warnings quote.
_PLAIN_YAML = re.compile(r"[\w \n\-.,:/\[\]'\"()@+]*")
_LIBYAML: type | None = getattr(yaml, "CSafeLoader", None)

#: Nodes a frontmatter may expand to (YAML aliases can make a tiny file huge).
_MAX_METADATA_NODES = 10_000
_MAX_METADATA_DEPTH = 32

_KNOWN_KEYS = ("title", "date", "tags", "category", "topic")


class MarkdownParser(Parser):
    id = "md"
    extensions = MARKDOWN_EXTENSIONS
    #: Prose chunks carry their first and last line in the file: an index that
    #: recorded an older rule re-reads these files once.
    policy = "line-ranges"

    def parse(self, data: bytes, rel_path: str) -> ParsedDocument:
        text = decode_utf8(data, rel_path)
        warnings: list[str] = []
        split = split_frontmatter(text)
        if split.problem is not None:
            warnings.append(f"{split.problem}; indexed without frontmatter, tagged "
                            f"{FRONTMATTER_UNPARSED_TAG}")
        sections = split_sections(split.body)
        fields = _Frontmatter.read(split.mapping, warnings)
        if split.problem is not None:
            fields.tags.append(FRONTMATTER_UNPARSED_TAG)
        category, topic = path_category_topic(rel_path)
        from groove.parsers.links import (  # it reads our fences
            find_links,
            frontmatter_aliases,
            link_definitions,
        )

        definitions = link_definitions(split.body)

        return ParsedDocument(
            title=fields.title or _first_h1(sections) or title_from_filename(rel_path),
            sections=sections,
            metadata=fields.metadata,
            date=fields.date,
            tags=fields.tags,
            tags_invalid=fields.tags_invalid,
            category=fields.category or category,
            topic=fields.topic or topic,
            warnings=warnings,
            links=[link for section in sections
                   for link in find_links(section.body, definitions)],
            aliases=frontmatter_aliases(split.mapping),
            line_text=split.body,
            # the body is the text's last lines: it starts after the frontmatter's
            line_text_start=text.count("\n") - split.body.count("\n") + 1,
        )


# --- frontmatter -------------------------------------------------------------------
#: The tag of a document whose frontmatter block did not parse (GrooveSeek v1.7): it is
#: indexed without the block, and ``status``, ``doctor`` and ``validate`` count it.
FRONTMATTER_UNPARSED_TAG = "frontmatter:unparsed"


@dataclass(frozen=True)
class FrontmatterSplit:
    """A Markdown text cut into its frontmatter mapping and body.

    ``problem`` says why a block that is there was not read (not YAML, not a
    mapping, no closing ``---``, too large); None when there is no block or it read.
    """

    mapping: dict[str, Any]
    body: str
    problem: str | None = None


def split_frontmatter(text: str) -> FrontmatterSplit:
    """The frontmatter and the body. A block that is not a YAML mapping gives ``{}`` and a problem."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return FrontmatterSplit({}, text)
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() in ("---", "...")), None)
    if end is None:
        return FrontmatterSplit({}, text, "frontmatter starts with '---' but has no closing '---'")
    block = "\n".join(lines[1:end])
    body = "\n".join(lines[end + 1:])
    try:
        loaded = load_yaml(block)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        return FrontmatterSplit({}, body, f"frontmatter is not valid YAML{where}")
    except Exception as exc:  # e.g. RecursionError on absurd nesting
        return FrontmatterSplit({}, body, f"frontmatter could not be read ({type(exc).__name__})")
    if loaded is None:
        return FrontmatterSplit({}, body)
    if not isinstance(loaded, dict):
        return FrontmatterSplit({}, body, f"frontmatter is a YAML {type(loaded).__name__}, not a "
                                          "mapping of key: value")
    try:
        return FrontmatterSplit(_json_safe(loaded, _Budget(), 0), body)
    except _TooBig:
        return FrontmatterSplit({}, body, f"frontmatter expands to over {_MAX_METADATA_NODES} "
                                          f"values or {_MAX_METADATA_DEPTH} levels")


def load_yaml(block: str) -> Any:
    """``yaml.safe_load(block)``, by libyaml when the block is plain (see ``_PLAIN_YAML``)."""
    if _LIBYAML is not None and _PLAIN_YAML.fullmatch(block):
        try:
            return yaml.load(block, Loader=_LIBYAML)  # noqa: S506 - the safe loader, in C
        except yaml.YAMLError:
            pass  # PyYAML's parser below says where
    return yaml.safe_load(block)


class _TooBig(Exception):
    pass


@dataclass
class _Budget:
    left: int = _MAX_METADATA_NODES


def _json_safe(value: Any, budget: _Budget, depth: int) -> Any:
    """Plain JSON types only: dates become ISO strings, keys become strings."""
    budget.left -= 1
    if budget.left < 0 or depth > _MAX_METADATA_DEPTH:
        raise _TooBig
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, dt.date):  # datetime is a date too
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, dict):
        return {str(k): _json_safe(v, budget, depth + 1) for k, v in value.items()}
    if isinstance(value, set | frozenset):
        return sorted((_json_safe(v, budget, depth + 1) for v in value), key=str)
    if isinstance(value, list | tuple):
        return [_json_safe(v, budget, depth + 1) for v in value]
    return str(value)


@dataclass
class _Frontmatter:
    title: str | None = None
    date: str | None = None
    tags: list[str] = field(default_factory=list)
    tags_invalid: bool = False
    category: str | None = None
    topic: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def read(cls, front: dict[str, Any], warnings: list[str]) -> _Frontmatter:
        tags, tags_invalid = _tags(front.get("tags"))
        if tags_invalid:
            warnings.append(f"frontmatter 'tags' is a {type(front['tags']).__name__}; "
                            "expected a list or a comma-separated string")
        return cls(
            title=_scalar_text(front, "title", warnings),
            date=_scalar_text(front, "date", warnings),
            tags=tags,
            tags_invalid=tags_invalid,
            category=_scalar_text(front, "category", warnings),
            topic=_scalar_text(front, "topic", warnings),
            metadata={k: v for k, v in front.items() if k not in _KNOWN_KEYS},
        )


def _scalar_text(front: dict[str, Any], key: str, warnings: list[str]) -> str | None:
    """A known field as text (dates are already ISO strings); containers are ignored."""
    value = front.get(key)
    if value is None or isinstance(value, bool):
        return None if value is None else str(value).lower()
    if isinstance(value, dict | list):
        warnings.append(f"frontmatter {key!r} is a {type(value).__name__}, expected a single "
                        "value; ignored")
        return None
    text = str(value).strip()
    return text or None


def _tags(value: Any) -> tuple[list[str], bool]:
    """(tags, invalid). A list of scalars or a comma string; anything else is invalid."""
    if value is None:
        return [], False
    if isinstance(value, str):
        items: list[Any] = value.split(",")
    elif isinstance(value, list) and not any(isinstance(v, dict | list) for v in value):
        items = [v for v in value if v is not None]
    else:
        return [], True
    cleaned = (str(v).strip() for v in items)
    return list(dict.fromkeys(t for t in cleaned if t)), False


# --- sections ------------------------------------------------------------------------
def split_sections(body: str) -> list[Section]:
    """Sections at ATX headings outside fenced code; a non-blank preamble comes first."""
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    heading: str | None = None
    level: int | None = None
    ancestry: tuple[str, ...] = ()
    lines: list[str] = []
    fence: Fence | None = None

    def flush() -> None:
        text = "\n".join(lines)
        if heading is not None or text.strip():
            sections.append(Section(heading=heading, level=level, body=text, ancestry=ancestry))

    for line in body.split("\n"):
        if fence is not None:
            if fence_closed(line, fence):
                fence = None
            lines.append(line)
            continue
        fence = fence_opened(line)
        if fence is not None:
            lines.append(line)
            continue
        match = _HEADING.match(line)
        if match is None:
            lines.append(line)
            continue
        flush()
        level = len(match.group(1))
        heading = _CLOSING_HASHES.sub("", match.group(2).strip()).strip()
        while stack and stack[-1][0] >= level:
            stack.pop()
        ancestry = tuple(h for _, h in stack)
        stack.append((level, heading))
        lines = []
    flush()
    return sections


def _first_h1(sections: list[Section]) -> str | None:
    return next((s.heading for s in sections if s.level == 1 and s.heading), None)

"""The search request: every search parameter, its bounds and its help, in one model.

:class:`SearchRequest` is the one description of a search call. The library
builds it directly, ``groove search`` / ``eval`` / ``tune`` derive their flags
from its fields (:func:`groove.cli.options.search_options`), and the MCP
``search`` tool's input schema is generated from it
(:func:`groove.server.tools.search_tool`). So a bound, a default or a help
text is written here once and the three interfaces cannot disagree. The
parameters are documented for users in docs/search.md.

Construction validates strictly, for the library, the CLI and MCP clients alike
(``limit="5"`` or ``min_quality=True`` is a mistake worth reporting, not
something to coerce) and raises
:class:`~groove.errors.InvalidArgument` naming the argument, what was wrong
and what is accepted; pydantic's own wording never reaches a user. A request
whose query is blank is a *template* (the CLI and eval fill the query in
later); :func:`validate_request` is the "ready to run" check the facade
applies before any model loads.

Adding a parameter is one change here: declare the field with a default,
its bounds as ``Field`` constraints and a ``description`` saying what it does.
A per-call override of a config key is declared with :func:`_override`,
which takes the bounds from the config model (default ``None``: the server's
setting), so the two cannot disagree.
The accepted-values text, the CLI flag (``--field-name``; a
:class:`Flag` marker renames it, list fields become repeatable flags, an
optional bool becomes ``--x/--no-x``), the MCP schema entry and the error
messages all follow from that declaration. Keep the type to ``bool``,
``int``, ``float``, ``str``, a ``Literal`` of strings or ``list[str]``, each
optionally ``| None``: the MCP schema drops the ``null`` arm, and the CLI
knows how to spell exactly those. The stage that uses the new value reads it
from the request (see ``search/pipeline.py``).
"""

from __future__ import annotations

import math
import types
import unicodedata
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import annotated_types
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    ValidationError,
    field_validator,
)
from pydantic.fields import FieldInfo
from pydantic_core import CoreSchema, core_schema

from groove.config.model import (
    FusionConfig,
    FusionMethod,
    MmrConfig,
    QualityFilterConfig,
    SearchConfig,
)
from groove.errors import InvalidArgument
from groove.search.exclusions import check_searchable
from groove.search.globs import check_glob

#: Input bounds (docs/search.md, "Parameters").
MAX_QUERY_BYTES = 1024
MAX_LIST_ENTRIES = 64
MAX_ENTRY_BYTES = 1024
MAX_LIMIT = 100


@dataclass(frozen=True)
class Utf8Text:
    """Annotation: text without NUL or lone surrogates, at most ``max_bytes`` UTF-8 bytes."""

    max_bytes: int

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_after_validator_function(self.check, handler(source))

    def check(self, value: str) -> str:
        if "\x00" in value:
            raise ValueError("contains a NUL character, which is not accepted")
        try:
            size = len(value.encode("utf-8"))
        except UnicodeEncodeError:
            raise ValueError("contains a lone surrogate (not valid Unicode text); send UTF-8 text") from None
        if size > self.max_bytes:
            raise ValueError(f"{size} bytes is too long")
        return value


@dataclass(frozen=True)
class Flag:
    """Annotation: the field's command-line flag when it is not ``--field-name``."""

    name: str


Entry = Annotated[str, Utf8Text(MAX_ENTRY_BYTES)]
#: A declared-field filter: field name -> the values it may (or may not) hold.
FieldValues = dict[Entry, Annotated[list[Entry], annotated_types.MaxLen(MAX_LIST_ENTRIES)]]

_BOUNDS = (annotated_types.Ge, annotated_types.Le, annotated_types.Gt, annotated_types.Lt)


def _override(section: type[BaseModel], key: str, description: str) -> Any:
    """A per-call override of a config key: the key's own bounds, default None (its value).

    The bounds are read from the config model, so a call can never accept a
    value the configuration would refuse, nor the reverse.
    """
    bounds: dict[str, Any] = {}
    for item in section.model_fields[key].metadata:
        if isinstance(item, _BOUNDS):
            name = type(item).__name__.lower()
            bounds[name] = getattr(item, name)
    return Field(None, description=f"{description} (default: server setting).", **bounds)


class ArgumentModel(BaseModel):
    """A request model (a tool's or a command's arguments) whose every refusal is one
    :class:`~groove.errors.InvalidArgument`, a line per argument naming what is accepted:
    what the CLI prints and what an MCP client gets as the tool error.

    A tuple given for an argument is read as the list it holds: click collects a
    repeated option as a tuple, JSON has only lists, and every list argument is strict.
    """

    def __init__(self, **data: Any) -> None:
        data = {key: list(value) if isinstance(value, tuple) else value
                for key, value in data.items()}
        try:
            self.__pydantic_validator__.validate_python(data, self_instance=self)
        except ValidationError as exc:
            raise argument_errors(exc, type(self)) from None


class SearchRequest(ArgumentModel):
    """One search call. ``None`` means "use the server's configured value"."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)

    query: Annotated[str, Utf8Text(MAX_QUERY_BYTES)] = Field(
        description='What to look for. "quoted phrase" and -exclusion work.')
    limit: int = Field(5, ge=1, le=MAX_LIMIT, description="Hits to return.")
    category: Annotated[str, Utf8Text(MAX_ENTRY_BYTES)] | None = Field(
        None, description="Only documents of this category (exact).")
    topic: Annotated[str, Utf8Text(MAX_ENTRY_BYTES)] | None = Field(
        None, description="Only documents of this topic (exact).")
    path_globs: Annotated[list[Entry] | None, Flag("--path-glob")] = Field(
        None, max_length=MAX_LIST_ENTRIES,
        description='gitignore-style globs; prefix ! to exclude, e.g. ["**", "!drafts/**"].')
    tags_any: Annotated[list[Entry] | None, Flag("--tag-any")] = Field(
        None, max_length=MAX_LIST_ENTRIES, description="Document has any of these tags.")
    tags_all: Annotated[list[Entry] | None, Flag("--tag-all")] = Field(
        None, max_length=MAX_LIST_ENTRIES, description="Document has all of these tags.")
    languages: Annotated[list[Entry] | None, Flag("--language")] = Field(
        None, max_length=MAX_LIST_ENTRIES,
        description='Only source files of these languages (parser ids, e.g. ["python", "rust"]).')
    symbol_kind: Annotated[list[Entry] | None, Flag("--symbol-kind")] = Field(
        None, max_length=MAX_LIST_ENTRIES,
        description='Only code chunks of these definition kinds (e.g. ["function", "method"]).')
    fields: Annotated[FieldValues | None, Flag("--field")] = Field(
        None, max_length=MAX_LIST_ENTRIES,
        description="Declared frontmatter fields: a document is kept when, for every key "
                    "given, it holds one of the values (exact match; keys declared in "
                    'groove-schema.toml), e.g. {"status": ["active"]}.')
    fields_not: Annotated[FieldValues | None, Flag("--field-not")] = Field(
        None, max_length=MAX_LIST_ENTRIES,
        description="Declared frontmatter fields: a document is left out when, for any key "
                    "given, it holds one of the values; a document without the key is kept.")
    date_from: Annotated[str, Utf8Text(MAX_ENTRY_BYTES)] | None = Field(
        None, description="Frontmatter date >= this (inclusive, e.g. 2024-01-01).")
    date_to: Annotated[str, Utf8Text(MAX_ENTRY_BYTES)] | None = Field(
        None, description="Frontmatter date <= this (inclusive).")
    min_quality: float | None = _override(QualityFilterConfig, "threshold", "Quality floor")
    include_low_quality: bool = Field(False, description="Do not hide low-quality chunks.")
    min_confidence_ratio: float | None = Field(
        None, description="Switch for low_confidence: 0 or less disables, a positive value "
                          "enables, non-finite means the server setting (default: server setting).")
    rerank: bool | None = Field(
        None, description="Run the cross-encoder reranker (default: server setting).")
    mmr: bool | None = Field(
        None, description="Diversify results with MMR (default: server setting).")
    mmr_lambda: float | None = _override(MmrConfig, "lambda_", "MMR relevance weight")
    mmr_same_doc_penalty: float | None = _override(
        MmrConfig, "same_doc_penalty", "MMR penalty for a second hit from the same document")
    parent_retriever: bool | None = Field(
        None, description="Expand hits with their whole short document or sibling chunks "
                          "(default: server setting).")
    fusion: FusionMethod | None = Field(
        None, description="How the two legs are fused: rank-based RRF or the convex "
                          "combination of normalised scores (default: server setting).")
    fusion_vector_weight: float | None = _override(
        FusionConfig, "vector_weight", "Convex fusion's weight on the vector leg")
    max_chunks_per_document: int | None = _override(
        SearchConfig, "max_chunks_per_document",
        "At most this many hits from one document; 0 = unlimited")
    all_language_spans: bool | None = Field(
        None, description="Also compute match_spans for non-ASCII terms, with Unicode case "
                          "folding (default: server setting).")
    min_score: float | None = Field(
        None, description="Drop hits whose score is below this (the score as returned: its "
                          "scale follows the fusion method, docs/search.md); the answer's "
                          "notes say how many were dropped.")
    explain: bool = Field(
        False, description="Add to every hit how the ranking reached it: each leg's score "
                           "and rank, the fusion, and every later stage that moved it.")
    collection: Annotated[list[Entry] | None, Flag("--collection")] = Field(
        None, max_length=MAX_LIST_ENTRIES,
        description="Search only these collections, by name, when the server serves "
                    "several (docs/collections.md; default: all of them).")

    def replace(self, **changes: Any) -> SearchRequest:
        """A validated copy with ``changes`` applied (the original is left alone)."""
        return type(self)(**{**self.model_dump(), **changes})

    @field_validator("category", "topic", "date_from", "date_to", mode="before")
    @classmethod
    def _empty_text_is_unset(cls, value: Any) -> Any:
        return None if value == "" else value

    @field_validator("path_globs")
    @classmethod
    def _globs_match_something(cls, globs: list[str] | None) -> list[str] | None:
        if globs == []:
            raise ValueError('[] matches nothing; use null, or ["**", "!a/**"]')
        for glob in globs or []:
            check_glob(glob)
        return globs

    @field_validator("collection")
    @classmethod
    def _collection_names(cls, names: list[str] | None) -> list[str] | None:
        """``[]`` would search nothing; a name is checked against the served ones later."""
        if names == []:
            raise ValueError("[] names no collection; leave it out to search all of them")
        return None if names is None else list(dict.fromkeys(names))

    @field_validator("languages")
    @classmethod
    def _known_languages(cls, languages: list[str] | None) -> list[str] | None:
        """A language groove has no parser for can match nothing: refused, naming the ones it has."""
        from groove.parsers import PARSER_ALIASES
        from groove.parsers.code.grammars import LANGUAGES

        for language in languages or []:
            if PARSER_ALIASES.get(language, language) not in LANGUAGES:
                raise ValueError(f"{language!r} is not a source language groove reads (known: "
                                 f"{', '.join(LANGUAGES)})")
        return languages

    @field_validator("fields", "fields_not")
    @classmethod
    def _values_given(cls, fields: dict[str, list[str]] | None) -> dict[str, list[str]] | None:
        """``{"status": []}`` would match nothing (or exclude nothing): refused, naming the key."""
        for key, values in (fields or {}).items():
            if not values:
                raise ValueError(f"{key!r} lists no value; give one or more values to match, "
                                 "or leave the key out")
        return fields

    @field_validator("min_confidence_ratio", mode="before")
    @classmethod
    def _confidence_ratio(cls, value: Any) -> Any:
        """Non-finite means "use the server's value"; negative means 0 (disabled)."""
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"expected a number, got {type(value).__name__}")
        return max(0.0, float(value)) if math.isfinite(value) else None


def fields_from_pairs(flag: str, pairs: tuple[str, ...] | list[str]) -> dict[str, list[str]]:
    """``key=value`` command-line entries as a fields mapping (split at the first ``=``).

    A key given twice collects its values (``--field status=a --field status=b``
    keeps documents holding either).
    """
    out: dict[str, list[str]] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InvalidArgument(f"{flag}: {pair!r} is not key=value; accepted: a declared "
                                  "field name, '=', and the value to match exactly")
        out.setdefault(key, []).append(value)
    return out


def has_term(query: str) -> bool:
    """Whether ``query`` holds anything but punctuation, spaces and control characters."""
    return any(unicodedata.category(ch)[0] not in "PZC" for ch in query)


def validate_request(request: SearchRequest) -> SearchRequest:
    """The request ready to run: re-validated (it may have been changed since it was
    built) and with a query that is more than whitespace and more than exclusions.
    Returns a copy."""
    checked = request.replace()
    if not checked.query.strip():
        raise InvalidArgument("query: must contain something other than whitespace")
    if not has_term(checked.query):  # 1,000 quotes: nothing to match, seconds to embed
        raise InvalidArgument("query: has no term to search for (only punctuation, quotes "
                              "and spaces); accepted: text with at least one letter, digit "
                              "or symbol")
    check_searchable(checked.query)
    return checked


# --------------------------------------------------------------------------- field facts


def field_help(name: str, model: type[BaseModel] | None = None) -> str:
    """A field's description plus what it accepts (and its default when it has a fixed one).

    ``model`` is :class:`SearchRequest` unless another argument model (the
    graph's) uses the same wording.
    """
    info = (model or SearchRequest).model_fields[name]
    default = "" if info.default in (None, False) or info.is_required() else f"; default {info.default}"
    return f"{info.description} Accepted: {accepted(name, model)}{default}."


def accepted(name: str, model: type[BaseModel] | None = None) -> str:
    """What a field accepts, in words, derived from its type and constraints."""
    info = (model or SearchRequest).model_fields[name]
    return _describe(info.annotation, info.metadata)


def flag_name(name: str, model: type[BaseModel] | None = None) -> str:
    """The command-line flag of a field."""
    info = (model or SearchRequest).model_fields[name]
    flags = [m for m in info.metadata if isinstance(m, Flag)]
    return flags[0].name if flags else "--" + name.replace("_", "-")


def base_type(info: FieldInfo) -> Any:
    """The field's type without ``| None`` and annotations: ``bool``, ``int``, ``list``, ..."""
    tp = _unwrap(info.annotation)[0]
    origin = get_origin(tp)
    return tp if origin is None or origin is Literal else origin


def _unwrap(tp: Any) -> tuple[Any, list[Any]]:
    """``tp`` without ``| None`` and ``Annotated`` layers, plus the metadata those layers held."""
    metadata: list[Any] = []
    while True:
        if get_origin(tp) is Annotated:
            tp, *extra = get_args(tp)
            metadata += extra
        elif get_origin(tp) in (Union, types.UnionType) and type(None) in get_args(tp):
            arms = [a for a in get_args(tp) if a is not type(None)]
            if len(arms) != 1:
                return tp, metadata
            tp = arms[0]
        else:
            return tp, metadata


def _describe(annotation: Any, field_metadata: list[Any]) -> str:
    tp, extra = _unwrap(annotation)
    metadata = [*field_metadata, *extra]
    low = next((m.ge for m in metadata if isinstance(m, annotated_types.Ge)), None)
    high = next((m.le for m in metadata if isinstance(m, annotated_types.Le)), None)
    if tp is bool:
        return "true or false"
    if tp is int:
        return f"an integer {low}..{high}" if low is not None and high is not None else "an integer"
    if tp is float:
        if low is not None and high is not None:
            return f"a number in [{low:g}, {high:g}]"
        return f"a finite number >= {low:g}" if low is not None else "a number"
    if get_origin(tp) is Literal:
        return "one of: " + ", ".join(str(a) for a in get_args(tp))
    if tp is str:
        text = [m for m in metadata if isinstance(m, Utf8Text)]
        return f"text of at most {text[0].max_bytes} UTF-8 bytes" if text else "text"
    if get_origin(tp) is dict:
        most = next((m.max_length for m in metadata if isinstance(m, annotated_types.MaxLen)), None)
        values = _describe(get_args(tp)[1], [])
        return (f"an object of at most {most} field names (each text of at most "
                f"{MAX_ENTRY_BYTES} UTF-8 bytes), each mapped to {values}")
    if get_origin(tp) is list:
        most = next((m.max_length for m in metadata if isinstance(m, annotated_types.MaxLen)), None)
        entry = _describe(get_args(tp)[0], [])
        return (f"a list of at most {most} entries, each {entry}" if most is not None
                else f"a list, each entry {entry}")
    return str(tp)


_EXPECTED = {"int": "an integer", "float": "a number", "bool": "true or false",
             "string": "a string", "list": "a list"}


def argument_errors(exc: ValidationError, model: type[BaseModel]) -> InvalidArgument:
    """A model's validation failure as one InvalidArgument, a line per argument."""
    return InvalidArgument("\n".join(_message(err, model) for err in exc.errors()))


def _message(err: Any, model: type[BaseModel] | None = None) -> str:
    """One pydantic error as ``name: what was wrong; accepted: what is accepted``."""
    model = model or SearchRequest
    loc = err["loc"]
    name = str(loc[0]) if loc else "request"
    if err["type"] == "extra_forbidden":
        return f"{name}: unknown argument; accepted: {', '.join(model.model_fields)}"
    where = name if len(loc) == 1 else f"{name} entry"
    value = err.get("input")
    kind = err["type"]
    if kind == "value_error":
        problem = str(err["msg"]).removeprefix("Value error, ")
    elif kind == "missing":
        problem = "is required"
    elif kind == "finite_number":
        problem = f"{value!r} is not a finite number"
    elif kind == "too_long":
        problem = f"{len(value)} entries is too many"
    elif kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        problem = f"{value!r} is out of range"
    else:
        wanted = _EXPECTED.get(kind.split("_")[0], "another value")
        problem = f"expected {wanted}, got {type(value).__name__} {_short(value)}"
    return f"{where}: {problem}; accepted: {accepted(name, model) if name in model.model_fields else '?'}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."

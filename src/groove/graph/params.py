"""Connection-graph arguments: one pydantic model for the library, the CLI and the MCP tool.

:class:`GraphParams` holds every bound, default and help text once (docs/graph.md).
``groove graph`` derives its flags from the fields, the MCP
``get_connection_graph`` tool its input schema (no union types) and
:func:`groove.graph.connection_graph` validates through it, so the three can
no longer disagree (``depth: 0`` — seeds only — is accepted everywhere).
A refusal names the argument, what was wrong and what is accepted, in the
same words as the search request's (:mod:`groove.search.request`); pydantic's
own text never reaches a user. Path arguments go through the one lexical path
gate (:func:`groove.paths.check_rel_path`), which raises ``PathRefused``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, field_validator

from groove.search.request import ArgumentModel, Flag, Utf8Text

DEPTH_MAX = 3
FAN_OUT_MAX = 20
MAX_SEED_CHUNKS_RANGE = (1, 1000)
MAX_NODES_RANGE = (1, 2000)
EXCLUDE_PATHS_MAX = 64
PATH_ARG_MAX_BYTES = 1024
SNIPPET_CHARS = 200
SEED_STRATEGIES = {"all_chunks": "all_chunks", "all-chunks": "all_chunks", "centroid": "centroid"}

TextArg = Annotated[str, Utf8Text(PATH_ARG_MAX_BYTES)]


def _gated(value: str, what: str) -> str:
    """The length bound (InvalidArgument), then the lexical path gate (PathRefused)."""
    from groove.paths import check_rel_path

    if len(value.encode("utf-8", "surrogatepass")) > PATH_ARG_MAX_BYTES:
        raise ValueError(f"is longer than {PATH_ARG_MAX_BYTES} UTF-8 bytes")
    return check_rel_path(value, what=what)


class GraphParams(ArgumentModel):
    """The validated, normalised arguments of one graph request."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, frozen=True)

    start: str = Field(description="Path of the indexed document to start from, "
                                       "relative to the knowledge base.")
    depth: int = Field(2, ge=0, le=DEPTH_MAX, description="Breadth-first depth; 0 = the start "
                                                          "document only.")
    fan_out: int = Field(5, ge=0, le=FAN_OUT_MAX, description="Neighbours per node; 0 = the "
                                                              "start document only.")
    min_similarity: float = Field(
        0.3, ge=0.0, le=1.0,
        description="Similarity floor on the model's calibrated scale: 0 = as similar as "
                    "unrelated notes usually are, 1 = identical (docs/graph.md).")
    seed_strategy: Literal["all_chunks", "all-chunks", "centroid"] = Field(
        "all_chunks", description="Seed from every chunk of the start document, or from "
                                  "their centroid.")
    max_seed_chunks: int = Field(32, ge=MAX_SEED_CHUNKS_RANGE[0], le=MAX_SEED_CHUNKS_RANGE[1],
                                 description="Start-document chunks used as seeds.")
    edges: Literal["links", "similarity", "both"] = Field(
        "both", description="Which connections to follow: the links the notes write "
                            "(wikilinks and Markdown links, both directions), embedding "
                            "similarity, or both (links first).")
    max_nodes: int = Field(100, ge=MAX_NODES_RANGE[0], le=MAX_NODES_RANGE[1],
                           description="Node budget.")
    dedup_by_path: bool = Field(False, description="One node per document (the start document "
                                                   "included).")
    category: TextArg | None = Field(None, description="Only neighbours of this category (exact).")
    topic: TextArg | None = Field(None, description="Only neighbours of this topic (exact).")
    exclude_paths: Annotated[list[str] | None, Flag("--exclude-path")] = Field(
        None, max_length=EXCLUDE_PATHS_MAX,
        description="Documents or folders to leave out, relative to the knowledge base.")

    @field_validator("start")
    @classmethod
    def _start_in_kb(cls, value: str) -> str:
        return _gated(value, "start")

    @field_validator("seed_strategy")
    @classmethod
    def _one_spelling(cls, value: str) -> str:
        return SEED_STRATEGIES[value]

    @field_validator("category", "topic", mode="before")
    @classmethod
    def _empty_text_is_unset(cls, value: Any) -> Any:
        return None if value == "" else value

    @field_validator("exclude_paths")
    @classmethod
    def _excludes_in_kb(cls, values: list[str] | None) -> list[str] | None:
        if not values:
            return None
        kept = [_gated(v, "exclude_paths entry").rstrip("/") for v in values]
        return [p for p in kept if p] or None


class LinksParams(ArgumentModel):
    """The arguments of one links request (``groove links``, the MCP ``links`` tool)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    path: str = Field(description="Path of the indexed document, relative to the knowledge "
                                  "base, as in search results.")
    backlinks: bool = Field(False, description="The links to the document (what links "
                                               "here) instead of the links written in it.")

    @field_validator("path")
    @classmethod
    def _path_in_kb(cls, value: str) -> str:
        return _gated(value, "path")


def validate_graph_args(**arguments: Any) -> GraphParams:
    """Check every bound (raising InvalidArgument / PathRefused) without touching the index."""
    return GraphParams(**arguments)

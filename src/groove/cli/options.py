"""Option groups shared by several commands, each written once.

``kb_options`` gives every command ``--kb-path/--config/--db-path`` and hands
it a ready :class:`~groove.kb.KnowledgeBase` (config errors exit 2 before any
model loads). ``search_options`` adds every search filter and stage flag (docs/search.md) and hands
the command a :class:`~groove.search.request.SearchRequest` template; it is
used by both ``search`` and ``eval`` so the two can never drift apart.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from groove.errors import GrooveError
from groove.rerankers import RERANKERS
from groove.search.request import SearchRequest


def fail(message: str, code: int = 2) -> None:
    """Print ``message`` to stderr and exit with ``code`` (no traceback)."""
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


def handle_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """Turn GrooveError into a one-line message on stderr and its exit code."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except GrooveError as exc:
            fail(str(exc), exc.exit_code)
        except KeyboardInterrupt:
            fail("interrupted", 130)

    return wrapper


def kb_options(overrides: Callable[[dict[str, Any]], dict[str, Any]] | None = None):
    """Add ``--kb-path/--config/--db-path`` and pass ``kb`` (a KnowledgeBase).

    ``overrides`` maps the command's own parsed options to config overrides
    (CLI beats groove.toml beats defaults); those options are still passed on.
    """

    def decorator(func: Callable[..., Any]) -> Callable[..., Any]:
        @click.option("--kb-path", type=click.Path(path_type=Path), default=None,
                      help="Folder of notes to index (overrides kb_path in groove.toml).")
        @click.option("--config", "config_path", type=click.Path(path_type=Path), default=None,
                      help="groove.toml to use (trusted); default: discovered.")
        @click.option("--db-path", type=click.Path(path_type=Path), default=None,
                      help="Index file (default <kb_path>/.groove.db).")
        @functools.wraps(func)
        @handle_errors
        def wrapper(kb_path: Path | None, config_path: Path | None, db_path: Path | None,
                    **kwargs: Any) -> Any:
            from groove.config import load_config
            from groove.kb import KnowledgeBase

            extra = overrides(kwargs) if overrides else None
            config = load_config(config_path=config_path, kb_path=kb_path, db_path=db_path,
                                 overrides=extra or None)
            kb = KnowledgeBase(config)
            try:
                return func(kb=kb, **kwargs)
            finally:
                kb.close()

        return wrapper

    return decorator


def format_option(*choices: str, default: str):
    return click.option("--format", "fmt", type=click.Choice(choices), default=default,
                        show_default=True, help="Output format.")


def _csv_list(values: tuple[str, ...]) -> list[str] | None:
    return list(values) if values else None


def search_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Every search filter and stage flag; passes ``base_request`` (query left empty)."""

    @click.option("--limit", type=int, default=5, show_default=True, help="Hits to return (1..100).")
    @click.option("--category", default=None, help="Only this category (exact).")
    @click.option("--topic", default=None, help="Only this topic (exact).")
    @click.option("--path-glob", "path_globs", multiple=True,
                  help="gitignore-style glob; repeat; prefix ! to exclude.")
    @click.option("--tag-any", "tags_any", multiple=True, help="Has any of these tags; repeat.")
    @click.option("--tag-all", "tags_all", multiple=True, help="Has all of these tags; repeat.")
    @click.option("--date-from", default=None, help="Frontmatter date >= this (inclusive).")
    @click.option("--date-to", default=None, help="Frontmatter date <= this (inclusive).")
    @click.option("--min-quality", type=float, default=None, help="Quality floor in [0,1].")
    @click.option("--include-low-quality", is_flag=True, help="Do not hide low-quality chunks.")
    @click.option("--min-confidence-ratio", type=float, default=None,
                  help="low_confidence threshold (0 disables).")
    @click.option("--rerank/--no-rerank", default=None, help="Run the cross-encoder reranker.")
    @click.option("--reranker", default=None,
                  help=f"Reranker id (overrides groove.toml): {RERANKERS.accepted()}.")
    @click.option("--mmr/--no-mmr", default=None, help="Diversify with MMR.")
    @click.option("--mmr-lambda", type=float, default=None, help="MMR relevance weight in [0,1].")
    @click.option("--mmr-same-doc-penalty", type=float, default=None, help="MMR same-document penalty (>= 0).")
    @click.option("--parent-retriever/--no-parent-retriever", default=None,
                  help="Expand hits with their parent document or siblings.")
    @functools.wraps(func)
    def wrapper(**kwargs: Any) -> Any:
        request = SearchRequest(
            query="",
            limit=kwargs.pop("limit"),
            category=kwargs.pop("category"),
            topic=kwargs.pop("topic"),
            path_globs=_csv_list(kwargs.pop("path_globs")),
            tags_any=_csv_list(kwargs.pop("tags_any")),
            tags_all=_csv_list(kwargs.pop("tags_all")),
            date_from=kwargs.pop("date_from"),
            date_to=kwargs.pop("date_to"),
            min_quality=kwargs.pop("min_quality"),
            include_low_quality=kwargs.pop("include_low_quality"),
            min_confidence_ratio=kwargs.pop("min_confidence_ratio"),
            rerank=kwargs.pop("rerank"),
            mmr=kwargs.pop("mmr"),
            mmr_lambda=kwargs.pop("mmr_lambda"),
            mmr_same_doc_penalty=kwargs.pop("mmr_same_doc_penalty"),
            parent_retriever=kwargs.pop("parent_retriever"),
        )
        return func(base_request=request, **kwargs)

    return wrapper


def search_overrides(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Config overrides carried by the search flags (only ``--reranker``)."""
    reranker = kwargs.pop("reranker", None)
    return {"reranker": reranker} if reranker else {}

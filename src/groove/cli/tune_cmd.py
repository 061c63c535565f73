"""``groove tune``: suggest fusion settings from the golden set (applies nothing)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from groove.cli import cli
from groove.cli.options import (
    format_option,
    golden_option,
    kb_options,
    search_options,
    search_overrides,
)
from groove.kb import KnowledgeBase
from groove.search.request import SearchRequest


@cli.command("tune")
@golden_option
@format_option("text", "json", default="text")
@kb_options(overrides=search_overrides)
@search_options(omit=("limit",))  # every query searches SEARCH_DEPTH deep
def tune_command(kb: KnowledgeBase, base_request: SearchRequest, golden: Path | None, fmt: str) -> None:
    """Sweep rrf_k and the bm25 weights with nested leave-one-query-out cross-validation."""
    from groove.evaluation.tune import run_tune

    report = run_tune(kb, base_request, golden_path=golden)
    if fmt == "json":
        click.echo(json.dumps(report.to_json(), ensure_ascii=False, indent=2))
    else:
        click.echo(report.render_text())

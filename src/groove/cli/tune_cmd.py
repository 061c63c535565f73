"""``groove tune``: suggest fusion settings from the golden set (applies nothing)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from groove.cli import cli
from groove.cli.options import golden_run_options, golden_targets
from groove.collections import Collections
from groove.kb import KnowledgeBase
from groove.search.request import SearchRequest


@cli.command("tune")
@golden_run_options
def tune_command(kb: KnowledgeBase | Collections, base_request: SearchRequest,
                 golden: Path | None, depth: int | None, no_color: bool, fmt: str) -> None:
    """Sweep rrf_k and the bm25 weights with nested leave-one-query-out cross-validation.

    Each query fetches the largest k of --k / [eval] k_values hits, or --limit
    when that is deeper. The text output is never coloured (--no-color is accepted).
    """
    from groove.evaluation.tune import run_tune

    [(_, one, request)] = golden_targets(kb, base_request, golden, "tune")
    deepest = max([depth or 0, *one.config.eval.k_values])
    report = run_tune(one, request, golden_path=golden, depth=deepest)
    if fmt == "json":
        click.echo(json.dumps(report.to_json(), ensure_ascii=False, indent=2))
    else:
        click.echo(report.render_text())

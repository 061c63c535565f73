"""``groove eval``: score the real search pipeline against a golden set."""

from __future__ import annotations

import json
from pathlib import Path

import click

from groove.cli import cli
from groove.cli.options import golden_run_options, golden_targets
from groove.collections import Collections
from groove.kb import KnowledgeBase
from groove.search.request import SearchRequest


@cli.command("eval")
@click.option("--unanswerable", type=click.Path(path_type=Path), default=None,
              help="YAML of questions the KB does not answer (`queries:` list); reports the share "
                   "flagged low_confidence.")
@click.option("--fail-on-regression", is_flag=True,
              help="Exit 1 when a metric drops beyond [eval] regression_threshold.")
@click.option("--no-history", is_flag=True, help="Compare with the history but do not record this run.")
@click.option("--no-diff", is_flag=True,
              help="Do not compare with the previous run (no arrows; --fail-on-regression never fires).")
@golden_run_options
def eval_command(kb: KnowledgeBase | Collections, base_request: SearchRequest,
                 golden: Path | None,
                 unanswerable: Path | None, fail_on_regression: bool, no_history: bool,
                 no_diff: bool, depth: int | None, no_color: bool, fmt: str) -> None:
    """Report recall@k, MRR and nDCG@k, with arrows against the previous compatible run.

    With a groove.toml naming collections, each collection (or those named by
    --collection) is evaluated alone against its own golden file, one report
    each (JSON: ``{"collections": {name: report}}``).
    """
    from rich.console import Console

    from groove.evaluation import run_eval

    reports = {}
    for name, one, request in golden_targets(kb, base_request, golden, "eval"):
        reports[name] = run_eval(one, request, golden_path=golden,
                                 unanswerable_path=unanswerable, record_history=not no_history,
                                 depth=depth, compare=not no_diff)
        for warning in reports[name].warnings:
            click.echo(f"warning: {name + ': ' if name else ''}{warning}", err=True)
    if fmt == "json":
        body = (reports[None].to_json() if None in reports else
                {"collections": {name: r.to_json() for name, r in reports.items()}})
        click.echo(json.dumps(body, ensure_ascii=False, indent=2))
    else:
        console = Console(highlight=False, soft_wrap=True, no_color=no_color or None)
        for number, (name, report) in enumerate(reports.items()):
            if name is not None:
                console.print(("" if number == 0 else "\n") + f"== collection {name} ==",
                              markup=False)
            console.print(report.render_text(markup=not no_color))
    if fail_on_regression and any(report.regressed for report in reports.values()):
        raise SystemExit(1)

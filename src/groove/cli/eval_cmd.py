"""``groove eval``: score the real search pipeline against a golden set."""

from __future__ import annotations

import json
from pathlib import Path

import click

from groove.cli import cli
from groove.cli.options import golden_run_options
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
def eval_command(kb: KnowledgeBase, base_request: SearchRequest, golden: Path | None,
                 unanswerable: Path | None, fail_on_regression: bool, no_history: bool,
                 no_diff: bool, depth: int | None, no_color: bool, fmt: str) -> None:
    """Report recall@k, MRR and nDCG@k, with arrows against the previous compatible run."""
    from rich.console import Console

    from groove.evaluation import run_eval

    report = run_eval(kb, base_request, golden_path=golden, unanswerable_path=unanswerable,
                      record_history=not no_history, depth=depth, compare=not no_diff)
    for warning in report.warnings:
        click.echo(f"warning: {warning}", err=True)
    if fmt == "json":
        click.echo(json.dumps(report.to_json(), ensure_ascii=False, indent=2))
    else:
        Console(highlight=False, soft_wrap=True, no_color=no_color or None).print(
            report.render_text(markup=not no_color))
    if fail_on_regression and report.regressed:
        raise SystemExit(1)

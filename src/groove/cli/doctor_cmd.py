"""``groove doctor``: report index problems and the command fixing each; exit 0/1/2."""

from __future__ import annotations

import json
import sys

import click

from groove.cli import cli
from groove.cli.options import format_option, kb_options
from groove.collections import Collections
from groove.kb import KnowledgeBase


@cli.command("doctor")
@format_option("text", "json", default="text")
@kb_options(collections=True, select=True)
def doctor_command(kb: KnowledgeBase | Collections, fmt: str) -> None:
    """Check integrity, servability and model metadata. Reports; never repairs.

    With a groove.toml naming collections, each collection is checked in turn
    (or those named by --collection); the exit status is the worst of theirs.
    """
    from groove.checks.doctor import run_doctor

    if isinstance(kb, Collections):
        _doctor_collections(kb, fmt)
        return
    report = run_doctor(kb)
    if fmt == "json":
        click.echo(json.dumps(report.to_json(), ensure_ascii=False, indent=2))
    elif report.error is not None:
        click.echo(f"error: {report.error}", err=True)
    else:
        click.echo(report.render_text(), nl=False)
    sys.exit(report.exit_code)


def _doctor_collections(kbs: Collections, fmt: str) -> None:
    """One report per collection: a titled block each, or JSON ``{"collections": {...}}``."""
    from groove.checks.doctor import run_doctor

    reports = {name: run_doctor(one) for name, one in kbs}
    if fmt == "json":
        click.echo(json.dumps({"collections": {n: r.to_json() for n, r in reports.items()}},
                              ensure_ascii=False, indent=2))
    else:
        for number, (name, report) in enumerate(reports.items()):
            click.echo(("" if number == 0 else "\n") + f"== collection {name} ==")
            if report.error is not None:
                click.echo(f"error: {name}: {report.error}", err=True)
            else:
                click.echo(report.render_text(), nl=False)
    sys.exit(max(report.exit_code for report in reports.values()))

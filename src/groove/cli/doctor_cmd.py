"""``groove doctor``: report index problems and the command fixing each; exit 0/1/2."""

from __future__ import annotations

import json
import sys

import click

from groove.cli import cli
from groove.cli.options import format_option, kb_options
from groove.kb import KnowledgeBase


@cli.command("doctor")
@format_option("text", "json", default="text")
@kb_options()
def doctor_command(kb: KnowledgeBase, fmt: str) -> None:
    """Check integrity, servability and model metadata. Reports; never repairs."""
    from groove.checks.doctor import run_doctor

    report = run_doctor(kb)
    if fmt == "json":
        click.echo(json.dumps(report.to_json(), ensure_ascii=False, indent=2))
    elif report.error is not None:
        click.echo(f"error: {report.error}", err=True)
    else:
        click.echo(report.render_text(), nl=False)
    sys.exit(report.exit_code)

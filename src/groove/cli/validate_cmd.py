"""``groove validate``: frontmatter against groove-schema.toml; exit 0 clean / 1 violations / 2 schema error."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from groove.cli import cli
from groove.cli.options import format_option, kb_options, no_color_option
from groove.kb import KnowledgeBase


@cli.command("validate")
@click.option("--schema", "schema_path", type=click.Path(path_type=Path), default=None,
              help="Schema file (default <kb_path>/groove-schema.toml).")
@click.option("--fail-fast", is_flag=True, help="Stop at the first violation.")
@click.option("--strict", is_flag=True,
              help="Also report each frontmatter key the schema does not declare "
                   "(undeclared_field), as [options] allow_unknown_fields = false does.")
@no_color_option
@format_option("text", "json", "github", default="text")
@kb_options(one=True)
def validate_command(kb: KnowledgeBase, schema_path: Path | None, fail_fast: bool,
                     strict: bool, no_color: bool, fmt: str) -> None:
    """Check the frontmatter of every indexable Markdown file against the schema.

    The text output is never coloured (--no-color is accepted for GrooveSeek's scripts).
    """
    from groove.checks.validate import run_validate

    report = run_validate(kb, schema_path, fail_fast, strict)
    if fmt == "json":
        click.echo(json.dumps(report.to_json(), ensure_ascii=False, indent=2))
    elif fmt == "github":
        click.echo(report.render_github(), nl=False)
    else:
        for note in report.notes:
            click.echo(f"note: {note}", err=True)
        click.echo(report.render_text(), nl=False)
    sys.exit(report.exit_code)

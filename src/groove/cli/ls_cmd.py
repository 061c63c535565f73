"""``groove ls``: the indexed documents under a folder, with size, chunks and state."""

from __future__ import annotations

import json
from collections import Counter

import click

from groove._logging import escape_controls
from groove.cli import cli
from groove.cli.options import format_option, kb_options
from groove.kb import KnowledgeBase


def human_size(size: int | None) -> str:
    """``535 B``, ``1.2 KiB``, ``3.4 MiB``; ``-`` when unknown."""
    if size is None:
        return "-"
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KiB"
    return f"{size / (1024 * 1024):.1f} MiB"


@cli.command("ls")
@click.argument("folder", required=False)
@format_option("text", "json", default="text")
@kb_options(one=True, prefix_of="folder")
def ls_command(kb: KnowledgeBase, fmt: str, folder: str | None) -> None:
    """List the indexed documents (and skipped files) under FOLDER, with size and state.

    States: embedded, partly embedded, full-text only (found by keywords
    until `groove index` embeds it), no text, skipped (with the reason).
    A count per state goes to stderr.

    Example: groove ls --kb-path ~/notes guides/rust
    """
    from groove.documents.listing import list_folder

    listed = list_folder(kb, folder)
    if fmt == "json":
        click.echo(json.dumps([item.to_json() for item in listed], ensure_ascii=False, indent=2))
    else:
        for item in listed:
            chunks = "-" if item.state == "skipped" else str(item.chunks)
            reason = f"  ({escape_controls(item.reason, one_line=True)})" if item.reason else ""
            click.echo(f"{item.state:<16} {human_size(item.size):>9} {chunks:>6}  "
                       f"{escape_controls(item.path, one_line=True)}{reason}")
    counts = Counter(item.state for item in listed)
    summary = ", ".join(f"{n} {state}" for state, n in sorted(counts.items()))
    click.echo(f"{len(listed)} listed: {summary or 'nothing indexed yet'}", err=True)

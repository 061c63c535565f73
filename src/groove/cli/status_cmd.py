"""``groove status``: one ``Key: value`` line per fact about the index."""

from __future__ import annotations

import click

from groove.cli import cli
from groove.cli.options import kb_options
from groove.kb import KnowledgeBase

_LABELS = (
    ("documents", "Documents"),
    ("chunks", "Chunks"),
    ("model", "Model"),
    ("context_mode", "Context mode"),
    ("index", "Index"),
    ("last_indexed", "Last indexed"),
    ("tags_unreadable", "Unreadable tags"),
)


@cli.command("status")
@kb_options()
def status_command(kb: KnowledgeBase) -> None:
    """Show what the index holds; exit 2 with a message on stderr when there is none."""
    status = kb.status()
    for key, label in _LABELS:
        value = status.get(key)
        click.echo(f"{label}: {'never' if value is None else value}")

"""``groove status``: one ``Key: value`` line per fact about the index, or the same as JSON.

The JSON object is stable and documented (docs/index-lifecycle.md, "Status
fields"); ``/api/admin/status`` answers the same shape.
"""

from __future__ import annotations

import json
from typing import Any

import click

from groove._logging import escape_controls
from groove.cli import cli
from groove.cli.options import format_option, kb_options
from groove.cli.usage import fail
from groove.collections import Collections, status_of
from groove.kb import KnowledgeBase
from groove.store.base import TEXT_ONLY

_LABELS = (
    ("documents", "Documents"),
    ("chunks", "Chunks"),
    ("model", "Model"),
    ("engine", "Engine"),
    ("context_mode", "Context mode"),
    ("index_path", "Index"),
    ("last_indexed", "Last indexed"),
    ("tags_unreadable", "Unreadable tags"),
    ("frontmatter_unparsed", "Unparsed frontmatter"),
)


def index_lines(status: dict[str, Any]) -> list[str]:
    """The index-state lines: state, embedded share, writer, last change, changed and skipped files."""
    state = status["index"]
    writer = status.get("writer")
    running = "no"
    if writer is not None:
        running = f"yes (pid {writer['pid']}: {writer['command']})"
    elif state["build_running"]:
        running = "yes"
    return [
        f"Index state: {state['state']}",
        f"Documents embedded: {state['documents_embedded']}/{state['documents']}",
        f"Chunks embedded: {state['chunks_embedded']}/{state['chunks']}",
        f"Build running: {running}",
        f"Last change: {state['last_change'] or 'never'}",
        f"Files newer than the index: {_count(state['files_newer'])}",
        f"Files skipped: {_count(state['files_skipped'])}"
        + (" (run groove doctor to see why)" if state["files_skipped"] else ""),
    ]


def last_indexed(status: dict[str, Any]) -> str:
    """When a run last finished, and why an incomplete index is incomplete.

    ``last_indexed`` is written when a run reaches its end; a run stopped
    before (Ctrl-C, a crash) leaves documents behind and the index
    ``incomplete``, so "never" alone would contradict the document count. A
    one-shot search on a new folder writes the text only, on purpose: that is
    said as such, not as an interruption nobody made.
    """
    last = status["last_indexed"]
    state = status["index"]
    if state["state"] != "incomplete" or state["build_running"]:
        return last or "never"
    stopped = state["last_change"] or "an unknown time"
    if status.get("last_run") == TEXT_ONLY:
        return (f"{last or 'never completed'}; a search indexed the text of the files without "
                f"embedding it (full-text answers only; its last write: {stopped}): run "
                "`groove index` to embed it")
    return (f"{last or 'never completed'}; the last run stopped before its end (interrupted; "
            f"its last write: {stopped}): run `groove index` to finish it")


def _count(value: int | None) -> str:
    if value is None:
        return "not counted yet (a large folder: `groove status --count-files` waits for the count)"
    return str(value)


@cli.command("status")
@format_option("text", "json", default="text")
@click.option("--count-files", is_flag=True,
              help="Wait for the count of changed and skipped files however long the walk of "
                   "the folder takes (by default a folder too large to walk in 0.2 s "
                   "answers 'not counted yet').")
@kb_options(collections=True, select=True)
def status_command(kb: KnowledgeBase | Collections, fmt: str, count_files: bool) -> None:
    """Show what the index holds; exit 2 with a message on stderr when there is none.

    With a groove.toml naming collections: one block per collection (JSON: an
    object by name), a collection without an index saying so in its block.
    """
    if isinstance(kb, Collections):
        _collections_status(kb, fmt, count_files)
        return
    status = kb.status(count_files=count_files)
    if fmt == "json":
        click.echo(json.dumps(status, ensure_ascii=False, indent=2))
        return
    _status_lines(status)


def _collections_status(kbs: Collections, fmt: str, count_files: bool) -> None:
    """Every collection's status, by name; exit 2 when none of them has an index."""
    statuses = status_of(kbs, count_files=count_files)
    if fmt == "json":
        click.echo(json.dumps({"collections": statuses}, ensure_ascii=False, indent=2))
    else:
        for number, (name, status) in enumerate(statuses.items()):
            click.echo(("" if number == 0 else "\n") + f"Collection: {name}")
            click.echo(f"Folder: {status['kb_path']}")
            if "error" in status:
                click.echo(f"Error: {status['error']}")
            else:
                _status_lines(status)
    if all("error" in status for status in statuses.values()):
        fail("no collection has an index: run `groove index`", 2)


def _status_lines(status: dict[str, Any]) -> None:
    """The text form of one knowledge base's status."""
    for key, label in _LABELS:
        value = last_indexed(status) if key == "last_indexed" else status.get(key)
        click.echo(f"{label}: {'never' if value is None else value}")
    declared = status["declared_fields"]
    shown = "none recorded" if declared is None else (
        ", ".join(escape_controls(name, one_line=True) for name in declared) or "none")
    click.echo(f"Declared fields: {shown} ({status['declared_field_values']} values)")
    for line in index_lines(status):
        click.echo(line)

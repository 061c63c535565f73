"""``groove index``: the explicit, incremental (or ``--force``) rebuild."""

from __future__ import annotations

import json
import shlex

import click

from groove.cli import cli
from groove.cli.options import kb_options
from groove.cli.progress import make_reporter
from groove.cli.usage import fail
from groove.collections import Collections
from groove.errors import Busy
from groove.indexing.indexer import IndexSummary
from groove.kb import KnowledgeBase


def _overrides(kwargs: dict) -> dict:
    ray = kwargs.pop("ray", None)
    out: dict = {}
    if ray:
        out["index"] = {"executor": "ray", "ray_address": ray}
    return out


@cli.command("index")
@click.option("--force", is_flag=True, help="Rebuild every document (needed to change model or contextual mode).")
@click.option("--ray", "ray", default=None, metavar="ADDRESS",
              help="Embed on a Ray cluster: 'local' (a private one for this run), 'auto' (the "
                   "cluster `ray start` made) or host:port. Needs groove[ray]; see docs/scaling.md.")
@click.option("--quiet", "-q", is_flag=True, help="Print only the summary.")
@click.option("--progress", is_flag=True, help="Progress bar on a TTY, periodic lines otherwise.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("--no-wait", is_flag=True,
              help="When another process is writing the index, exit 2 at once instead of waiting.")
@kb_options(overrides=_overrides, model=True, collections=True, select=True)
def index_command(kb: KnowledgeBase | Collections, force: bool, quiet: bool, progress: bool,
                  as_json: bool, no_wait: bool) -> None:
    """Index the folder incrementally: changed files are re-embedded, renames kept, deletions applied.

    Files are written first (searchable by full text at once), then embedded;
    an interrupted run resumes where it stopped. One writer at a time: a
    second one waits for the first, naming it (docs/index-lifecycle.md).
    With a groove.toml naming collections, every collection is indexed in
    turn (or those named by --collection), one summary line each.
    """
    if quiet and progress:
        raise click.UsageError("--quiet and --progress contradict each other (--quiet prints only "
                               "the summary, --progress adds a progress display); pass one of them")
    if isinstance(kb, Collections):
        summaries = {}
        for name, one in kb:
            if not as_json:
                click.echo(f"{name}: indexing {one.kb_path}", err=True)
            summaries[name] = _index_one(one, force, quiet, progress, as_json, no_wait,
                                         label=f"{name}: ")
        if as_json:
            click.echo(json.dumps({name: s.to_json() for name, s in summaries.items()}))
        return
    _index_one(kb, force, quiet, progress, as_json, no_wait)


def _index_one(kb: KnowledgeBase, force: bool, quiet: bool, progress: bool, as_json: bool,
               no_wait: bool, label: str = "") -> IndexSummary:
    """One knowledge base's run and its summary line (``label`` names its collection)."""
    reporter = make_reporter(quiet=quiet, progress=progress)
    try:
        summary = kb.index(force=force, reporter=reporter, wait=not no_wait)
    except Busy as exc:  # only --no-wait gets here; the advice is the command line's own
        raise Busy(f"{exc} (or run again without --no-wait to wait for it)") from None
    except KeyboardInterrupt:
        reporter.stop()
        fail(interrupted_message(kb), 130)
    if not (as_json and label):
        click.echo(json.dumps(summary.to_json()) if as_json else label + summary.line())
    if summary.frontmatter_unparsed and kb.config.index.fail_on_frontmatter_error:
        fail(f"{label}{summary.frontmatter_unparsed} document(s) with a frontmatter that does "
             "not parse (indexed without it, tagged frontmatter:unparsed; the warnings above "
             "name them) and [index] fail_on_frontmatter_error = true: fix them, then run "
             "`groove index`", 1)
    return summary


def interrupted_message(kb: KnowledgeBase) -> str:
    """What an interrupted run kept, and the command that finishes it (resumes, re-embeds nothing)."""
    again = f"groove index --kb-path {shlex.quote(str(kb.kb_path))}"
    state = kb.index_state(files=False)
    if state.state == "missing":
        return f"interrupted before anything was indexed; run `{again}` to build the index"
    return (f"interrupted; kept {state.documents} document(s) searchable by full text, "
            f"{state.documents_embedded} of them embedded ({state.chunks_embedded} of "
            f"{state.chunks} chunks); run `{again}` to finish")

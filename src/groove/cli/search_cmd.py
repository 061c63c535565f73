"""``groove search``: one query, JSON (default), LLM-friendly text blocks, Markdown, CSV or paths."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable

import click

from groove.cli import cli
from groove.cli.formats import explain_lines, mark_spans
from groove.cli.options import format_option, kb_options, search_options, search_overrides
from groove.cli.progress import make_reporter
from groove.cli.usage import fail
from groove.collections import Collections
from groove.kb import KnowledgeBase
from groove.models import SearchResponse
from groove.search.request import SearchRequest

#: Terminal highlighting of match_spans (reverse video).
MARK_ON, MARK_OFF = "\x1b[7m", "\x1b[27m"


#: The text format's whole answer when nothing was found (the notes on stderr say why).
NO_RESULTS = "no results"


def render_text(response: SearchResponse, *, highlight: bool = False) -> str:
    """Blocks separated by ``---``: path, heading, score, then the content.

    A source-code hit's path is ``path:line`` (its first line), with its
    kind, scope and line range on a ``symbol:`` line (``outside definitions``
    for the lines of a file between its definitions).

    ``highlight`` marks each match span in reverse video (for a terminal).
    An answer without hits is the line :data:`NO_RESULTS`, never an empty line.
    """
    if not response.results:
        return NO_RESULTS
    blocks = []
    for hit in response.results:
        content = highlighted(hit.content, hit.match_spans) if highlight else hit.content
        cut = hit.content_cut()
        if cut is not None:
            content += f"\n[{cut}]"
        symbol = "" if hit.language is None else "symbol: " + " ".join(
            part for part in (hit.symbol_kind or "outside definitions", hit.heading, f"in {hit.scope}" if hit.scope else "",
                              f"(lines {hit.line_start}-{hit.line_end})") if part) + "\n"
        explain = "" if hit.explain is None else "".join(
            f"explain: {line}\n" for line in explain_lines(hit.explain))
        named = "" if hit.collection is None else f"collection: {hit.collection}\n"
        blocks.append(
            f"{named}path: {hit.location()}\nheading: {hit.heading or ''}\n{symbol}"
            f"score: {hit.score:.4f}\n{explain}\n{content}"
        )
    return "\n---\n".join(blocks)


def highlighted(content: str, spans: list[dict[str, int]] | None) -> str:
    """``content`` with each (UTF-8 byte) span wrapped in MARK_ON/MARK_OFF."""
    return mark_spans(content, spans, MARK_ON, MARK_OFF)


@cli.command("search")
@click.argument("query")
@format_option("json", "text", "md", "csv", "files", default="json")
@kb_options(overrides=search_overrides, model=True, collections=True)
@search_options
def search_command(kb: KnowledgeBase | Collections, base_request: SearchRequest, query: str,
                   fmt: str) -> None:
    """Search the knowledge base; answers at once from what is indexed.

    A folder with no index gets its full-text index first (seconds, progress
    on stderr); embedding is left to `groove index` (or `groove serve`). On an
    incomplete index, or while another process builds it, the answer comes
    from what is indexed so far, with a note on stderr naming `groove index`
    (docs/index-lifecycle.md). --format md is a Markdown list with path:line
    links, csv one row per hit, files the paths alone (for shell pipelines).
    With a groove.toml naming collections, every collection is searched (or
    those named by --collection) and each hit names its own; md, csv and files
    then give each file's full path (docs/collections.md).

    Example: groove search --kb-path ~/notes "spawn async tasks" --format md --explain
    """
    from groove.search.request import validate_request

    if fmt == "files" and base_request.explain:
        fail("--explain: --format files prints paths only, so there is nothing to show it "
             "in; accepted: --format json, text, md or csv")
    request = validate_request(base_request.replace(query=query))
    terminal = fmt == "text" and sys.stdout.isatty()
    if terminal and request.all_language_spans is None:
        request = request.replace(all_language_spans=True)  # people read it: highlight every language
    if isinstance(kb, Collections):
        _search_collections(kb, request, fmt, query, terminal)
        return
    kb.ensure_index(reporter=make_reporter(quiet=False, progress=True), wait=False, finish=False)
    response = kb.search(request)
    if response.index is not None and response.index.state != "missing":
        # the count of changed files started with the search; a one-shot run reports it
        response.index = kb.index_state(wait_for_files=True)
    note = response.index.note() if response.index is not None else None
    _print_answer(response, [note] if note else [], fmt, terminal,
                  lambda: _render(kb, response, fmt, query))


def _search_collections(kbs: Collections, request: SearchRequest, fmt: str, query: str,
                        terminal: bool) -> None:
    """``groove search`` over collections: each chosen one gets its full-text index when it
    has none (as one folder does), then one merged answer."""
    for name in kbs.chosen(request.collection):
        kbs[name].ensure_index(reporter=make_reporter(quiet=False, progress=True), wait=False,
                               finish=False)
    response = kbs.search(request)
    states = [f"{name}: {note}" for name, state in (response.collections or {}).items()
              if (note := state.note())]
    _print_answer(response, states, fmt, terminal,
                  lambda: _render_collections(kbs, response, fmt, query))


def _print_answer(response: SearchResponse, index_notes: list[str], fmt: str, terminal: bool,
                  render: Callable[[], str]) -> None:
    """The notes on stderr, then the answer in ``fmt`` (``render`` makes md, csv and files)."""
    for note in [*index_notes, *response.notes]:
        click.echo(f"note: {note}", err=True)
    if fmt == "json":
        click.echo(json.dumps(response.to_json(), ensure_ascii=False, indent=2))
        return
    _low_confidence_note(response)
    if fmt == "text":
        click.echo(render_text(response, highlight=terminal))
    else:
        click.echo(render(), nl=False)


def _render_collections(kbs: Collections, response: SearchResponse, fmt: str, query: str) -> str:
    """md, csv or files over collections: each hit's lines read from its own collection."""
    from groove.cli.formats import render_csv, render_files, render_md
    from groove.documents.locate import hit_lines

    lines = [hit_lines(kbs[hit.collection or ""], [hit])[0] if fmt != "files" else None
             for hit in response.results]
    for hit in response.results:  # a file's full path: the collections' paths may collide
        hit.path = str(kbs[hit.collection or ""].kb_path / hit.path)
    return (render_files(response) if fmt == "files" else
            render_md(response, query, lines) if fmt == "md" else render_csv(response, lines))


def _low_confidence_note(response: SearchResponse) -> None:
    if response.low_confidence:
        why = response.low_confidence_note or "weak evidence"
        click.echo(f"note: low confidence: {why}; the knowledge base may not answer it",
                   err=True)


def _render(kb: KnowledgeBase, response: SearchResponse, fmt: str, query: str) -> str:
    """``md``, ``csv`` or ``files`` (cli/formats.py); the first two find each hit's line."""
    from groove.cli.formats import render_csv, render_files, render_md
    from groove.documents.locate import hit_lines

    if fmt == "files":
        return render_files(response)
    lines = hit_lines(kb, response.results)
    return render_md(response, query, lines) if fmt == "md" else render_csv(response, lines)

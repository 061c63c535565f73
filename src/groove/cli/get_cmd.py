"""``groove get``: indexed documents by path (with line windows) or glob, bounded in bytes.

A thin layer over :func:`groove.documents.read.multi_get`, the same function
the MCP ``multi_get`` tool calls; the flags are derived from
:class:`~groove.documents.request.GetRequest`, so caps and defaults agree.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from groove.cli import cli
from groove.cli.options import format_option, kb_options, model_flag
from groove.documents.request import GetRequest
from groove.kb import KnowledgeBase


def cap_options(func: Any) -> Any:
    """``--max-bytes`` and ``--max-total-bytes``, from the request model."""
    for name in ("max_total_bytes", "max_bytes"):
        func = model_flag(name, GetRequest.model_fields[name], GetRequest)(func)
    return func


def render_documents(answer: dict[str, Any]) -> str:
    """The texts; with several documents each is headed ``==> path (lines a-b of n) <==``."""
    docs = answer["documents"]
    if len(docs) == 1:
        return docs[0]["text"]
    blocks = []
    for doc in docs:
        blocks.append(f"==> {doc['path']} (lines {doc['line_start']}-{doc['line_end']} of "
                      f"{doc['lines']}) <==\n{doc['text']}")
    return "\n\n".join(block.rstrip("\n") for block in blocks)


@cli.command("get")
@click.argument("paths", nargs=-1, required=True, metavar="PATH_OR_GLOB...")
@cap_options
@format_option("text", "json", default="text")
@kb_options(one=True)
def get_command(kb: KnowledgeBase, fmt: str, paths: tuple[str, ...], **caps: Any) -> None:
    """Print indexed documents by path or glob, each and all together capped in bytes.

    A path may carry a line window (guides/setup.md:120 or :120-140); an entry
    with * or ? is a glob over the indexed paths. What was cut or left out is
    said on stderr (and in the JSON); exit 1 when an entry could not be read.

    Example: groove get --kb-path ~/notes guides/setup.md:10-40 'rust/**/*.md'
    """
    from groove.documents.read import multi_get

    given = {name: value for name, value in caps.items() if value is not None}
    answer = multi_get(kb, GetRequest(paths=list(paths), **given))
    if fmt == "json":
        click.echo(json.dumps(answer, ensure_ascii=False, indent=2))
    elif answer["documents"]:
        text = render_documents(answer)
        click.echo(text, nl=not text.endswith("\n"))
    for doc in answer["documents"]:
        if "cut" in doc:
            click.echo(f"note: {doc['path']}: {doc['cut']}", err=True)
    if answer.get("note"):
        click.echo(f"note: {answer['note']}", err=True)
    for error in answer["errors"]:
        click.echo(f"error: {error['entry']}: {error['error']}", err=True)
    if answer["errors"]:
        sys.exit(1 if answer["documents"] else 2)

"""``groove serve``: MCP over stdio (default) or Streamable HTTP, with the watcher."""

from __future__ import annotations

import click

from groove.cli import cli
from groove.cli.options import kb_options
from groove.collections import Collections
from groove.kb import KnowledgeBase
from groove.rerankers import RERANKERS


def _overrides(kwargs: dict) -> dict:
    out: dict = {}
    if kwargs.get("no_watch"):
        out["watch"] = {"enabled": False}
    if (debounce := kwargs.pop("debounce_ms", None)) is not None:
        out.setdefault("watch", {})["debounce_ms"] = debounce
    reranker = kwargs.pop("reranker", None)
    by_default = kwargs.pop("rerank_by_default", None)
    if reranker:  # naming one turns it on for every call, unless told otherwise (as GrooveSeek)
        out["reranker"] = reranker
        out["rerank_by_default"] = True if by_default is None else by_default
    elif by_default is not None:
        out["rerank_by_default"] = by_default
    return out


@cli.command("serve")
@click.option("--transport", type=click.Choice(["stdio", "http"]), default=None,
              help="MCP transport (default from groove.toml, else stdio).")
@click.option("--port", type=click.IntRange(1, 65535), default=None,
              help="HTTP port, keeping the configured host (default 3100; not with --bind).")
@click.option("--bind", default=None,
              help="HTTP bind address HOST:PORT (default 127.0.0.1:3100; not with --port).")
@click.option("--i-know", is_flag=True,
              help="Allow a non-loopback bind (there is no authentication: anyone who reaches the port reads the KB).")
@click.option("--no-watch", is_flag=True, help="Do not watch the folder for changes.")
@click.option("--systemd-socket", is_flag=True,
              help="Serve HTTP on the one listening socket systemd passes (LISTEN_FDS, TCP or "
                   "Unix); never opens its own, refuses --bind/--port.")
@click.option("--debounce-ms", type=int, default=None,
              help="Watcher debounce in milliseconds (overrides [watch] debounce_ms).")
@click.option("--reranker", default=None,
              help=f"Reranker id for the search tool (overrides groove.toml): {RERANKERS.accepted()}.")
@click.option("--rerank-by-default/--no-rerank-by-default", default=None,
              help="Whether a search call reranks when it does not say (overrides rerank_by_default).")
@kb_options(overrides=_overrides, model=True, collections=True, select=True)
def serve_command(kb: KnowledgeBase | Collections, transport: str | None, port: int | None,
                  bind: str | None, i_know: bool, no_watch: bool, systemd_socket: bool) -> None:
    """Serve the knowledge base to MCP clients (builds the index first when there is none).

    With a groove.toml naming collections, one process serves them all (or
    those named by --collection), each collection's model loaded once however
    many collections use it (docs/collections.md).
    """
    if bind is not None and port is not None:
        raise click.UsageError(f"--bind {bind} and --port {port} both name the port; pass "
                               "--bind HOST:PORT alone, or --port alone to keep the configured host")
    from groove.server import build_in_background, check_systemd_socket, serve
    from groove.server.http import adopt_listener

    collections = kb if isinstance(kb, Collections) else None
    if isinstance(kb, Collections):
        kb = next(one for _, one in kb)  # its settings hold the file's server-wide keys

    activated = systemd_socket or kb.config.transport.http.systemd_socket
    chosen = transport or ("http" if activated else kb.config.transport.kind)
    listener = None
    if activated:  # take (or refuse) the socket before the model loads
        check_systemd_socket(kb, chosen, bind, port)
        listener = adopt_listener(i_know)
    for one in (list(collections.kbs.values()) if collections is not None else [kb]):
        build_in_background(one)
    serve(kb, transport=chosen, bind=bind, port=port, i_know=i_know,
          watch=(collections is not None or kb.config.watch.enabled) and not no_watch,
          listener=listener, collections=collections)

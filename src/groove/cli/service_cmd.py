"""``groove service install | uninstall | status | list`` (docs/deployment.md)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from groove.cli import cli
from groove.cli.options import format_option, handle_errors, kb_options
from groove.cli.usage import fail
from groove.collections import Collections
from groove.kb import KnowledgeBase

_MANAGER = click.option(
    "--manager", type=click.Choice(["systemd", "launchd", "schtasks"]), default=None,
    help="Service manager to write for (default: this platform's — systemd on Linux, launchd on "
         "macOS, schtasks (Task Scheduler) on Windows).")
_NAME = click.option("--name", default=None,
                     help="Service name (default: groove-<KB folder name>).")


@cli.group("service")
def service_group() -> None:
    """Run a knowledge base as a per-user background service (HTTP transport)."""


#: What groove offers in place of GrooveSeek's Windows tray (docs/deployment.md, "No tray").
NO_TRAY = ("groove has no tray icon; `groove service status` shows whether the service runs "
           "and answers, and http://<bind>/ui shows the index state in a browser "
           "(docs/deployment.md, \"No tray\")")


@service_group.command("install")
@_NAME
@click.option("--port", type=click.IntRange(1, 65535), default=None,
              help="Port to serve on (default: the port of [transport.http] bind).")
@click.option("--bind", default=None,
              help="Address HOST:PORT to serve on (default: [transport.http] bind).")
@click.option("--i-know", is_flag=True,
              help="Allow a non-loopback --bind (there is no authentication).")
@click.option("--no-auto-start", is_flag=True,
              help="Write the service file only; print the commands that enable and start it.")
@click.option("--force", is_flag=True,
              help="Replace a service of the same name that serves another knowledge base.")
@click.option("--with-tray", is_flag=True, hidden=True)
@click.option("--dry-run", is_flag=True, help="Print the service file; write and start nothing.")
@click.option("--socket", "socket_unit", is_flag=True,
              help="systemd only: also write <name>.socket listening on the bind address; the "
                   "service starts on the first connection and serves on the socket it is "
                   "passed (serve --systemd-socket).")
@_MANAGER
@kb_options(collections=True)
def install_command(kb: KnowledgeBase | Collections, name: str | None, port: int | None, bind: str | None,
                    i_know: bool, no_auto_start: bool, force: bool, with_tray: bool,
                    dry_run: bool, socket_unit: bool, manager: str | None) -> None:
    """Install (and start, when a service manager runs) `groove serve --transport http` for this KB.

    With a groove.toml naming collections (given with --config), the service
    serves every collection it names from one process.
    """
    from groove.service import backend_for, install, spec_for, spec_for_collections

    if bind is not None and port is not None:
        raise click.UsageError(f"--bind {bind} and --port {port} both name the port; pass "
                               "--bind HOST:PORT alone, or --port alone to keep the configured host")
    if with_tray:
        click.echo(f"note: --with-tray is GrooveSeek's; installing without a tray: {NO_TRAY}",
                   err=True)
    backend = backend_for(manager)
    if socket_unit and backend.kind != "systemd":
        raise click.UsageError("--socket writes a systemd .socket unit; launchd does not pass "
                               "sockets the way `serve --systemd-socket` takes them")
    if isinstance(kb, Collections):
        spec = spec_for_collections(kb.configs, name=name, port=port, bind=bind, i_know=i_know,
                                    socket=socket_unit)
    else:
        spec = spec_for(kb.config, name=name, port=port, bind=bind, i_know=i_know,
                        socket=socket_unit)
    if dry_run:
        for extra, text in backend.companion_files(spec).items():
            click.echo(f"# {extra}")
            click.echo(text)
        click.echo(f"# {backend.path_for(spec.name)}")
        click.echo(backend.render(spec), nl=False)
        return
    for line in install(backend, spec, auto_start=not no_auto_start, force=force).messages:
        click.echo(line)


def _kb_folder(kb_path: Path | None, config_path: Path | None, name: str | None) -> Path | None:
    """The KB to look a service up by when no --name is given (the current one by default)."""
    if name is not None:
        return None
    from groove.config import load_settings

    loaded = load_settings(config_path=config_path, kb_path=kb_path)
    if isinstance(loaded, dict):  # a collections service is known by its file's folder
        source = next(iter(loaded.values())).source
        assert source is not None
        return source.resolve().parent
    return loaded.kb_path


def _lookup_options(func: Callable[..., Any]) -> Callable[..., Any]:
    func = click.option("--config", "config_path", type=click.Path(path_type=Path), default=None,
                        help="Find the service of the KB this groove.toml names.")(func)
    func = click.option("--kb-path", type=click.Path(path_type=Path), default=None,
                        help="Find the service serving this folder (default: the current KB).")(func)
    return _NAME(_MANAGER(func))


@service_group.command("uninstall")
@_lookup_options
@click.option("--purge", is_flag=True,
              help="Also delete the service's index file (never the notes); needs --yes.")
@click.option("--yes", is_flag=True, help="Confirm --purge.")
@handle_errors
def uninstall_command(name: str | None, kb_path: Path | None, config_path: Path | None,
                      manager: str | None, purge: bool, yes: bool) -> None:
    """Stop the service and remove its file (with --purge --yes, its index too)."""
    from groove.service import backend_for, uninstall

    if purge and not yes:
        raise click.UsageError("--purge deletes the service's index file; add --yes to confirm "
                               "(the notes are never touched)")
    backend = backend_for(manager)
    outcome = uninstall(backend, name=name, kb_path=_kb_folder(kb_path, config_path, name),
                        purge=purge)
    for line in outcome.messages:
        click.echo(line)


@service_group.command("status")
@_lookup_options
@format_option("text", "json", default="text")
@handle_errors
def status_command(name: str | None, kb_path: Path | None, config_path: Path | None,
                   manager: str | None, fmt: str) -> None:
    """Whether the KB's service is installed and running, its port and its KB (exit 1, a finding: not installed)."""
    from groove.errors import NotFound
    from groove.service import backend_for, status

    backend = backend_for(manager)
    try:
        info = status(backend, name=name, kb_path=_kb_folder(kb_path, config_path, name))
    except NotFound as exc:
        if fmt == "json":
            click.echo(json.dumps({"installed": False, "error": str(exc)}))
        else:
            click.echo(f"not installed: {exc}")
        raise SystemExit(1) from None
    if fmt == "json":
        click.echo(json.dumps(info.to_json(), ensure_ascii=False, indent=2))
    else:
        click.echo("\n".join(info.lines()))


@service_group.command("list")
@_MANAGER
@format_option("text", "json", default="text")
@handle_errors
def list_command(manager: str | None, fmt: str) -> None:
    """Every groove service installed for this user."""
    from groove.service import backend_for, list_services

    infos = list_services(backend_for(manager))
    if fmt == "json":
        click.echo(json.dumps([i.to_json() for i in infos], ensure_ascii=False, indent=2))
        return
    if not infos:
        click.echo("no groove services installed (groove service install adds one)")
    for info in infos:
        spec = info.spec
        where = f"port {spec.port}  {spec.kb_path}" if spec else str(info.path)
        click.echo(f"{info.name}  {info.state}  {where}")


@service_group.command("tray-install", hidden=True)
@click.option("--service-name", "--name", "name", default=None, hidden=True)
@click.option("--force", is_flag=True, hidden=True)
def tray_install_command(name: str | None, force: bool) -> None:
    """GrooveSeek's Windows tray shortcut: groove has none (exit 2, naming what it offers)."""
    fail(f"`groove service tray-install` is GrooveSeek's; {NO_TRAY}")


@service_group.command("tray-uninstall", hidden=True)
@click.option("--service-name", "--name", "name", default=None, hidden=True)
def tray_uninstall_command(name: str | None) -> None:
    """GrooveSeek's tray removal: there is no groove tray, so nothing is left to remove (exit 0)."""
    click.echo(f"note: nothing to remove: {NO_TRAY}", err=True)

"""``groove service``: run one knowledge base as a per-user background service.

Linux gets a systemd user unit, macOS a launchd agent, Windows a Task
Scheduler task started at logon (docs/deployment.md). Rules kept here, once:

* one service per knowledge base, one knowledge base per service, and no two
  groove services on the same port — install refuses each clash by name;
* a config file found by discovery is *untrusted*, but a service runs it with
  ``--config``, which trusts it: install refuses until the user names it with
  ``--config`` themselves;
* groove only touches files it wrote (they carry its marker and read back as
  a groove service): ``install --name X`` will not overwrite somebody else's
  ``X``, and ``uninstall --name X`` will not remove it;
* without a running service manager (containers, CI) install still writes the
  file and says which commands start it; ``status`` then reports the manager's
  state as unknown and probes ``/healthz`` on the service's port instead.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from groove.errors import ConfigError, NotFound
from groove.service.base import Backend
from groove.service.spec import ServiceSpec, check_name, check_path_arg, default_name
from groove.store.files import replace_atomically

if TYPE_CHECKING:
    from groove.config import Config

__all__ = ["Backend", "ServiceSpec", "ServiceInfo", "backend_for", "spec_for", "install",
           "uninstall", "status", "list_services", "windows_command"]

MANAGERS = ("systemd", "launchd", "schtasks")


def backend_for(manager: str | None = None, env: dict[str, str] | None = None) -> Backend:
    """The backend for ``manager`` ("systemd" | "launchd" | "schtasks"), by default this platform's."""
    from groove.service.launchd import Launchd
    from groove.service.systemd import Systemd
    from groove.service.windows import TaskScheduler

    if manager is None:
        if sys.platform == "darwin":
            manager = "launchd"
        elif sys.platform.startswith("linux"):
            manager = "systemd"
        elif sys.platform == "win32":
            manager = "schtasks"
        else:
            raise ConfigError(
                f"groove service does not manage services on {sys.platform}; run "
                f"`{windows_command()}` from Task Scheduler or a service wrapper "
                "(docs/deployment.md), or pass --manager systemd|launchd|schtasks to write a file")
    if manager == "systemd":
        return Systemd(env)
    if manager == "launchd":
        return Launchd(env)
    if manager == "schtasks":
        return TaskScheduler(env)
    raise ConfigError(f"--manager {manager!r} is not one of: {', '.join(MANAGERS)}")


def windows_command() -> str:
    return "groove serve --transport http --config C:\\path\\to\\groove.toml"


def spec_for(config: Config, *, name: str | None = None, port: int | None = None,
             python: str | None = None, bind: str | None = None,
             i_know: bool = False, socket: bool = False) -> ServiceSpec:
    """The service for ``config``'s knowledge base (refusing an untrusted discovered config).

    ``bind`` (HOST:PORT) replaces the configured address, ``port`` its port; a
    non-loopback address needs ``i_know``, as ``groove serve`` does. ``socket``:
    the service manager binds that address and passes the socket (systemd).
    """
    from groove.server import resolve_bind

    source = config.source
    if source is not None and not config.trusted:
        raise ConfigError(
            f"{source} was found by discovery, so groove treats it as untrusted; the service "
            "would run it with --config, which trusts it. If you mean that, pass "
            f"--config {source}")
    kb_path = check_path_arg(config.kb_path.resolve(), "kb_path")
    if not kb_path.is_dir():
        raise ConfigError(f"kb_path {kb_path} is not a folder; a service needs an existing one")
    db_path = config.db_path.resolve()
    default_db = kb_path / ".groove.db"
    address = resolve_bind(config.transport.http.address, bind, port)
    if not address.is_loopback and not i_know:
        raise ConfigError(f"bind {address} is not a loopback address and groove has no "
                          "authentication: anyone who reaches the port reads the KB; pass "
                          "--i-know to install it anyway, or bind 127.0.0.1")
    return ServiceSpec(
        name=check_name(name) if name is not None else default_name(kb_path),
        kb_path=kb_path,
        bind=address,
        i_know=i_know and not address.is_loopback,
        config_path=check_path_arg(source.resolve(), "--config") if source is not None else None,
        db_path=None if db_path == default_db else check_path_arg(db_path, "db_path"),
        python=python or sys.executable,
        socket=socket,
    )


def spec_for_collections(configs: Mapping[str, Config], **options: Any) -> ServiceSpec:
    """The service serving every collection of one trusted groove.toml (docs/collections.md).

    The same rules as :func:`spec_for`, read from the first collection (the
    file's server-wide keys are every collection's); the service runs
    ``serve --config FILE`` with no folder of its own, and is named after the
    file's folder unless ``name`` is given.
    """
    first = next(iter(configs.values()))
    if first.source is None:
        raise ConfigError("collections come from a groove.toml; pass --config FILE")
    spec = spec_for(first, **options)
    home = check_path_arg(first.source.resolve().parent, "--config folder")
    name = options.get("name")
    return replace(spec, kb_path=home, db_path=None, collections=True,
                   name=check_name(name) if name is not None else default_name(home))


@dataclass
class ServiceInfo:
    """One installed service as ``status``/``list`` report it."""

    name: str
    path: Path
    spec: ServiceSpec | None
    state: str
    answering: bool | None
    logs: str

    def to_json(self) -> dict[str, Any]:
        spec = self.spec
        return {"name": self.name, "installed": True, "file": str(self.path),
                "state": self.state, "answering": self.answering,
                "kb_path": str(spec.kb_path) if spec else None,
                "port": spec.port if spec else None, "bind": str(spec.bind) if spec else None,
                "config": str(spec.config_path) if spec and spec.config_path else None,
                "logs": self.logs}

    def lines(self) -> list[str]:
        spec = self.spec
        answer = {True: "yes", False: "no", None: "not probed"}[self.answering]
        return [f"service:   {self.name}",
                f"file:      {self.path}",
                f"running:   {self.state} (answering /healthz: {answer})",
                f"kb:        {spec.kb_path if spec else '? (not a file groove wrote)'}",
                f"port:      {spec.port if spec else '?'} (bind {spec.bind if spec else '?'})",
                f"logs:      {self.logs}"]


@dataclass
class Outcome:
    """What an install/uninstall did, as lines for the user."""

    path: Path
    messages: list[str] = field(default_factory=list)


def _answering(spec: ServiceSpec, timeout: float = 1.0) -> bool:
    wildcard = {"0.0.0.0": "127.0.0.1", "::": "::1"}  # probe a wildcard bind over loopback
    netloc = spec.bind._replace(host=wildcard.get(spec.bind.host, spec.bind.host))
    try:
        with urllib.request.urlopen(f"http://{netloc}/healthz", timeout=timeout) as response:
            return bool(response.status == 200 and json.loads(response.read()).get("status") == "ok")
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _info(backend: Backend, path: Path, spec: ServiceSpec | None, manager_ok: bool) -> ServiceInfo:
    name = spec.name if spec else path.stem
    state = backend.state(name) if manager_ok else "unknown (no service manager)"
    return ServiceInfo(name=name, path=path, spec=spec, state=state,
                       answering=_answering(spec) if spec else None, logs=backend.log_hint(name))


def _installed(backend: Backend) -> list[tuple[Path, ServiceSpec]]:
    found = []
    for path in backend.installed():
        spec = backend.read(path)
        if spec is not None:
            found.append((path, spec))
    return found


def _check_clashes(backend: Backend, spec: ServiceSpec, force: bool = False) -> None:
    for _path, other in _installed(backend):
        if other.name == spec.name:
            if other.kb_path != spec.kb_path and not force:
                raise ConfigError(f"service {spec.name} already serves {other.kb_path}; "
                                  "pick another name with --name, or replace it with --force")
            continue
        if other.kb_path == spec.kb_path:
            raise ConfigError(f"{spec.kb_path} is already served by service {other.name}; "
                              f"uninstall it first (groove service uninstall --name {other.name})")
        if other.port == spec.port:
            raise ConfigError(f"port {spec.port} is already used by service {other.name} "
                              f"({other.kb_path}); pick another with --port")


def _write_text(path: Path, *, text: str, encoding: str) -> None:
    path.write_text(text, encoding=encoding)


def install(backend: Backend, spec: ServiceSpec, *, auto_start: bool = True,
            force: bool = False) -> Outcome:
    """Write the service file and start it when a service manager is running.

    ``auto_start=False`` writes the file only and names the commands that
    enable and start it; ``force`` replaces a service of the same name that
    serves another knowledge base.
    """
    _check_clashes(backend, spec, force)
    path = backend.path_for(spec.name)
    if os.path.lexists(path) and backend.read(path) is None:
        raise ConfigError(f"{path} exists and was not written by `groove service install`; "
                          "groove will not overwrite it: pick another name with --name")
    path.parent.mkdir(parents=True, exist_ok=True)
    companions = backend.companion_files(spec)
    for extra in backend.companion_paths(spec.name):
        if os.path.lexists(extra) and not backend.owns(extra):
            raise ConfigError(f"{extra} exists and was not written by `groove service install`; "
                              "groove will not overwrite it: pick another name with --name")
        if extra not in companions:
            extra.unlink(missing_ok=True)  # reinstalled without --socket
    for extra, extra_text in companions.items():
        replace_atomically(extra, functools.partial(_write_text, text=extra_text,
                                                    encoding=backend.encoding), "the socket file")
    text = backend.render(spec)
    replace_atomically(path, lambda tmp: tmp.write_text(text, encoding=backend.encoding),
                       "the service file")
    backend.prepare(spec.name)
    logs = backend.log_hint(spec.name)
    out = Outcome(path, [f"wrote {extra}" for extra in companions] + [f"wrote {path}"])
    reason = backend.unavailable()
    commands = backend.start_commands(spec.name)
    if not auto_start:
        reason = "--no-auto-start was given"
    if reason is not None:
        out.messages.append(f"not started: {reason}. Start it where the service manager runs with:")
        out.messages += ["  " + " ".join(c) for c in commands]
        return out
    for command in commands:
        if (error := backend.run(command)) is not None:
            out.messages.append(f"`{' '.join(command)}` failed: {error}")
            return out
    out.messages.append(f"started {spec.name}: http://{spec.bind}/mcp (logs: {logs})")
    return out


def find(backend: Backend, *, name: str | None, kb_path: Path | None) -> tuple[Path, ServiceSpec | None]:
    """The installed service called ``name``, else the one serving ``kb_path``."""
    if name is not None:
        path = backend.path_for(check_name(name))
        if path.exists():
            return path, backend.read(path)
    elif kb_path is not None:
        for path, spec in _installed(backend):
            if spec.kb_path == kb_path.resolve():
                return path, spec
    names = ", ".join(s.name for _, s in _installed(backend)) or "none"
    wanted = f"named {name}" if name is not None else f"for {kb_path}"
    raise NotFound(f"no groove service {wanted} is installed (installed: {names})")


def purge_targets(spec: ServiceSpec) -> list[Path]:
    """The index files ``uninstall --purge`` deletes: the service's index and its SQLite journals."""
    db = spec.db_path or spec.kb_path / ".groove.db"
    return [db, *(db.with_name(db.name + suffix) for suffix in ("-wal", "-shm"))]


def uninstall(backend: Backend, *, name: str | None, kb_path: Path | None,
              purge: bool = False) -> Outcome:
    """Stop and remove the service; ``purge`` also deletes its index (never the notes)."""
    path, spec = find(backend, name=name, kb_path=kb_path)
    if spec is None:
        raise ConfigError(f"{path} was not written by `groove service install` (it has no groove "
                          "marker), so groove leaves it alone; remove it yourself if you mean to")
    service = spec.name
    out = Outcome(path)
    manager_ok = backend.unavailable() is None
    if manager_ok:
        for command in backend.stop_commands(service):
            if (error := backend.run(command)) is not None:
                out.messages.append(f"note: `{' '.join(command)}`: {error}")
    path.unlink()
    out.messages.append(f"removed {path}")
    for extra in backend.companion_paths(service):
        if extra.exists():
            extra.unlink()
            out.messages.append(f"removed {extra}")
    if manager_ok:
        for command in backend.after_remove_commands():
            backend.run(command)
    else:
        out.messages.append("no service manager is running here: if the service runs "
                            "elsewhere, stop it there with: "
                            + " && ".join(" ".join(c) for c in backend.stop_commands(service)))
    if purge and spec.collections:
        out.messages.append("note: --purge left the index files alone: this service served "
                            "collections, each with its own index in its folder (delete them "
                            "there, never the notes)")
    elif purge:
        for target in purge_targets(spec):
            if target.is_file() and not target.is_symlink():
                target.unlink()
                out.messages.append(f"removed {target}")
    return out


def status(backend: Backend, *, name: str | None, kb_path: Path | None) -> ServiceInfo:
    path, spec = find(backend, name=name, kb_path=kb_path)
    return _info(backend, path, spec, backend.unavailable() is None)


def list_services(backend: Backend) -> list[ServiceInfo]:
    manager_ok = backend.unavailable() is None
    return [_info(backend, path, spec, manager_ok) for path, spec in _installed(backend)]

"""What one groove background service is: a name, a knowledge base, a command line.

One service serves one knowledge base over Streamable HTTP. Its name comes
from the KB folder (``groove-<folder>``, lower-cased, anything outside
``[a-z0-9._-]`` folded to ``-``) unless ``--name`` overrides it; the same name
is the systemd unit (``<name>.service``) and the launchd label suffix.

Every path in the command line is absolute, and the bind address is written
out explicitly, so ``groove service status`` can read the KB and the port back
from the installed file alone (docs/deployment.md).

A knowledge base is often a cloned folder nobody vetted, so the service must
never import Python code from it: the interpreter runs with ``-P`` (no working
directory or script folder put first on ``sys.path``; Python 3.11+), and the
service's working directory is the root of the KB's drive, never the KB.
"""

from __future__ import annotations

import hashlib
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from groove.config.bind import BindAddress
from groove.errors import ConfigError

#: Accepted service names (also valid systemd unit names and launchd label parts).
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,62}$")
PREFIX = "groove-"
#: How every service runs groove: ``-P`` keeps the working directory off ``sys.path``.
MODULE_ARGS = ("-P", "-m", "groove")
#: What units written before ``-P`` hold; still read back (``status``, ``uninstall``).
_OLD_MODULE_ARGS = ("-m", "groove")


def default_name(kb_path: Path) -> str:
    """``groove-<kb folder>``; a folder name with no usable ASCII gets a short path hash."""
    slug = re.sub(r"[^a-z0-9._-]+", "-", kb_path.name.lower()).strip("-._")
    if not slug:
        slug = "kb-" + hashlib.sha256(str(kb_path).encode()).hexdigest()[:8]
    return (PREFIX + slug)[:63].rstrip("-._")


def check_name(name: str) -> str:
    """A user-given ``--name``; refused with what is accepted."""
    if not NAME_RE.match(name):
        raise ConfigError(f"--name {name!r} is not a usable service name; accepted: 1-63 "
                          "characters of a-z, 0-9, '.', '_', '-', starting with a letter or digit")
    return name


def check_path_arg(path: Path, what: str) -> Path:
    """Paths go into unit files line by line: control characters cannot be written there."""
    if any(ord(c) < 32 or ord(c) == 127 for c in str(path)):
        raise ConfigError(f"{what} {str(path)!r} contains a control character (e.g. a newline); "
                          "a service file cannot hold it — rename the folder")
    if str(path).endswith("\\"):
        raise ConfigError(f"{what} {str(path)!r} ends with a backslash, which a service file "
                          "reads as 'continued on the next line' — rename the folder")
    return path


@dataclass(frozen=True)
class ServiceSpec:
    """One service as installed: enough to render the unit and to read it back."""

    name: str
    kb_path: Path
    bind: BindAddress
    config_path: Path | None = None
    db_path: Path | None = None
    python: str = sys.executable
    #: ``--i-know``: the service may bind a non-loopback address (no authentication).
    i_know: bool = False
    #: Socket activation: the service manager binds ``bind`` (a .socket unit) and
    #: groove serves on the socket it passes (``serve --systemd-socket``).
    socket: bool = False
    #: The service serves the collections its ``--config`` names (docs/collections.md);
    #: ``kb_path`` is then that file's folder and the command line has no ``--kb-path``.
    collections: bool = False

    @property
    def port(self) -> int:
        return self.bind.port

    @property
    def working_directory(self) -> Path:
        """Where the service runs: the filesystem root of the KB's drive, never the KB itself."""
        return Path(self.kb_path.anchor or "/")

    def argv(self) -> list[str]:
        """The exact command the service manager runs (``-P``: nothing imported from a folder)."""
        args = [self.python, *MODULE_ARGS, "serve", "--transport", "http"]
        if self.config_path is not None:
            args += ["--config", str(self.config_path)]
        if not self.collections:
            args += ["--kb-path", str(self.kb_path)]
        if self.db_path is not None:
            args += ["--db-path", str(self.db_path)]
        args += ["--systemd-socket"] if self.socket else ["--bind", str(self.bind)]
        return [*args, "--i-know"] if self.i_know else args

    @classmethod
    def from_argv(cls, name: str, argv: list[str],
                  listen: BindAddress | None = None) -> ServiceSpec | None:
        """Read a spec back from a command line written by :meth:`argv` (None: not ours).

        ``listen``: the address of the service's socket unit, for a socket-activated one.
        """
        head = next((len(prefix) + 1 for prefix in (MODULE_ARGS, _OLD_MODULE_ARGS)
                     if argv[1:len(prefix) + 2] == [*prefix, "serve"]), None)
        if head is None:
            return None
        opts: dict[str, str] = {}
        rest = argv[head + 1:]
        socket, i_know = "--systemd-socket" in rest, "--i-know" in rest
        rest = [arg for arg in rest if arg not in ("--systemd-socket", "--i-know")]
        if socket:
            if listen is None:
                return None
            opts["--bind"] = str(listen)
        for flag, value in zip(rest[::2], rest[1::2], strict=False):
            opts[flag] = value
        collections = "--kb-path" not in opts and "--config" in opts
        if collections:  # a collections service: its KB is its file's folder
            opts["--kb-path"] = str(Path(opts["--config"]).parent)
        if "--kb-path" not in opts or "--bind" not in opts:
            return None
        try:
            bind = BindAddress.parse(opts["--bind"])
        except ValueError:
            return None
        return cls(name=name, kb_path=Path(opts["--kb-path"]), bind=bind,
                   config_path=Path(opts["--config"]) if "--config" in opts else None,
                   db_path=Path(opts["--db-path"]) if "--db-path" in opts else None,
                   python=argv[0], i_know=i_know, socket=socket, collections=collections)

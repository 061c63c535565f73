"""The systemd user unit for a groove service (Linux).

The unit lives in ``$XDG_CONFIG_HOME/systemd/user/<name>.service`` (default
``~/.config``), restarts on failure (not on exit status 2, a configuration
error that a restart cannot fix), and logs to the user journal
(``journalctl --user -u <name>``).

``ExecStart`` quoting: every argument is double-quoted with ``\\`` and ``"``
backslash-escaped, and systemd's own ``%`` specifiers and ``$`` variables are
doubled, so any path without control characters survives; :func:`parse_exec`
is the exact inverse (a hypothesis property pins that).
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

from groove.config.bind import BindAddress
from groove.service.base import Backend
from groove.service.spec import ServiceSpec

MARKER = "# groove service"
#: ``systemctl --user is-system-running`` answers that mean "a manager is there".
_LIVE_STATES = {"running", "degraded", "starting", "initializing", "maintenance", "stopping"}


def _escape_specifiers(text: str) -> str:
    return text.replace("%", "%%")


def quote_arg(arg: str) -> str:
    """One ExecStart argument, double-quoted, specifiers and variables neutralised."""
    inner = arg.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + inner.replace("%", "%%").replace("$", "$$") + '"'


def render_exec(argv: list[str]) -> str:
    return " ".join(quote_arg(a) for a in argv)


def parse_exec(value: str) -> list[str]:
    """Inverse of :func:`render_exec` (every ``%`` and ``$`` it wrote is doubled)."""
    return shlex.split(value.replace("%%", "%").replace("$$", "$"))


class Systemd(Backend):
    kind = "systemd"


    # --- files ---------------------------------------------------------------------------
    def unit_dir(self) -> Path:
        base = self.env.get("XDG_CONFIG_HOME") or str(self.home() / ".config")
        return Path(base).expanduser() / "systemd" / "user"

    def path_for(self, name: str) -> Path:
        return self.unit_dir() / f"{name}.service"

    def socket_path_for(self, name: str) -> Path:
        return self.unit_dir() / f"{name}.socket"

    def companion_files(self, spec: ServiceSpec) -> dict[Path, str]:
        return {self.socket_path_for(spec.name): self.render_socket(spec)} if spec.socket else {}

    def companion_paths(self, name: str) -> list[Path]:
        return [self.socket_path_for(name)]

    def owns(self, path: Path) -> bool:
        try:
            return path.read_text(encoding="utf-8").startswith(MARKER)
        except (OSError, UnicodeDecodeError):
            return False

    @staticmethod
    def _unit_head(spec: ServiceSpec, written: str, what: str) -> list[str]:
        """The marker comment and the [Unit] description every file groove writes starts with."""
        return [f"{MARKER} ({spec.name}): {written}",
                "# `groove service uninstall --name " + spec.name + "` removes it.",
                "[Unit]",
                f"Description=groove knowledge-base {what} for "
                f"{_escape_specifiers(str(spec.kb_path))}"]

    def render_socket(self, spec: ServiceSpec) -> str:
        """The .socket unit of a socket-activated service: systemd binds, groove inherits."""
        return "\n".join([
            *self._unit_head(spec, "socket written by `groove service install --socket`", "socket"),
            "",
            "[Socket]",
            f"ListenStream={spec.bind}",
            "Accept=no",
            "",
            "[Install]",
            "WantedBy=sockets.target",
            "",
        ])

    def render(self, spec: ServiceSpec) -> str:
        return "\n".join([
            *self._unit_head(spec, "written by `groove service install`; re-run it to change "
                             "this file", "server"),
            *([f"Requires={spec.name}.socket", f"After={spec.name}.socket"] if spec.socket
              else []),
            "StartLimitIntervalSec=300",
            "StartLimitBurst=5",
            "",
            "[Service]",
            "Type=exec",
            f"ExecStart={render_exec(spec.argv())}",
            f"WorkingDirectory={_escape_specifiers(str(spec.working_directory))}",
            "Environment=PYTHONUNBUFFERED=1",
            "Restart=on-failure",
            "RestartSec=5",
            "# exit status 2 is a configuration error: restarting cannot fix it",
            "RestartPreventExitStatus=2",
            "NoNewPrivileges=yes",
            "",
            "[Install]",
            "WantedBy=default.target",
            "",
        ])

    def read(self, path: Path) -> ServiceSpec | None:
        """The spec in an installed unit, or None when the file is not a groove service."""
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        if not text.startswith(MARKER):
            return None
        for line in text.splitlines():
            if line.startswith("ExecStart="):
                try:
                    argv = parse_exec(line.removeprefix("ExecStart="))
                except ValueError:
                    return None
                return ServiceSpec.from_argv(path.stem, argv, self._listen(path.stem))
        return None

    def _listen(self, name: str) -> BindAddress | None:
        """The ListenStream address of the service's own socket unit, if it has one."""
        try:
            text = self.socket_path_for(name).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        for line in text.splitlines():
            if line.startswith("ListenStream="):
                try:
                    return BindAddress.parse(line.removeprefix("ListenStream="))
                except ValueError:
                    return None
        return None

    def installed(self) -> list[Path]:
        folder = self.unit_dir()
        return sorted(folder.glob("*.service")) if folder.is_dir() else []

    def log_hint(self, name: str) -> str:
        return f"journalctl --user -u {name}"

    # --- the manager -----------------------------------------------------------------------
    def _systemctl(self, *args: str) -> subprocess.CompletedProcess[str] | None:
        try:
            return subprocess.run(["systemctl", "--user", *args], capture_output=True,
                                  text=True, timeout=30, env=self.env)
        except (OSError, subprocess.TimeoutExpired):
            return None

    def unavailable(self) -> str | None:
        """Why there is no user service manager to talk to (None: there is one)."""
        done = self._systemctl("is-system-running")
        if done is None:
            return "systemctl is not installed"
        state = done.stdout.strip()
        if state in _LIVE_STATES:
            return None
        return f"the systemd user manager is not running here ({state or done.stderr.strip()})"

    def start_commands(self, name: str) -> list[list[str]]:
        """Enable the socket where there is one (it starts the service on first connection)."""
        unit = f"{name}.socket" if self.socket_path_for(name).exists() else f"{name}.service"
        return [["systemctl", "--user", "daemon-reload"],
                ["systemctl", "--user", "enable", "--now", unit]]

    def stop_commands(self, name: str) -> list[list[str]]:
        units = [f"{name}.service"]
        if self.socket_path_for(name).exists():
            units.insert(0, f"{name}.socket")
        return [["systemctl", "--user", "disable", "--now", *units]]

    def after_remove_commands(self) -> list[list[str]]:
        return [["systemctl", "--user", "daemon-reload"]]

    def state(self, name: str) -> str:
        done = self._systemctl("is-active", f"{name}.service")
        return (done.stdout.strip() if done is not None else "") or "unknown"

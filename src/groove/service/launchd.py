"""The launchd agent for a groove service (macOS).

The property list lives in ``~/Library/LaunchAgents/<label>.plist`` with the
label ``local.groove.<name>``; it starts at login (``RunAtLoad``), is restarted
when it exits unsuccessfully (``KeepAlive.SuccessfulExit = false``, at most
every ``ThrottleInterval`` seconds) and logs both streams to
``~/Library/Logs/groove/<name>.log``, the usual place for per-user logs.
"""

from __future__ import annotations

import os
import plistlib
import subprocess
from pathlib import Path
from typing import Any

from groove.service.base import Backend
from groove.service.spec import ServiceSpec

LABEL_PREFIX = "local.groove."


class Launchd(Backend):
    kind = "launchd"


    def unit_dir(self) -> Path:
        return self.home() / "Library" / "LaunchAgents"

    def label(self, name: str) -> str:
        return LABEL_PREFIX + name

    def path_for(self, name: str) -> Path:
        return self.unit_dir() / f"{self.label(name)}.plist"

    def log_path(self, name: str) -> Path:
        return self.home() / "Library" / "Logs" / "groove" / f"{name}.log"

    def render(self, spec: ServiceSpec) -> str:
        log = str(self.log_path(spec.name))
        plist: dict[str, Any] = {
            "Label": self.label(spec.name),
            "ProgramArguments": spec.argv(),
            "WorkingDirectory": str(spec.working_directory),
            "EnvironmentVariables": {"PYTHONUNBUFFERED": "1"},
            "RunAtLoad": True,
            "KeepAlive": {"SuccessfulExit": False},
            "ThrottleInterval": 10,
            "StandardOutPath": log,
            "StandardErrorPath": log,
            "ProcessType": "Background",
        }
        return plistlib.dumps(plist, sort_keys=False).decode("utf-8")

    def read(self, path: Path) -> ServiceSpec | None:
        try:
            data = plistlib.loads(path.read_bytes())
        except (OSError, plistlib.InvalidFileException, ValueError):
            return None
        label = data.get("Label") if isinstance(data, dict) else None
        argv = data.get("ProgramArguments") if isinstance(data, dict) else None
        if not (isinstance(label, str) and label.startswith(LABEL_PREFIX)
                and isinstance(argv, list) and all(isinstance(a, str) for a in argv)):
            return None
        return ServiceSpec.from_argv(label.removeprefix(LABEL_PREFIX), argv)

    def installed(self) -> list[Path]:
        folder = self.unit_dir()
        return sorted(folder.glob(LABEL_PREFIX + "*.plist")) if folder.is_dir() else []

    def prepare(self, name: str) -> None:
        self.log_path(name).parent.mkdir(parents=True, exist_ok=True)

    def log_hint(self, name: str) -> str:
        return str(self.log_path(name))

    def _domain(self) -> str:
        return f"gui/{os.getuid()}" if hasattr(os, "getuid") else "gui/501"

    def unavailable(self) -> str | None:
        try:
            done = subprocess.run(["launchctl", "print", self._domain()], capture_output=True,
                                  text=True, timeout=30, env=self.env)
        except (OSError, subprocess.TimeoutExpired):
            return "launchctl is not available"
        return None if done.returncode == 0 else "no launchd GUI session for this user"

    def start_commands(self, name: str) -> list[list[str]]:
        return [["launchctl", "bootstrap", self._domain(), str(self.path_for(name))]]

    def stop_commands(self, name: str) -> list[list[str]]:
        return [["launchctl", "bootout", f"{self._domain()}/{self.label(name)}"]]

    def state(self, name: str) -> str:
        try:
            done = subprocess.run(["launchctl", "print", f"{self._domain()}/{self.label(name)}"],
                                  capture_output=True, text=True, timeout=30, env=self.env)
        except (OSError, subprocess.TimeoutExpired):
            return "unknown"
        if done.returncode != 0:
            return "inactive"
        running = any(line.strip() == "state = running" for line in done.stdout.splitlines())
        return "active" if running else "inactive"

"""What every service-manager backend (systemd, launchd, Task Scheduler) offers the orchestration."""

from __future__ import annotations

import os
import subprocess
from abc import ABC, abstractmethod
from pathlib import Path

from groove.service.spec import ServiceSpec


class Backend(ABC):
    """One platform's service manager: where files go, how they read back, how to start them."""

    kind: str
    #: How the service file is encoded on disk.
    encoding = "utf-8"

    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.env = dict(os.environ if env is None else env)

    def home(self) -> Path:
        return Path(self.env.get("HOME", "~")).expanduser()

    @abstractmethod
    def path_for(self, name: str) -> Path: ...

    @abstractmethod
    def render(self, spec: ServiceSpec) -> str: ...

    @abstractmethod
    def read(self, path: Path) -> ServiceSpec | None:
        """The spec in an installed file, or None when it is not a groove service."""

    @abstractmethod
    def installed(self) -> list[Path]: ...

    def companion_files(self, spec: ServiceSpec) -> dict[Path, str]:
        """Files installed beside the main one (a systemd .socket unit), path -> text."""
        return {}

    def companion_paths(self, name: str) -> list[Path]:
        """Every companion file a service of this name may have (removed on uninstall)."""
        return []

    def owns(self, path: Path) -> bool:
        """Whether ``path`` (a companion file) was written by groove and may be replaced."""
        return True

    def prepare(self, name: str) -> None:
        """Create what the service needs besides its file (e.g. its log folder)."""
        return None

    @abstractmethod
    def log_hint(self, name: str) -> str: ...

    @abstractmethod
    def unavailable(self) -> str | None:
        """Why no service manager can be talked to here (None: one can)."""

    @abstractmethod
    def start_commands(self, name: str) -> list[list[str]]: ...

    @abstractmethod
    def stop_commands(self, name: str) -> list[list[str]]: ...

    def after_remove_commands(self) -> list[list[str]]:
        return []

    @abstractmethod
    def state(self, name: str) -> str:
        """"active", "inactive", "failed", ... as the manager says, or "unknown"."""

    def run(self, argv: list[str]) -> str | None:
        """Run one manager command; the error text when it failed, None when it worked."""
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=self.env)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return str(exc)
        return None if done.returncode == 0 else (done.stderr or done.stdout).strip()

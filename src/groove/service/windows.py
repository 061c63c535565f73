"""The Task Scheduler task for a groove service (Windows).

The task definition is a Task Scheduler XML document kept in
``%LOCALAPPDATA%\\groove\\tasks\\<name>.xml`` (the record ``status`` and
``list`` read back) and registered with ``schtasks /Create /XML <file>``. It
starts ``groove serve --transport http`` at logon of the installing user,
without administrator rights (``LeastPrivilege``, ``InteractiveToken``), is
restarted after a failure (every minute, at most five times) and has no time
limit.

Quoting: ``<Arguments>`` is one Windows command line; each argument is quoted
by the C runtime's rules (:func:`subprocess.list2cmdline`) and
:func:`split_arguments` is its exact inverse (a hypothesis property pins
that). The XML layer escapes ``&``, ``<``, ``>`` and quotes. Task Scheduler
expands ``%VAR%`` in a command line and offers no escape, so a path with
``%`` is refused rather than silently changed.
"""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from groove.errors import ConfigError
from groove.service.base import Backend
from groove.service.spec import ServiceSpec

#: The Task Scheduler schema namespace (task version 1.2: Windows Vista and later).
NS = "http://schemas.microsoft.com/windows/2004/02/mit/task"
#: Written into RegistrationInfo/Source so a file groove did not write is never read as a service.
SOURCE = "groove service install"


def _tag(name: str) -> str:
    return f"{{{NS}}}{name}"


def _sub(parent: ET.Element, name: str, text: str | None = None) -> ET.Element:
    child = ET.SubElement(parent, _tag(name))
    if text is not None:
        child.text = text
    return child


def split_arguments(line: str) -> list[str]:
    """A Windows command line split as the C runtime does (inverse of ``list2cmdline``).

    ``2n`` backslashes before a quote are ``n`` backslashes and the quote toggles
    quoting; ``2n+1`` are ``n`` backslashes and a literal quote; other
    backslashes are literal; unquoted spaces and tabs separate arguments.
    """
    args: list[str] = []
    current: list[str] = []
    in_quotes = started = False
    i = 0
    while i < len(line):
        ch = line[i]
        if ch == "\\":
            run = 0
            while i < len(line) and line[i] == "\\":
                run += 1
                i += 1
            if i < len(line) and line[i] == '"':
                current.append("\\" * (run // 2))
                if run % 2:
                    current.append('"')
                    i += 1
            else:
                current.append("\\" * run)
            started = True
            continue
        if ch == '"':
            in_quotes = not in_quotes
            started = True
        elif ch in " \t" and not in_quotes:
            if started:
                args.append("".join(current))
                current, started = [], False
        else:
            current.append(ch)
            started = True
        i += 1
    if started:
        args.append("".join(current))
    return args


def check_task_arguments(argv: list[str]) -> list[str]:
    """Refuse what Task Scheduler would change: ``%`` (it expands ``%VAR%``, with no escape)."""
    for arg in argv:
        if "%" in arg:
            raise ConfigError(f"{arg!r} contains '%', which Task Scheduler expands as an "
                              "environment variable (it has no escape); rename the folder or "
                              "put the file elsewhere")
    return argv


class TaskScheduler(Backend):
    kind = "schtasks"
    encoding = "utf-16"  # what schtasks /XML reads reliably (the declaration says so too)

    def unit_dir(self) -> Path:
        base = self.env.get("LOCALAPPDATA") or str(self.home() / "AppData" / "Local")
        return Path(base) / "groove" / "tasks"

    def path_for(self, name: str) -> Path:
        return self.unit_dir() / f"{name}.xml"

    def task_name(self, name: str) -> str:
        return f"\\{name}"

    def render(self, spec: ServiceSpec) -> str:
        argv = check_task_arguments(spec.argv())
        ET.register_namespace("", NS)
        task = ET.Element(_tag("Task"), {"version": "1.2"})
        info = _sub(task, "RegistrationInfo")
        _sub(info, "Source", SOURCE)
        _sub(info, "Description", f"groove knowledge-base server for {spec.kb_path}; "
                                  f"`groove service uninstall --name {spec.name}` removes it")
        logon = _sub(_sub(task, "Triggers"), "LogonTrigger")
        _sub(logon, "Enabled", "true")
        principal = _sub(_sub(task, "Principals"), "Principal", None)
        principal.set("id", "Author")
        _sub(principal, "LogonType", "InteractiveToken")
        _sub(principal, "RunLevel", "LeastPrivilege")
        settings = _sub(task, "Settings")
        for name, value in (("MultipleInstancesPolicy", "IgnoreNew"),
                            ("DisallowStartIfOnBatteries", "false"),
                            ("StopIfGoingOnBatteries", "false"),
                            ("AllowHardTerminate", "true"),
                            ("StartWhenAvailable", "true"),
                            ("AllowStartOnDemand", "true"),
                            ("Enabled", "true"),
                            ("Hidden", "false"),
                            ("ExecutionTimeLimit", "PT0S")):
            _sub(settings, name, value)
        idle = _sub(settings, "IdleSettings")
        _sub(idle, "StopOnIdleEnd", "false")
        _sub(idle, "RestartOnIdle", "false")
        restart = _sub(settings, "RestartOnFailure")
        _sub(restart, "Interval", "PT1M")
        _sub(restart, "Count", "5")
        actions = _sub(task, "Actions")
        actions.set("Context", "Author")
        run = _sub(actions, "Exec")
        _sub(run, "Command", argv[0])
        _sub(run, "Arguments", subprocess.list2cmdline(argv[1:]))
        _sub(run, "WorkingDirectory", str(spec.working_directory))
        ET.indent(task)
        body = ET.tostring(task, encoding="unicode")
        return f'<?xml version="1.0" encoding="UTF-16"?>\n{body}\n'

    def read(self, path: Path) -> ServiceSpec | None:
        """The spec in a task file groove wrote, or None (not ours, or unreadable)."""
        try:
            root = ET.fromstring(path.read_bytes())
        except (OSError, ET.ParseError):
            return None
        if root.tag != _tag("Task") or root.findtext(f"{_tag('RegistrationInfo')}/{_tag('Source')}") != SOURCE:
            return None
        run = root.find(f"{_tag('Actions')}/{_tag('Exec')}")
        if run is None:
            return None
        command = run.findtext(_tag("Command")) or ""
        arguments = split_arguments(run.findtext(_tag("Arguments")) or "")
        return ServiceSpec.from_argv(path.stem, [command, *arguments])

    def installed(self) -> list[Path]:
        folder = self.unit_dir()
        return sorted(folder.glob("*.xml")) if folder.is_dir() else []

    def log_hint(self, name: str) -> str:
        return (f"Task Scheduler keeps no output: `schtasks /Query /TN {self.task_name(name)} "
                "/V /FO LIST` shows the last result; run the task's command by hand to read "
                "its messages")

    def unavailable(self) -> str | None:
        if sys.platform != "win32":
            return "Task Scheduler (schtasks) exists only on Windows"
        return None

    def start_commands(self, name: str) -> list[list[str]]:
        return [["schtasks", "/Create", "/TN", self.task_name(name), "/XML",
                 str(self.path_for(name)), "/F"],
                ["schtasks", "/Run", "/TN", self.task_name(name)]]

    def stop_commands(self, name: str) -> list[list[str]]:
        return [["schtasks", "/End", "/TN", self.task_name(name)],
                ["schtasks", "/Delete", "/TN", self.task_name(name), "/F"]]

    def state(self, name: str) -> str:
        try:
            done = subprocess.run(["schtasks", "/Query", "/TN", self.task_name(name), "/FO", "CSV",
                                   "/NH"], capture_output=True, text=True, timeout=30, env=self.env)
        except (OSError, subprocess.TimeoutExpired):
            return "unknown"
        fields = [f.strip('"') for f in done.stdout.strip().split('","')]
        return fields[-1].strip('"').lower() if done.returncode == 0 and fields else "unknown"

"""Index progress on stderr: per-file lines, summary only, or a bar / periodic lines."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

import click

from groove.indexing.indexer import IndexSummary, Reporter

if TYPE_CHECKING:
    from rich.progress import TaskID

#: How often the non-TTY ``--progress`` mode prints a ``Progress:`` line.
PROGRESS_LINE_INTERVAL_S = 2.0


class FileLines(Reporter):
    """Default: one line per file that was not unchanged."""

    def file_done(self, rel_path: str, action: str, detail: str = "") -> None:
        if action in ("unchanged", "skipped"):  # skipped files already logged a warning
            return
        click.echo(f"{action} {rel_path}" + (f" ({detail})" if detail else ""), err=True)


class Quiet(Reporter):
    """``--quiet``: nothing but the summary (printed by the command)."""


class PeriodicLines(Reporter):
    """``--progress`` without a TTY: ``Progress: N/M (P%)`` every couple of seconds."""

    def __init__(self) -> None:
        self.total = 0
        self.done = 0
        self._last = 0.0

    def start(self, total: int) -> None:
        self.total = total
        self._last = time.monotonic()

    def file_done(self, rel_path: str, action: str, detail: str = "") -> None:
        if action == "deleted":
            return
        self.done += 1
        now = time.monotonic()
        if now - self._last >= PROGRESS_LINE_INTERVAL_S or self.done == self.total:
            self._last = now
            pct = 100.0 * self.done / self.total if self.total else 100.0
            click.echo(f"Progress: {self.done}/{self.total} ({pct:.0f}%)", err=True)


class Bar(Reporter):
    """``--progress`` on a TTY: a rich progress bar with ETA on stderr."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

        self._progress = Progress(
            "[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
            TimeRemainingColumn(), console=Console(stderr=True), transient=True,
        )
        self._task: TaskID | None = None

    def start(self, total: int) -> None:
        self._progress.start()
        self._task = self._progress.add_task("indexing", total=total)

    def file_done(self, rel_path: str, action: str, detail: str = "") -> None:
        if self._task is not None and action != "deleted":
            self._progress.advance(self._task)

    def finish(self, summary: IndexSummary) -> None:
        self._progress.stop()


def make_reporter(*, quiet: bool, progress: bool) -> Reporter:
    if quiet:
        return Quiet()
    if progress:
        return Bar() if sys.stderr.isatty() else PeriodicLines()
    return FileLines()

"""Index progress on stderr: per-file lines, summary only, or a bar / periodic lines.

A build has two passes (docs/index-lifecycle.md): files are counted while
rows are written, then the embedding pass is counted in model tokens, so its
ETA follows the work actually left (files of very different sizes made a
file-count ETA swing wildly).
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

import click

from groove.indexing.embedding_pass import EmbedProgress
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

    def embed_start(self, progress: EmbedProgress) -> None:
        if progress.tokens_total:
            click.echo(f"Embedding {progress.documents_total} document(s), "
                       f"about {progress.tokens_total} tokens", err=True)
        self._last = time.monotonic()

    def embed_progress(self, progress: EmbedProgress) -> None:
        now = time.monotonic()
        if now - self._last < PROGRESS_LINE_INTERVAL_S:
            return
        self._last = now
        click.echo(f"Embedding: {embed_line(progress)}", err=True)


def embed_line(progress: EmbedProgress) -> str:
    """``tokens done/total (P%), R tokens/s, ETA S s``."""
    total = max(progress.tokens_total, progress.tokens_done)
    pct = 100.0 * progress.tokens_done / total if total else 100.0
    eta = progress.eta_s
    return (f"{progress.tokens_done}/{total} tokens ({pct:.0f}%), "
            f"{progress.tokens_per_s:.0f} tokens/s"
            + (f", ETA {eta:.0f} s" if eta is not None else ""))


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
        self._embed_task: TaskID | None = None

    def start(self, total: int) -> None:
        self._progress.start()
        self._task = self._progress.add_task("reading files", total=total)

    def file_done(self, rel_path: str, action: str, detail: str = "") -> None:
        if self._task is not None and action != "deleted":
            self._progress.advance(self._task)

    def embed_start(self, progress: EmbedProgress) -> None:
        if progress.tokens_total:
            self._embed_task = self._progress.add_task("embedding (tokens)",
                                                       total=progress.tokens_total)

    def embed_progress(self, progress: EmbedProgress) -> None:
        if self._embed_task is not None:
            self._progress.update(self._embed_task, completed=progress.tokens_done,
                                  total=max(progress.tokens_total, progress.tokens_done))

    def finish(self, summary: IndexSummary) -> None:
        self._progress.stop()


def make_reporter(*, quiet: bool, progress: bool) -> Reporter:
    if quiet:
        return Quiet()
    if progress:
        return Bar() if sys.stderr.isatty() else PeriodicLines()
    return FileLines()

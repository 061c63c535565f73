"""Index progress on stderr: per-file lines, summary only, or a bar / periodic lines.

A build has two passes (docs/index-lifecycle.md): files are counted while
rows are written, then the embedding pass is counted in model tokens, so its
ETA follows the work actually left (files of very different sizes made a
file-count ETA swing wildly).
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TYPE_CHECKING

import click

from groove.indexing.embedding_pass import EmbedProgress
from groove.indexing.indexer import IndexSummary, Reporter

if TYPE_CHECKING:
    from rich.progress import TaskID

#: How often a line-based display prints an ``Embedding:`` (or ``Progress:``) line.
PROGRESS_LINE_INTERVAL_S = 3.0


def embed_line(progress: EmbedProgress, *, now: float | None = None) -> str:
    """``D/N documents, T/M tokens (P%), R tokens/s, ETA 4 min 10 s``: one embedding step.

    The rate and the ETA are known from the first batch on (tokens are what
    the model's time is proportional to). ``now`` (a ``perf_counter`` value)
    is for a line printed while a batch is still being embedded: the rate
    stays the one measured at the last batch and the ETA counts down from it
    (recomputing the rate mid-batch made it sink and the ETA swing).
    """
    total = max(progress.tokens_total, progress.tokens_done)
    pct = 100.0 * progress.tokens_done / total if total else 100.0
    since = 0.0 if now is None else now - progress.started - progress.elapsed_s
    eta = eta_range_text(progress, since) if progress.tokens_done else "after the first batch"
    return (f"{progress.documents_done}/{progress.documents_total} documents, "
            f"{progress.tokens_done}/{total} tokens ({pct:.0f}%), "
            f"{progress.recent_rate:.0f} tokens/s, ETA {eta}")


def eta_range_text(progress: EmbedProgress, since: float = 0.0) -> str:
    """The ETA (counting down ``since`` seconds after the last batch), as a range
    ``4 min 10 s–5 min 20 s`` while the rate still moves (EmbedProgress.eta_range_s)."""
    found = progress.eta_range_s
    if found is None:
        return eta_text(None)
    soon, late = (eta_text(max(0.0, x - since)) for x in found)
    return soon if soon == late else f"{soon}–{late}"


def eta_text(seconds: float | None) -> str:
    """``1 h 04 min``, ``4 min 10 s``, ``12 s``; ``unknown`` before the first batch."""
    if seconds is None:
        return "unknown"
    whole = max(0, round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes:02d} min"
    return f"{minutes} min {secs:02d} s" if minutes else f"{secs} s"


class _EmbedLines(Reporter):
    """Embedding progress as lines: the totals, the first batch, then every few seconds.

    A batch can take longer than the interval (a slow or loaded machine), so
    a daemon ticker prints the line between batches too, the ETA counting
    down: a plain run never goes quiet for longer than
    :data:`PROGRESS_LINE_INTERVAL_S`.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._printed = 0.0
        self._latest: EmbedProgress | None = None
        self._batches = 0
        self._stop = threading.Event()

    def embed_start(self, progress: EmbedProgress) -> None:
        if not progress.tokens_total:
            return
        click.echo(f"Embedding {progress.documents_total} document(s), "
                   f"about {progress.tokens_total} tokens", err=True)
        self._latest, self._printed = progress, time.monotonic()
        threading.Thread(target=self._tick, name="groove-progress", daemon=True).start()

    def embed_progress(self, progress: EmbedProgress) -> None:
        self._latest = progress
        self._batches += 1
        self._print(force=self._batches == 1)  # the first rate and ETA, at once

    def _tick(self) -> None:
        while not self._stop.wait(PROGRESS_LINE_INTERVAL_S / 3):
            self._print(force=False, now=time.perf_counter())

    def _print(self, *, force: bool, now: float | None = None) -> None:
        with self._lock:
            latest = self._latest
            if latest is None or self._stop.is_set():
                return
            if not force and time.monotonic() - self._printed < PROGRESS_LINE_INTERVAL_S:
                return
            self._printed = time.monotonic()
            click.echo(f"Embedding: {embed_line(latest, now=now)}", err=True)

    def finish(self, summary: IndexSummary) -> None:
        self.stop()

    def stop(self) -> None:
        with self._lock:
            self._stop.set()


class FileLines(_EmbedLines):
    """Default: one line per file that was not unchanged, then embedding lines."""

    def file_done(self, rel_path: str, action: str, detail: str = "") -> None:
        if action in ("unchanged", "skipped"):  # skipped files already logged a warning
            return
        click.echo(f"{action} {rel_path}" + (f" ({detail})" if detail else ""), err=True)


class Quiet(Reporter):
    """``--quiet``: nothing but the summary (printed by the command)."""


class PeriodicLines(_EmbedLines):
    """``--progress`` without a TTY: ``Progress: N/M (P%)`` and ``Embedding:`` lines every few seconds."""

    def __init__(self) -> None:
        super().__init__()
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
    """``--progress`` on a TTY: rich progress bars on stderr, the embedding one with our ETA.

    rich's own time-remaining column needs several updates within its speed
    window and showed ``-:--:--`` when batches take longer; the embedding bar
    shows the rate and ETA computed from the tokens done instead.
    """

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self._progress = Progress(
            "[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[detail]}"), console=Console(stderr=True), transient=True,
        )
        self._task: TaskID | None = None
        self._embed_task: TaskID | None = None

    def start(self, total: int) -> None:
        self._progress.start()
        self._task = self._progress.add_task("reading files", total=total, detail="")

    def file_done(self, rel_path: str, action: str, detail: str = "") -> None:
        if self._task is not None and action != "deleted":
            self._progress.advance(self._task)

    def embed_start(self, progress: EmbedProgress) -> None:
        if progress.tokens_total:
            self._embed_task = self._progress.add_task(
                "embedding (tokens)", total=progress.tokens_total,
                detail=f"0/{progress.documents_total} documents, ETA after the first batch")

    def embed_progress(self, progress: EmbedProgress) -> None:
        if self._embed_task is not None:
            self._progress.update(
                self._embed_task, completed=progress.tokens_done,
                total=max(progress.tokens_total, progress.tokens_done),
                detail=(f"{progress.documents_done}/{progress.documents_total} documents, "
                        f"{progress.recent_rate:.0f} tokens/s, ETA {eta_range_text(progress)}"))

    def finish(self, summary: IndexSummary) -> None:
        self.stop()

    def stop(self) -> None:
        self._progress.stop()


def make_reporter(*, quiet: bool, progress: bool) -> Reporter:
    if quiet:
        return Quiet()
    if progress:
        return Bar() if sys.stderr.isatty() else PeriodicLines()
    return FileLines()

"""The progress lines of `groove index`: what they say, and that they keep coming."""

from __future__ import annotations

import re
import threading
import time

import pytest

from groove.cli import progress as progress_module
from groove.cli.progress import PeriodicLines, embed_line, eta_text
from groove.indexing.embedding_pass import EmbedProgress


def test_an_embedding_line_says_documents_tokens_rate_and_eta():
    p = EmbedProgress(documents_total=49, tokens_total=150_000, documents_done=12,
                      tokens_done=30_000, elapsed_s=200.0)
    assert embed_line(p) == ("12/49 documents, 30000/150000 tokens (20%), 150 tokens/s, "
                             "ETA 13 min 20 s")
    assert embed_line(EmbedProgress(documents_total=3, tokens_total=900)).endswith(
        "ETA after the first batch")
    mid_batch = p.started + p.elapsed_s + 30.0  # 30 s into the next batch
    assert embed_line(p, now=mid_batch).endswith("150 tokens/s, ETA 12 min 50 s")


@pytest.mark.parametrize(("seconds", "text"), [(None, "unknown"), (0.4, "0 s"), (59.6, "1 min 00 s"),
                                              (250, "4 min 10 s"), (3840, "1 h 04 min")])
def test_eta_text(seconds, text):
    assert eta_text(seconds) == text


def test_a_plain_run_keeps_printing_while_a_batch_takes_longer_than_the_interval(
        monkeypatch, capsys):
    """A batch slower than the interval (a loaded machine) must not leave the run silent."""
    monkeypatch.setattr(progress_module, "PROGRESS_LINE_INTERVAL_S", 0.05)
    reporter = PeriodicLines()
    p = EmbedProgress(documents_total=2, tokens_total=1000)
    reporter.embed_start(p)
    p.tokens_done, p.documents_done, p.elapsed_s = 100, 1, 1.0
    reporter.embed_progress(p)  # the first batch: its line at once
    lines: list[str] = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(lines) < 3:  # no further batch arrives
        lines += [x for x in capsys.readouterr().err.splitlines() if x.startswith("Embedding:")]
        time.sleep(0.01)
    reporter.stop()
    assert len(lines) >= 3, lines
    assert lines[0] == "Embedding: 1/2 documents, 100/1000 tokens (10%), 100 tokens/s, ETA 9 s"
    assert all(x.startswith("Embedding: 1/2 documents, 100/1000 tokens (10%)") for x in lines)
    tickers = [t for t in threading.enumerate() if t.name == "groove-progress"]
    for ticker in tickers:
        ticker.join(timeout=30)
    assert tickers and not any(t.is_alive() for t in tickers)  # stopped means silent


def test_an_embedding_line_shows_the_eta_as_a_range_while_the_rate_falls():
    """The plain progress line of `groove index` (what a piped run prints)."""
    p = EmbedProgress(documents_total=100, tokens_total=100_000)
    p.started, now = 0.0, 0.0
    for i in range(10):  # 336 tokens/s falling towards 257, as on the Rust book
        now += 1000 / (336 - 79 * i / 99)
        p.batch_done(1000, now=now)
    line = embed_line(p)
    assert line.startswith("0/100 documents, 10000/100000 tokens (10%), 332 tokens/s, ETA ")
    assert line.endswith("ETA 4 min 31 s–5 min 06 s"), line
    steady = EmbedProgress(documents_total=2, tokens_total=2000)
    steady.started = 0.0
    steady.batch_done(500, now=2.0)
    steady.batch_done(500, now=4.0)
    assert embed_line(steady).endswith("250 tokens/s, ETA 4 s")


def _index_lines(run, tmp_path, monkeypatch, rate_of_batch) -> list[str]:
    """The ``Embedding:`` lines of a plain ``groove index`` over 30 notes, the model's time
    kept by a clock the test holds: batch ``k`` embeds at ``rate_of_batch(k)`` tokens/s."""
    from dataclasses import dataclass, field
    from types import SimpleNamespace

    from groove.indexing import embedding_pass

    clock = SimpleNamespace(now=100.0)

    @dataclass
    class Clocked(EmbedProgress):
        started: float = field(default_factory=lambda: clock.now)

        def batch_done(self, tokens: int, now: float | None = None) -> None:
            clock.now += tokens / rate_of_batch(len(self.batches))
            super().batch_done(tokens, now=clock.now)

    monkeypatch.setattr(embedding_pass, "EmbedProgress", Clocked)
    monkeypatch.setattr(embedding_pass, "WINDOW_TOKENS_MIN", 300)  # a small folder, many batches
    monkeypatch.setattr(progress_module, "PROGRESS_LINE_INTERVAL_S", 0.5)  # each batch's line
    monkeypatch.setattr(progress_module, "time", SimpleNamespace(
        monotonic=lambda: clock.now, perf_counter=lambda: clock.now))
    kb = tmp_path / "kb"
    kb.mkdir(parents=True)
    words = ["harbour", "crane", "cable", "spring", "inspector", "schedule", "gate", "yard",
             "tide", "pier"]
    for d in range(30):
        body = " ".join(words[(d + i) % len(words)] for i in range(30 + 2 * d))
        (kb / f"note-{d:02}.md").write_text(f"# Note {d}\n\n{body}\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = run("index", "--kb-path", str(kb))
    assert result.exit_code == 0, result.stderr
    return [line for line in result.stderr.splitlines() if line.startswith("Embedding: ")]


RANGE = re.compile(r", ETA (\d+ min )?\d+ s–(\d+ min )?\d+ s$")


def test_groove_index_shows_the_eta_as_a_range_while_the_models_rate_falls(
        run, tmp_path, monkeypatch):
    """Issue: the ETA ran 25% short on the Rust book as the rate fell from 336 to 257
    tokens/s. A piped `groove index` whose model slows batch after batch prints a range;
    one whose rate holds prints one ETA on every line."""
    falling = _index_lines(run, tmp_path / "falling", monkeypatch, lambda k: 400 * 0.85 ** k)
    assert len(falling) >= 6, falling
    assert any(RANGE.search(line) for line in falling), falling
    assert not RANGE.search(falling[0])  # one batch measures no trend yet
    steady = _index_lines(run, tmp_path / "steady", monkeypatch, lambda k: 300.0)
    assert len(steady) >= 6, steady
    assert not any(RANGE.search(line) for line in steady), steady
    assert all(", 300 tokens/s, ETA " in line for line in steady), steady

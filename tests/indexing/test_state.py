"""The index state: changed and skipped files, as `groove status` and `groove search` report them.

The user-visible rules: a file `groove index` skipped (binary or non-UTF-8
text, a refused hard link) is counted as skipped, never as "newer", so the
note does not nag forever; a touched file whose bytes did not change stops
being "newer" after `groove index`; and the count of changed files is never
made on a server's request thread.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from groove.indexing.state import FileChanges, FileChangesMonitor

NOTES = {
    "good.md": "# Good\n\nHerons wait at the river mouth at dawn.\n",
    "other.md": "# Other\n\nKingfishers dive from low branches.\n",
}


def groove(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """A real `groove` process, as a shell user runs it."""
    return subprocess.run([sys.executable, "-m", "groove", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "NO_COLOR": "1"})


def status(kb: Path) -> dict[str, str]:
    out = groove("status", "--kb-path", str(kb), cwd=kb.parent)
    assert out.returncode == 0, out.stderr
    return dict(line.split(": ", 1) for line in out.stdout.splitlines())


@pytest.mark.slow  # real processes, real model
def test_skipped_files_are_counted_apart_and_touched_files_clear_after_index(tmp_path):
    kb = tmp_path / "kb"
    kb.mkdir()
    for rel, text in NOTES.items():
        (kb / rel).write_text(text, encoding="utf-8")
    (kb / "latin1.md").write_bytes("# Café\n\nCrème brûlée à la carte.\n".encode("latin-1"))
    (kb / "binary.md").write_bytes(b"\x00\x01\x02 not text \xff\xfe")
    (kb / "linked.md").write_text("# Linked\n\nTwo names, one file.\n", encoding="utf-8")
    os.link(kb / "linked.md", kb / "second-name.md")  # both names are refused

    first = groove("index", "--kb-path", str(kb), "--quiet", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "indexed 2," in first.stdout and "skipped 4," in first.stdout
    lines = status(kb)
    assert lines["Files newer than the index"] == "0"
    assert lines["Files skipped"] == "4 (run groove doctor to see why)"

    found = groove("search", "herons at dawn", "--kb-path", str(kb), cwd=tmp_path)
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["index"]["files_skipped"] == 4
    assert "4 file(s) skipped: run `groove doctor`" in found.stderr
    assert "changed since" not in found.stderr

    os.utime(kb / "good.md")  # touched, same bytes
    assert status(kb)["Files newer than the index"] == "1"
    again = groove("index", "--kb-path", str(kb), "--quiet", cwd=tmp_path)
    assert "unchanged 2" in again.stdout
    assert status(kb)["Files newer than the index"] == "0"

    (kb / "latin1.md").write_bytes("# Café\n\nCrème brûlée, fixed.\n".encode())  # now UTF-8
    lines = status(kb)
    assert (lines["Files newer than the index"], lines["Files skipped"].split()[0]) == ("1", "3")
    groove("index", "--kb-path", str(kb), "--quiet", cwd=tmp_path)
    lines = status(kb)
    assert (lines["Files newer than the index"], lines["Files skipped"].split()[0]) == ("0", "3")
    assert lines["Documents"] == "3"


def test_the_monitor_never_walks_on_the_callers_thread():
    release = threading.Event()
    walkers: list[str] = []

    def slow_walk() -> FileChanges:
        walkers.append(threading.current_thread().name)
        release.wait(30)
        return FileChanges(newer=2, skipped=1)

    monitor = FileChangesMonitor(slow_walk)
    assert monitor.current() is None  # answered at once while the walk is still running
    assert monitor.current() is None and len(walkers) == 1  # one walk at a time
    release.set()
    assert monitor.current(wait=True) == FileChanges(newer=2, skipped=1)
    assert walkers == ["groove-file-changes"]
    assert monitor.current() == FileChanges(newer=2, skipped=1)  # fresh: no second walk
    assert len(walkers) == 1


def test_an_invalidated_count_is_not_reported_and_a_stale_walk_is_dropped():
    gate = threading.Event()
    results = iter([FileChanges(5, 0), FileChanges(0, 0)])

    def walk() -> FileChanges:
        gate.wait(30)
        return next(results)

    monitor = FileChangesMonitor(walk)
    monitor.start()
    monitor.invalidate()  # an index run finished while the first walk ran
    gate.set()
    assert monitor.current(wait=True) == FileChanges(0, 0)


def test_a_one_shot_wait_ends_at_its_limit_and_an_unlimited_one_gets_the_count():
    release = threading.Event()
    monitor = FileChangesMonitor(lambda: (release.wait(30), FileChanges(newer=1, skipped=0))[1])
    assert monitor.current(wait=True, limit=0.0) is None  # the walk outlasts the wait
    threading.Timer(0.05, release.set).start()
    assert monitor.current(wait=True, limit=None) == FileChanges(newer=1, skipped=0)

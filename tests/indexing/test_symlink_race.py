"""A parent directory swapped for a symlink mid-walk must never let outside bytes in.

The swapper runs in its own process (true concurrency with the reader on
another core), flipping ``kb/racedir`` between a real folder and a link to a
folder outside the KB as fast as it can. Each test runs a fixed number of
reads or index runs against it and checks every result.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from groove.errors import PathRefused
from groove.indexing.walk import ExclusionRules, iter_candidate_files, read_file_safely

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX symlink semantics")

SECRET = "OUTSIDE-SECRET"
FILES = 20

_SWAPPER = textwrap.dedent("""
    import os, sys, time
    kb_dir, parked, outside = sys.argv[1:4]
    race = os.path.join(kb_dir, "racedir")
    open(os.path.join(kb_dir, "swapper.ready.txt"), "w").close()
    while True:
        try:
            os.rename(race, parked)
            os.symlink(outside, race)
            os.unlink(race)
            os.rename(parked, race)
            time.sleep(0.0002)  # leave the real folder in place part of the time
        except OSError:
            pass
""")


@pytest.fixture
def race(tmp_path) -> Iterator[Path]:
    kb = tmp_path / "kb"
    (kb / "racedir").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    for i in range(FILES):
        (kb / "racedir" / f"f{i}.md").write_text(f"# Inside {i}\n\nInside note number {i}.\n")
        (outside / f"f{i}.md").write_text(f"# {SECRET}\n\n{SECRET} {i}\n")
    (kb / "top.md").write_text("# Top\n\nA note at the top.\n")
    swapper = subprocess.Popen([sys.executable, "-c", _SWAPPER, str(kb), str(tmp_path / "parked"),
                                str(outside)])
    try:
        deadline = time.monotonic() + 20
        while not (kb / "swapper.ready.txt").exists():
            assert time.monotonic() < deadline and swapper.poll() is None, "swapper did not start"
            time.sleep(0.01)
        yield kb
    finally:
        swapper.kill()
        swapper.wait(10)


def test_reads_under_a_swapping_parent_never_return_outside_bytes(race):
    """At least 4,000 reads, continuing (up to 100,000) until both outcomes were seen often."""
    served = refused = 0
    for n in range(100_000):
        if n >= 4000 and served >= 100 and refused >= 100:
            break
        try:
            data = read_file_safely(race, f"racedir/f{n % FILES}.md")
        except PathRefused as exc:
            refused += 1
            assert "racedir" in str(exc)
            continue
        served += 1
        assert SECRET.encode() not in data
    assert served and refused  # the race really happened both ways


def test_the_walk_under_a_swapping_parent_stays_inside_and_never_raises(race):
    rules = ExclusionRules(race, [], None)
    skipped: list[str] = []
    for _ in range(300):
        found = list(iter_candidate_files(race, rules, {"md"}, lambda p, _why: skipped.append(p)))
        assert "top.md" in found
        assert all(p == "top.md" or p.startswith("racedir/f") for p in found)
    assert set(skipped) <= {"racedir"}  # a swapped folder is reported by name, nothing else


@pytest.mark.slow
def test_indexing_under_a_swapping_parent_stores_no_outside_byte(race, make_kb):
    kb = make_kb(race)
    for _ in range(12):
        kb.index()
        with kb.reading() as store:
            for doc in store.list_documents():
                for chunk in store.document_chunks(doc.id):
                    assert SECRET not in chunk.content and SECRET not in (doc.title or "")

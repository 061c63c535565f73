"""What a commit must never carry: merge-conflict markers left in a file.

A marker pair in a page or a module means two versions were kept side by side
(or a module no longer imports); this test reads every file git tracks."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: A line that is exactly what git writes around a conflict (a Markdown rule of
#: seven "=" alone is also the middle marker, so the opening one must be present too).
_OPENING = re.compile(rb"^<{7}(?: |$)", re.MULTILINE)
_CLOSING = re.compile(rb"^>{7}(?: |$)", re.MULTILINE)


def tracked_files() -> list[Path]:
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                                check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [ROOT / name for name in listed.decode().split("\0") if name]


def conflict_markers(data: bytes) -> list[int]:
    """1-based line numbers of conflict openings and closings in ``data``."""
    return sorted(data.count(b"\n", 0, m.start()) + 1
                  for pattern in (_OPENING, _CLOSING) for m in pattern.finditer(data))


def test_the_marker_finder_sees_a_conflict_and_nothing_else():
    text = b"a\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> main\nb\n"
    assert conflict_markers(text) == [2, 6]
    assert conflict_markers(b"Title\n=======\n\n<<<<<<<< eight\n") == []


def test_no_tracked_file_holds_conflict_markers():
    found = {}
    for path in tracked_files():
        if path.is_file() and not path.is_symlink():
            lines = conflict_markers(path.read_bytes())
            if lines:
                found[str(path.relative_to(ROOT))] = lines
    assert found == {}, f"conflict markers left in (file: lines): {found}"

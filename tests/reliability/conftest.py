"""Reliability tests reuse the server tests' process helpers and ``tests/_index_snapshot.py``."""

from __future__ import annotations

import sys
from pathlib import Path

_TESTS = Path(__file__).resolve().parent.parent
for _folder in (_TESTS / "server", _TESTS):  # process helpers; the index snapshot helper
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))

"""Reliability tests reuse the server tests' process helpers (``tests/server/_helpers.py``)."""

from __future__ import annotations

import sys
from pathlib import Path

_SERVER_TESTS = str(Path(__file__).resolve().parent.parent / "server")
if _SERVER_TESTS not in sys.path:
    sys.path.insert(0, _SERVER_TESTS)

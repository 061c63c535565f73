"""Shared fixtures: one real embedder per session, and tiny knowledge bases."""

from __future__ import annotations

import os
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

# Ray reads this once, when it is imported: every Ray process a test starts keeps to
# 127.0.0.1 (the machine's own address otherwise), whichever test module imports Ray first.
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"


@pytest.fixture(autouse=True)
def _groove_logs_reach_caplog():
    """The CLI stops groove's logger propagating (to avoid double lines under
    the MCP SDK's root handler); tests that ran a command earlier in this
    process still need caplog to see warnings."""
    import logging

    logging.getLogger("groove").propagate = True
    yield


@pytest.fixture(scope="session")
def embedder():
    """The real default model (multilingual-e5-small on its default engine), loaded once."""
    from groove.embedders import get_embedder

    return get_embedder("multilingual-e5-small")


@pytest.fixture
def write_files() -> Callable[[Path, dict[str, str]], Path]:
    """Write ``{relative path: text}`` under a folder (dedented) and return it."""

    def write(root: Path, files: dict[str, str]) -> Path:
        for rel, text in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return root

    return write


@pytest.fixture
def make_kb(embedder, tmp_path):
    """Build a KnowledgeBase over a folder, sharing the session's embedder."""
    from groove.config import load_config
    from groove.kb import KnowledgeBase

    opened: list[KnowledgeBase] = []

    def make(kb_path: Path, **overrides) -> KnowledgeBase:
        config = load_config(kb_path=kb_path, cwd=tmp_path, overrides=overrides or None)
        kb = KnowledgeBase(config, embedder=embedder)
        opened.append(kb)
        return kb

    yield make
    for kb in opened:
        kb.close()

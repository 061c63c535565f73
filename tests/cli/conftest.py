"""The CLI tests' one set-up: commands registered, a ``run`` that invokes them, a KB folder.

A test module states its notes as a module-level ``NOTES`` dict (relative
path -> text) and sets ``INDEXED = True`` when every test wants them indexed
first; ``kb_dir`` then writes them under ``<tmp>/kb`` and moves the working
directory to ``<tmp>`` so no ``groove.toml`` of the repository is discovered.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from groove.cli import cli
from groove.cli.commands import load_all

load_all()

Run = Callable[..., Result]


def _invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def run() -> Run:
    """``run("index", "--kb-path", ...)``: the command's exit code, stdout and stderr."""
    return _invoke


@pytest.fixture
def kb_dir(request: pytest.FixtureRequest, tmp_path: Path, write_files, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    root = write_files(tmp_path / "kb", request.module.NOTES)
    if getattr(request.module, "INDEXED", False):
        assert _invoke("index", "--kb-path", str(root), "-q").exit_code == 0
    return root

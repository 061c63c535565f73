"""Flags that were listed but ignored, or silently overridden, are gone or refused."""

from __future__ import annotations

from re import error as re_error

import pytest
from click.testing import CliRunner

from groove.cli import cli
from groove.cli.commands import load_all

load_all()


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


@pytest.mark.parametrize("command", ["eval", "tune"])
def test_eval_and_tune_take_limit_as_the_search_depth(command):
    assert "Hits fetched per query (default: the largest k; never less)" in " ".join(
        run(command, "--help").output.split())
    result = run(command, "--limit", "0")
    assert result.exit_code == 2 and "--limit" in result.output


def test_search_keeps_its_limit():
    assert "--limit" in run("search", "--help").output


def test_index_refuses_quiet_with_progress(tmp_path):
    result = run("index", "--kb-path", str(tmp_path), "--quiet", "--progress")
    assert result.exit_code == 2
    assert "--quiet and --progress contradict each other" in result.output
    assert not (tmp_path / ".groove.db").exists()  # refused before any work


def test_serve_refuses_bind_with_port(tmp_path):
    result = run("serve", "--kb-path", str(tmp_path), "--transport", "http",
                 "--bind", "127.0.0.1:4000", "--port", "4001")
    assert result.exit_code == 2
    assert "--bind 127.0.0.1:4000 and --port 4001 both name the port" in result.output
    assert not (tmp_path / ".groove.db").exists()


def test_search_refuses_an_uncompilable_glob_naming_it(tmp_path):
    (tmp_path / "a.md").write_text("# A\n\nheron\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["search", "--kb-path", str(tmp_path), "--path-glob",
                                      "[z-a]", "heron"])
    assert result.exit_code == 2 and not isinstance(result.exception, re_error)
    assert "path_globs: '[z-a]' is not a valid glob" in result.output
    assert not (tmp_path / ".groove.db").exists()  # refused before any work

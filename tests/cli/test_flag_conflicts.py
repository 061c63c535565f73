"""Flags that were listed but ignored, or silently overridden, are gone or refused."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from groove.cli import _register_commands, cli

_register_commands()


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


@pytest.mark.parametrize("command", ["eval", "tune"])
def test_eval_and_tune_offer_no_limit_they_would_ignore(command):
    assert "--limit" not in run(command, "--help").output
    result = run(command, "--limit", "3")
    assert result.exit_code == 2 and "has no option --limit" in result.output


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

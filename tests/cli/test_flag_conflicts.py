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


@pytest.mark.parametrize(("flags", "said"), [
    (["--mmr-lambda", "0.3"], "mmr_lambda does nothing: MMR is off for this search"),
    (["--rerank"], "rerank: true does nothing: no reranker is configured"),
])
def test_options_that_cannot_change_the_answer_say_so(tmp_path, flags, said):
    import os
    import subprocess
    import sys

    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "a.md").write_text("# Alpha\n\nThe alpha release notes and what changed.\n")

    def groove(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "groove", *args, "--kb-path", str(kb)],
                              capture_output=True, text=True, timeout=300, env=dict(os.environ))

    assert groove("index").returncode == 0
    done = groove("search", "alpha release", *flags)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count(said) == 1
    assert said not in groove("search", "alpha release").stderr


def test_an_api_key_for_the_local_model_is_called_out(tmp_path):
    import logging

    from groove.config import config_from_toml_text

    records: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: records.append(record.getMessage())  # type: ignore[method-assign]
    logging.getLogger("groove.config").addHandler(handler)
    try:
        config_from_toml_text(f'kb_path = "{tmp_path.as_posix()}"\n[embedding]\n'
                              'provider = "fastembed"\napi_key = "sk-123"\n')
    finally:
        logging.getLogger("groove.config").removeHandler(handler)
    assert any("[embedding] api_key does nothing with the local model" in r for r in records)
    assert not any("sk-123" in r for r in records)

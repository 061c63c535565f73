"""Every command-line mistake is one ``error:`` line on stderr naming what is accepted, exit 2."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groove.cli import cli

MISTAKES = [
    (["search", "q", "--bogus"], ["--bogus", "--limit", "--path-glob"]),
    (["search", "q", "--limt", "3"], ["did you mean --limit"]),
    (["search"], ["missing argument", "usage: groove search [OPTIONS] QUERY"]),
    (["search", "q", "--format", "xml"], ["'json', 'text'"]),
    (["search", "q", "--limit", "many"], ["--limit", "not a valid integer"]),
    (["search", "a", "b"], ["unexpected extra argument", "usage:"]),
    (["bogus"], ["no such command", "get, graph, index, links, ls, search"]),
    (["service", "bogus"], ["no such command", "install, list"]),
    (["graph"], ["--start"]),
    (["index", "--kb-path", ".", "--quiet", "--progress"], ["--quiet", "--progress"]),
]


def _one_error_line(result) -> str:
    assert result.exit_code == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    errors = [line for line in lines if not line.startswith(("INFO ", "deprecated: "))]
    assert len(errors) == 1 and errors[0].startswith("error: "), result.stderr
    assert "Usage:" not in result.stderr and "Error:" not in result.stderr
    assert result.stdout == ""
    return errors[0]


@pytest.mark.parametrize(("argv", "expected"), MISTAKES, ids=[" ".join(a) for a, _ in MISTAKES])
def test_each_mistake_is_one_error_line(run, tmp_path, monkeypatch, argv, expected):
    monkeypatch.chdir(tmp_path)
    line = _one_error_line(run(*argv))
    for piece in expected:
        assert piece in line


def test_a_refusal_raised_by_a_command_takes_the_same_shape(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "kb").mkdir()
    line = _one_error_line(run("serve", "--kb-path", str(tmp_path / "kb"), "--bind",
                               "127.0.0.1:3100", "--port", "3101"))
    assert "--bind" in line and "--port" in line


_FLAG = st.from_regex(r"--[a-z][a-z0-9-]{2,20}", fullmatch=True).filter(
    lambda f: f not in {"--help", "--version"})


@settings(max_examples=40, deadline=None)
@given(command=st.sampled_from(["search", "index", "serve", "status", "doctor", "eval",
                                "tune", "validate", "graph"]), flag=_FLAG)
def test_any_unknown_flag_names_itself_and_the_accepted_ones(command, flag):
    from click.testing import CliRunner

    params = cli.commands[command].params
    known = {o for p in params for o in (*p.opts, *getattr(p, "secondary_opts", []))}
    if flag in known:
        return
    argv = [command, flag] if command != "search" else [command, "q", flag]
    result = CliRunner().invoke(cli, argv, catch_exceptions=False)
    line = _one_error_line(result)
    assert f"has no option {flag}" in line and "--kb-path" in line


def test_the_installed_entry_point_takes_the_same_shape(tmp_path):
    done = subprocess.run([sys.executable, "-m", "groove", "status", "--nope"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [done.stderr.strip()]
    assert done.stderr.startswith("error: `groove status` has no option --nope; accepted: ")


def test_a_one_shot_command_imports_only_its_own_module(tmp_path):
    """`groove status` and `groove search` start fast: neither loads the server, the
    indexer's progress display or the evaluation harness; help still lists every command."""
    probe = (
        "import sys\n"
        "from groove.cli import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('groove.cli.') and m.endswith('_cmd'))\n"
        "print('loaded:', ' '.join(loaded), file=sys.stderr)\n"
    )
    kb = tmp_path / "kb"
    kb.mkdir()

    def loaded(*argv: str) -> set[str]:
        done = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True,
                              text=True, timeout=120, cwd=tmp_path)
        line = [x for x in done.stderr.splitlines() if x.startswith("loaded:")][-1]
        return set(line.split()[1:])

    assert loaded("status", "--kb-path", str(kb)) == {"groove.cli.status_cmd"}
    assert loaded("search", "--kb-path", str(kb), "anything") == {"groove.cli.search_cmd"}
    assert {"groove.cli.serve_cmd", "groove.cli.index_cmd"} <= loaded("--help")

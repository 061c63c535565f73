"""GrooveSeek's flag spellings are rewritten to groove's before parsing."""

from __future__ import annotations

import json
import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st

from groove.cli.compat import BOOL_FLAGS, LIST_FLAGS, RENAMED_FLAGS, upgrade_argv


def test_comma_lists_become_repeated_flags():
    args, notes = upgrade_argv(["search", "q", "--tag-any", "a, b", "--tag-all=x,y"])
    assert args == ["search", "q", "--tag-any", "a", "--tag-any", "b",
                    "--tag-all", "x", "--tag-all", "y"]
    assert len(notes) == 2 and "--tag-any 'a, b'" in notes[0]


def test_exclude_paths_becomes_exclude_path():
    args, notes = upgrade_argv(["graph", "a.md", "--exclude-paths", "b.md,c.md"])
    assert args == ["graph", "a.md", "--exclude-path", "b.md", "--exclude-path", "c.md"]
    assert len(notes) == 1


def test_mmr_values_become_flags():
    assert upgrade_argv(["search", "q", "--mmr", "true"])[0] == ["search", "q", "--mmr"]
    assert upgrade_argv(["search", "q", "--mmr=False"])[0] == ["search", "q", "--no-mmr"]
    assert upgrade_argv(["search", "--mmr", "q"]) == (["search", "--mmr", "q"], [])


def test_grooveseek_global_config_moves_behind_the_command():
    args, notes = upgrade_argv(["--config", "g.toml", "service", "status", "--service-name", "w"])
    assert args == ["service", "status", "--config", "g.toml", "--name", "w"]
    assert len(notes) == 2


def test_reranker_none_means_no_reranking_per_command():
    assert upgrade_argv(["search", "q", "--reranker", "none"])[0] == ["search", "q", "--no-rerank"]
    assert upgrade_argv(["serve", "--reranker=none"])[0] == ["serve", "--no-rerank-by-default"]
    assert upgrade_argv(["search", "q", "--reranker", "bge-v2-m3"])[1] == []


def test_nothing_after_double_dash_is_touched():
    argv = ["search", "--", "--tag-any", "a,b"]
    assert upgrade_argv(argv) == (argv, [])


_OLD = set(LIST_FLAGS) | set(BOOL_FLAGS) | set(RENAMED_FLAGS) | {"--config", "--reranker"}


@given(st.lists(st.text(min_size=0, max_size=12).filter(
    lambda a: a.partition("=")[0] not in _OLD)))
def test_argv_without_grooveseek_spellings_is_unchanged(argv):
    assert upgrade_argv(argv) == (argv, [])


def test_the_groove_command_applies_it(tmp_path):
    (tmp_path / "a.md").write_text("# A\n\nalpha text\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "groove", "search", "alpha", "--kb-path",
                           str(tmp_path), "--tag-any", "zzz,b", "--mmr", "false"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "deprecated: --tag-any 'zzz,b'" in done.stderr and "read as --no-mmr" in done.stderr
    assert json.loads(done.stdout)["filter_applied"]["tags_any"] == ["zzz", "b"]

"""File names and file types groove cannot carry: skipped with one warning each, never fatal."""

from __future__ import annotations

import logging
import os
import sys

import pytest
from click.testing import CliRunner

from groove.cli import cli
from groove.cli.commands import load_all
from groove.errors import PathRefused
from groove.indexing.walk import (
    ExclusionRules,
    display_path,
    iter_candidate_files,
    read_file_safely,
)

load_all()
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX file names and FIFOs")


def _write_raw(folder, name: bytes, data: bytes) -> None:
    with open(os.path.join(os.fsencode(folder), name), "wb") as fh:
        fh.write(data)


def _walk(root) -> tuple[list[str], list[tuple[str, str]]]:
    skipped: list[tuple[str, str]] = []
    found = list(iter_candidate_files(root, ExclusionRules(root, [], None), {"md"},
                                      lambda shown, why: skipped.append((shown, why))))
    return found, skipped


@posix_only
def test_non_utf8_name_is_skipped_and_every_later_file_indexed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "a.md").write_text("# A\n\nThe aardvark.\n")
    _write_raw(kb, b"b-\xff.md", b"# b\n\nx\n")
    (kb / "c.md").write_text("# C\n\nThe caracal.\n")
    (kb / "z").mkdir()
    (kb / "z" / "zebra.md").write_text("# Z\n\nThe zebra.\n")
    result = CliRunner().invoke(cli, ["index", "--kb-path", str(kb)], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    assert "indexed 3," in result.stdout and "skipped 1," in result.stdout
    warnings = [ln for ln in result.stderr.splitlines() if "b-\\xff.md" in ln]
    assert len(warnings) == 1 and "not valid UTF-8" in warnings[0]
    again = CliRunner().invoke(cli, ["index", "--kb-path", str(kb)], catch_exceptions=False)
    assert again.exit_code == 0 and "unchanged 3" in again.stdout


@posix_only
def test_non_utf8_directory_is_skipped_with_its_name_escaped(tmp_path):
    os.mkdir(os.path.join(os.fsencode(tmp_path), b"d\xe9"))
    _write_raw(os.path.join(os.fsencode(tmp_path), b"d\xe9"), b"x.md", b"x")
    (tmp_path / "ok.md").write_text("ok")
    found, skipped = _walk(tmp_path)
    assert found == ["ok.md"]
    assert skipped == [("d\\xe9", "the directory name is not valid UTF-8; rename it to index it")]


@posix_only
def test_fifo_gets_the_same_skip_warning_as_other_skipped_files(tmp_path, caplog):
    (tmp_path / "a.md").write_text("a")
    os.mkfifo(tmp_path / "pipe.md")
    os.mkfifo(tmp_path / "pipe.bin")  # not a candidate by extension: no warning
    with caplog.at_level(logging.WARNING, logger="groove.indexing.walk"):
        found = list(iter_candidate_files(tmp_path, ExclusionRules(tmp_path, [], None), {"md"}))
    assert found == ["a.md"]
    messages = [r.getMessage() for r in caplog.records]
    assert messages == ["skipped pipe.md: it is a FIFO; only regular files are indexed"]


@posix_only
def test_backslash_in_a_name_is_skipped_saying_why_not_no_such_file(tmp_path):
    (tmp_path / "a\\b.md").write_text("text")
    found, skipped = _walk(tmp_path)
    assert found == []
    assert skipped[0][0] == "a\\b.md" and "backslash" in skipped[0][1]
    with pytest.raises(PathRefused, match="backslash") as info:
        read_file_safely(tmp_path, "a\\b.md")
    assert "No such file" not in str(info.value)


def test_display_path_escapes_only_what_is_not_utf8():
    assert display_path("日本/ok.md") == "日本/ok.md"
    assert display_path(os.fsdecode(b"b-\xff.md")) == "b-\\xff.md"


# --- properties ---------------------------------------------------------------------------
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from groove.indexing.fileset import FileSet  # noqa: E402


@given(st.binary(min_size=1, max_size=40).filter(lambda b: b"\x00" not in b and b"/" not in b))
def test_display_path_is_always_printable_utf8_and_exact_for_utf8_names(raw):
    name = os.fsdecode(raw)
    shown = display_path(name)
    shown.encode("utf-8")  # never raises
    try:
        assert shown == raw.decode("utf-8")
    except UnicodeDecodeError:
        assert "\\x" in shown


_segment = st.sampled_from(["a", "B", ".git", "node_modules", ".obsidian", "x y", "日本", "ok"])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.lists(_segment, max_size=3),
                          st.sampled_from(["n.md", "n.MD", "n.txt", "n", "i.md"])),
                min_size=1, max_size=8),
       st.sampled_from(["", "i.md\n", "a/\n", "*.md\n!ok/**\n"]))
@posix_only
def test_the_walk_yields_exactly_the_members_present_on_disk(tmp_path_factory, layout, ignore):
    root = tmp_path_factory.mktemp("kb")
    (root / ".grooveignore").write_text(ignore)
    written = set()
    for folders, name in layout:
        rel = "/".join([*folders, name])
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.is_dir():
            path.write_text("x")
            written.add(rel)
    files = FileSet(root, ExclusionRules(root, [".obsidian"], None), {"md"})
    assert set(files.walk()) == {p for p in written if files.includes(p)}


@posix_only
def test_rebuild_index_over_mcp_skips_the_undecodable_name(tmp_path, make_kb):
    import asyncio

    from mcp import Client

    from groove.server.mcp import build_mcp_server

    kb_dir = tmp_path / "kb"
    kb_dir.mkdir()
    (kb_dir / "a.md").write_text("# A\n\nThe aardvark.\n")
    _write_raw(kb_dir, b"b-\xff.md", b"# b\n\nx\n")
    kb = make_kb(kb_dir)

    async def go():
        async with Client(build_mcp_server(kb)) as client:
            return await client.call_tool("rebuild_index", {})

    result = asyncio.run(go())
    assert not result.is_error, result.content[0].text
    assert "indexed 1," in result.content[0].text and "skipped 1," in result.content[0].text

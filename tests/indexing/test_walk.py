"""Exclusion rules, the walk and safe reading (SPEC 3 Walk / Links)."""

from __future__ import annotations

import logging
import os
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from groove.errors import GrooveError, PathRefused
from groove.indexing import walk
from groove.indexing.walk import ExclusionRules, iter_candidate_files, read_file_safely, sha256_hex

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX file semantics")


def make(root: Path, *paths: str, text: str = "x\n") -> Path:
    for rel in paths:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.fixture
def walk_warnings():
    """Warnings logged by groove.indexing.walk, captured on that logger itself.

    Attached directly (not through propagation to the root logger) so the
    result does not depend on how other tests left the logging tree.
    """
    logger = logging.getLogger("groove.indexing.walk")
    handler, old_level = _Records(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)
    try:
        yield handler.messages
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)


def walk_kb(root: Path, exclude_dirs=(), db_path=None, exts=("md", "txt")) -> list[str]:
    rules = ExclusionRules(root, list(exclude_dirs), db_path)
    return list(iter_candidate_files(root, rules, set(exts)))


# --- directory exclusion ---------------------------------------------------------------
def test_exclude_dirs_match_basename_case_insensitively(tmp_path):
    make(tmp_path, "keep.md", "Target/a.md", "deep/er/TARGET/b.md", "targets/c.md")
    assert walk_kb(tmp_path, exclude_dirs=["target"]) == ["keep.md", "targets/c.md"]


def test_always_excluded_dirs_apply_even_with_an_empty_list(tmp_path):
    make(tmp_path, "a.md", ".git/x.md", "sub/.SVN/y.md", "Node_Modules/pkg/z.md")
    assert walk_kb(tmp_path, exclude_dirs=[]) == ["a.md"]
    assert set(walk.ALWAYS_EXCLUDED_DIRS) == {".git", ".svn", "node_modules"}


def test_excludes_dir_and_file_answer_for_nested_paths(tmp_path):
    rules = ExclusionRules(tmp_path, [".obsidian"], None)
    assert rules.excludes_dir(".obsidian")
    assert rules.excludes_dir("notes/.Obsidian/plugins")
    assert rules.excludes_file("notes/.obsidian/workspace.md")
    assert not rules.excludes_file("notes/obsidian.md")


def test_extensions_are_matched_case_insensitively_and_others_ignored(tmp_path):
    make(tmp_path, "A.MD", "b.Txt", "c.pdf", "noext", "d.md.bak")
    assert walk_kb(tmp_path) == ["A.MD", "b.Txt"]
    assert walk_kb(tmp_path, exts=("md",)) == ["A.MD"]


def test_results_are_sorted_posix_paths(tmp_path):
    make(tmp_path, "z.md", "a/b/c.md", "a/a.md", "m.md")
    assert walk_kb(tmp_path) == ["a/a.md", "a/b/c.md", "m.md", "z.md"]


# --- .grooveignore -------------------------------------------------------------------------
def ignore(root: Path, text: str) -> None:
    (root / ".grooveignore").write_text(text, encoding="utf-8")


def test_grooveignore_patterns_are_case_insensitive(tmp_path):
    make(tmp_path, "keep.md", "Drafts/a.md", "notes/Secret.MD", "notes/ok.md")
    ignore(tmp_path, "# comment\n\ndrafts/\nsecret.md\n")
    assert walk_kb(tmp_path) == ["keep.md", "notes/ok.md"]


def test_negation_reincludes_what_an_earlier_line_excluded(tmp_path):
    make(tmp_path, "a.md", "b.md", "keep.md")
    ignore(tmp_path, "*.md\n!keep.md\n")
    assert walk_kb(tmp_path) == ["keep.md"]


def test_negation_before_the_exclusion_has_no_effect(tmp_path):
    make(tmp_path, "a.md", "keep.md")
    ignore(tmp_path, "!keep.md\n*.md\n")
    assert walk_kb(tmp_path) == []


def test_file_under_an_excluded_directory_stays_excluded(tmp_path):
    make(tmp_path, "build/keep.md", "build/x.md", "other.md")
    ignore(tmp_path, "build/\n!build/keep.md\n")
    assert walk_kb(tmp_path) == ["other.md"]
    rules = ExclusionRules(tmp_path, [], None)
    assert rules.excludes_file("build/keep.md")  # the watcher asks the same question


def test_negation_cannot_reinclude_exclude_dirs(tmp_path):
    make(tmp_path, "node_modules/readme.md", "vendor/a.md")
    ignore(tmp_path, "!node_modules/\n!node_modules/readme.md\n!vendor/a.md\n")
    assert walk_kb(tmp_path, exclude_dirs=["vendor"]) == []


def test_grooveignore_below_the_root_is_not_read(tmp_path):
    make(tmp_path, "sub/a.md", "b.md")
    (tmp_path / "sub" / ".grooveignore").write_text("*.md\n", encoding="utf-8")
    assert walk_kb(tmp_path) == ["b.md", "sub/a.md"]


def test_anchored_and_double_star_patterns(tmp_path):
    make(tmp_path, "root.md", "sub/root.md", "docs/x/y/draft-1.md", "docs/final.md")
    ignore(tmp_path, "/root.md\ndocs/**/draft*\n")
    assert walk_kb(tmp_path) == ["docs/final.md", "sub/root.md"]


def test_japanese_names_in_grooveignore(tmp_path):
    make(tmp_path, "下書き/メモ.md", "公開/記事.md")
    ignore(tmp_path, "下書き/\n")
    assert walk_kb(tmp_path) == ["公開/記事.md"]


def test_reload_picks_up_a_changed_grooveignore(tmp_path):
    make(tmp_path, "a.md", "b.md")
    rules = ExclusionRules(tmp_path, [], None)
    assert not rules.excludes_file("a.md")
    ignore(tmp_path, "a.md\n")
    assert not rules.excludes_file("a.md")  # rules are a snapshot until reloaded
    rules.reload()
    assert rules.excludes_file("a.md")
    (tmp_path / ".grooveignore").unlink()
    rules.reload()
    assert not rules.excludes_file("a.md")


def test_too_many_patterns_warns_once_and_ignores_the_excess(tmp_path, walk_warnings):
    lines = [f"n{i}.md" for i in range(1000)] + ["late.md"]
    ignore(tmp_path, "\n".join(lines) + "\n")
    rules = ExclusionRules(tmp_path, [], None)
    assert rules.excludes_file("n999.md")
    assert not rules.excludes_file("late.md")
    warnings = [m for m in walk_warnings if ".grooveignore" in m]
    assert len(warnings) == 1 and "1000 patterns" in warnings[0]


def test_oversize_ignore_file_warns_once_and_ignores_the_excess(tmp_path, walk_warnings):
    filler = "".join(f"# padding comment line number {i:06d}\n" for i in range(2000))
    assert len(filler.encode()) > 64 * 1024
    ignore(tmp_path, "early.md\n" + filler + "late.md\n")
    rules = ExclusionRules(tmp_path, [], None)
    assert rules.excludes_file("early.md")
    assert not rules.excludes_file("late.md")
    messages = [m for m in walk_warnings if ".grooveignore" in m]
    assert len(messages) == 1 and "64 KiB" in messages[0]
    assert rules.warnings == messages


# --- the database files ----------------------------------------------------------------------
@pytest.mark.parametrize("db_arg", ["default", "relative", "nested"])
def test_db_file_and_its_siblings_are_excluded(tmp_path, db_arg):
    db = {"default": tmp_path / ".groove.db", "relative": Path("index.md"),
          "nested": tmp_path / "data" / "kb.txt"}[db_arg]
    db_file = db if db.is_absolute() else tmp_path / db
    base = db_file.relative_to(tmp_path).as_posix()
    make(tmp_path, "note.md", *(base + s for s in ("", "-wal", "-shm", "-journal")))
    rules = ExclusionRules(tmp_path, [], db)
    for suffix in ("", "-wal", "-shm", "-journal"):
        assert rules.excludes_file(base + suffix)
    every_ext = {Path(base + s).suffix.lstrip(".") for s in ("", "-wal", "-shm", "-journal")}
    assert walk_kb(tmp_path, db_path=db, exts=every_ext | {"md"}) == ["note.md"]


def test_db_outside_the_kb_excludes_nothing(tmp_path):
    kb = make(tmp_path / "kb", "a.md")
    rules = ExclusionRules(kb, [], tmp_path / "elsewhere" / "a.md")
    assert not rules.excludes_file("a.md")


# --- links, special files --------------------------------------------------------------------
@posix_only
def test_symlinked_file_and_dir_are_skipped_with_a_warning(tmp_path, walk_warnings):
    kb = make(tmp_path / "kb", "real.md", "dir/inner.md")
    outside = make(tmp_path / "outside", "secret.md")
    (kb / "link.md").symlink_to(kb / "real.md")
    (kb / "linkdir").symlink_to(outside, target_is_directory=True)
    (kb / "dir" / "escape.md").symlink_to(outside / "secret.md")
    assert walk_kb(kb) == ["dir/inner.md", "real.md"]
    text = "\n".join(walk_warnings)
    assert "link.md" in text and "linkdir" in text and "dir/escape.md" in text


@posix_only
def test_reading_a_symlink_is_refused(tmp_path):
    kb = make(tmp_path / "kb", "real.md")
    (kb / "link.md").symlink_to(kb / "real.md")
    with pytest.raises(PathRefused, match="link.md.*symbolic link"):
        read_file_safely(kb, "link.md")


@posix_only
def test_reading_through_a_symlinked_parent_is_refused(tmp_path):
    kb = make(tmp_path / "kb", "real/a.md")
    outside = make(tmp_path / "outside", "secret.md")
    (kb / "inner").symlink_to(kb / "real", target_is_directory=True)
    (kb / "out").symlink_to(outside, target_is_directory=True)
    with pytest.raises(PathRefused, match="parent directory"):
        read_file_safely(kb, "inner/a.md")
    with pytest.raises(PathRefused, match="parent directory"):
        read_file_safely(kb, "out/secret.md")


@pytest.mark.parametrize("bad", ["../outside.md", "/etc/passwd", "a/../../x.md", "a\x00.md", ""])
def test_paths_leaving_the_kb_are_refused(tmp_path, bad):
    kb = make(tmp_path / "kb", "a.md")
    make(tmp_path, "outside.md")
    with pytest.raises(PathRefused):
        read_file_safely(kb, bad)


@posix_only
def test_hard_linked_file_is_refused_naming_it(tmp_path):
    kb = make(tmp_path, "orig.md")
    os.link(kb / "orig.md", kb / "twin.md")
    with pytest.raises(PathRefused, match=r"twin\.md.*2 hard links"):
        read_file_safely(kb, "twin.md")
    with pytest.raises(PathRefused, match=r"orig\.md"):
        read_file_safely(kb, "orig.md")


@posix_only
def test_fifo_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "pipe.md")
    outcome: list[BaseException | bytes] = []

    def attempt() -> None:
        try:
            outcome.append(read_file_safely(tmp_path, "pipe.md"))
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread
            outcome.append(exc)

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(timeout=5)
    assert not worker.is_alive(), "read_file_safely blocked on a FIFO"
    assert isinstance(outcome[0], PathRefused)
    assert "FIFO" in str(outcome[0]) and "pipe.md" in str(outcome[0])


@posix_only
def test_walk_lists_no_fifo(tmp_path):
    make(tmp_path, "a.md")
    os.mkfifo(tmp_path / "pipe.md")
    assert walk_kb(tmp_path) == ["a.md"]


def test_directory_is_refused(tmp_path):
    (tmp_path / "dir.md").mkdir()
    with pytest.raises(PathRefused, match="directory"):
        read_file_safely(tmp_path, "dir.md")


def test_oversize_file_is_refused_before_reading(tmp_path, monkeypatch):
    big = tmp_path / "big.md"
    with open(big, "wb") as fh:
        fh.truncate(50 * 1024 * 1024 + 1)  # sparse: no real disk use

    def no_reading(*args, **kwargs):
        raise AssertionError("read attempted on an oversize file")

    monkeypatch.setattr(walk, "_read_fd", no_reading)
    with pytest.raises(PathRefused, match=r"big\.md.*over the 50\.0 MiB limit"):
        read_file_safely(tmp_path, "big.md")


def test_max_bytes_boundary(tmp_path):
    (tmp_path / "a.md").write_bytes(b"12345")
    assert read_file_safely(tmp_path, "a.md", max_bytes=5) == b"12345"
    with pytest.raises(PathRefused):
        read_file_safely(tmp_path, "a.md", max_bytes=4)


def test_missing_file_is_a_groove_error(tmp_path):
    with pytest.raises(GrooveError, match="gone.md"):
        read_file_safely(tmp_path, "gone.md")


def test_reads_exact_bytes_and_hashes_them(tmp_path):
    payload = "# 見出し\n本文\n".encode()
    (tmp_path / "ja.md").write_bytes(payload)
    data = read_file_safely(tmp_path, "ja.md")
    assert data == payload
    assert sha256_hex(b"") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


# --- deep trees ------------------------------------------------------------------------------------
def test_a_200_level_tree_is_walked_and_read(tmp_path):
    parts = ["d"] * 200
    deep = tmp_path.joinpath(*parts)
    deep.mkdir(parents=True)
    (deep / "bottom.md").write_text("deep\n", encoding="utf-8")
    rel = "/".join(parts) + "/bottom.md"
    assert walk_kb(tmp_path) == [rel]
    assert read_file_safely(tmp_path, rel) == b"deep\n"


def test_a_very_deep_tree_is_cut_at_the_depth_cap_with_one_warning(tmp_path):
    """The red-team's tree was 2,100 levels deep (every search then took 41 s); 300 levels
    show the rule: files within the cap are found, the walk stops at it and says so once
    (the 200-level tree above stays within it)."""
    root = tmp_path / "kb"
    root.mkdir()
    fd = os.open(root, os.O_RDONLY)
    try:
        for level in range(1, 301):
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
            if level in (10, walk.MAX_DIR_DEPTH, walk.MAX_DIR_DEPTH + 1, 300):
                note = os.open(f"n{level}.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
                os.write(note, b"# deep\n")
                os.close(note)
    finally:
        os.close(fd)
    skipped: list[tuple[str, str]] = []
    found = list(iter_candidate_files(root, ExclusionRules(root, [], None), {"md"},
                                      lambda path, why: skipped.append((path, why))))
    assert sorted(p.rsplit("/", 1)[1] for p in found) == ["n10.md", f"n{walk.MAX_DIR_DEPTH}.md"]
    assert len(skipped) == 1 and f"deeper than {walk.MAX_DIR_DEPTH} folder levels" in skipped[0][1]
    assert skipped[0][0].count("/") == walk.MAX_DIR_DEPTH


_SEGMENT = st.sampled_from(["a", "b.md", ".", "..", "", ".hidden", "x.", "ノート.md", "c.tar.gz"])


@given(st.lists(_SEGMENT, max_size=6), st.booleans())
def test_path_segments_are_split_as_pathlib_splits_them(segments, backslashes):
    """The walk's string splitting equals PurePosixPath's for every relative path."""
    from pathlib import PurePosixPath

    rel = "/".join(segments)
    if rel.startswith("/"):
        rel = rel.lstrip("/")  # relative paths only: the walk never builds another kind
    expected = [p for p in PurePosixPath(rel).parts if p not in ("", ".", "/")]
    shown = rel.replace("/", "\\") if backslashes else rel
    assert walk._parts(shown) == expected


@given(st.text(max_size=12))
def test_a_file_name_suffix_is_pathlibs(name):
    from pathlib import PurePosixPath

    name = name.replace("/", "_").replace("\x00", "_")
    if name in ("", ".", ".."):
        return
    assert walk._suffix(name) == PurePosixPath(name).suffix

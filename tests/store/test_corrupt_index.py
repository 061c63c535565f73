"""A damaged or unwritable index: every command says so in one line and names the way out.

The damage is the red-team's: seeded random bytes over the middle half of the
file (page 1 intact), or a destroyed header. ``groove index --force`` must
rebuild into a fresh file, swap it in, and keep the damaged one aside.
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from mcp import Client

from groove.cli import cli
from groove.cli.commands import load_all
from groove.errors import CorruptIndexError, NoIndexError
from groove.store import open_store

load_all()

NOTES = {
    f"notes/n{i}.md": f"# Note {i}\n\nThe heron count number {i} was taken at dawn by the river.\n"
    for i in range(8)
}
pytestmark = pytest.mark.slow  # real model, several index runs


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """One indexed KB; each test damages its own copy."""
    kb = tmp_path_factory.mktemp("built") / "kb"
    for rel, text in NOTES.items():
        (kb / rel).parent.mkdir(parents=True, exist_ok=True)
        (kb / rel).write_text(text, encoding="utf-8")
    assert run("index", "--kb-path", str(kb), "--quiet").exit_code == 0
    return kb


@pytest.fixture
def kb_dir(built, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return Path(shutil.copytree(built, tmp_path / "kb"))


def damage_middle(db: Path) -> None:
    data = bytearray(db.read_bytes())
    rng = random.Random(1313)
    start, end = len(data) // 4, 3 * len(data) // 4
    data[start:end] = bytes(rng.randrange(256) for _ in range(end - start))
    db.write_bytes(bytes(data))


def damage_header(db: Path) -> None:
    data = bytearray(db.read_bytes())
    data[:100] = b"\x5a" * 100
    db.write_bytes(bytes(data))


def one_line_saying_how_to_recover(result, db: Path) -> None:
    assert "Traceback" not in result.output
    lines = [ln for ln in result.stderr.splitlines() if "damaged" in ln]
    assert len(lines) == 1, result.stderr
    assert str(db) in lines[0] and "groove index --force" in lines[0]


@pytest.mark.parametrize("damage", [damage_middle, damage_header])
def test_every_command_reports_the_damage_and_index_force_recovers(kb_dir, damage):
    db = kb_dir / ".groove.db"
    assert not Path(f"{db}-wal").exists() or Path(f"{db}-wal").stat().st_size == 0
    damage(db)
    kb = str(kb_dir)
    for args in (("status",), ("search", "heron"), ("index",)):
        result = run(*args, "--kb-path", kb)
        assert result.exit_code == 2, (args, result.output)
        one_line_saying_how_to_recover(result, db)
    doctor = run("doctor", "--kb-path", kb)
    assert doctor.exit_code == 1 and "damaged" in doctor.stdout
    assert "fix: groove index --force" in doctor.stdout

    rebuilt = run("index", "--force", "--kb-path", kb, "--quiet")
    assert rebuilt.exit_code == 0, rebuilt.output
    assert "indexed 8," in rebuilt.stdout
    aside = list(kb_dir.glob(".groove.db.corrupt-*"))
    assert [p.name for p in aside if not p.name.endswith(("-wal", "-shm"))]
    assert not list(kb_dir.glob(".groove.db.rebuild*"))
    assert run("status", "--kb-path", kb).exit_code == 0
    assert run("doctor", "--kb-path", kb).exit_code == 0
    found = run("search", "heron", "--kb-path", kb)
    assert found.exit_code == 0 and "notes/n" in found.stdout


def test_the_server_answers_with_the_message_and_picks_up_the_rebuilt_file(kb_dir, make_kb):
    from groove.server.mcp import build_mcp_server

    db = kb_dir / ".groove.db"
    kb = make_kb(kb_dir)
    server = build_mcp_server(kb)
    damage_header(db)

    async def search() -> tuple[bool, str]:
        async with Client(server) as client:
            result = await client.call_tool("search", {"query": "heron"})
        return result.is_error, "".join(c.text for c in result.content)

    is_error, text = asyncio.run(search())
    assert is_error and "damaged" in text and "groove index --force" in text
    assert "internal error" not in text
    assert run("index", "--force", "--kb-path", str(kb_dir), "--quiet").exit_code == 0
    is_error, text = asyncio.run(search())
    assert not is_error and "notes/n" in text


def test_a_foreign_sqlite_database_is_never_written_to(tmp_path):
    foreign = tmp_path / "app.sqlite"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE users (name TEXT)")
    conn.commit()
    conn.close()
    before = foreign.read_bytes()
    with pytest.raises(NoIndexError, match="not a groove index.*users"):
        open_store(foreign, create=True)
    assert foreign.read_bytes() == before
    assert not Path(f"{foreign}-wal").exists()


def test_quick_check_failure_is_a_corrupt_index_error(kb_dir):
    db = kb_dir / ".groove.db"
    damage_middle(db)
    with pytest.raises(CorruptIndexError, match="damaged"):
        store = open_store(db)
        try:
            store.check_health()
        finally:
            store.close()


def _sqlite_failure(code: int, text: str) -> sqlite3.OperationalError:
    exc = sqlite3.OperationalError(text)
    exc.sqlite_errorcode = code  # what SQLite sets for a real failure
    return exc


def test_cannot_open_is_worded_as_a_permissions_problem_naming_the_paths(tmp_path, monkeypatch):
    """Read-only folder and file: 'unable to open database file' says what to fix.

    (Real permissions cannot be taken away from root, which CI runs as; the
    SQLite failure is therefore raised by a stand-in for ``sqlite3.connect``.)
    """
    db = tmp_path / "ro" / ".groove.db"
    db.parent.mkdir()
    db.write_bytes(b"")
    monkeypatch.setattr(sqlite3, "connect", lambda *a, **k: (_ for _ in ()).throw(
        _sqlite_failure(14, "unable to open database file")))
    monkeypatch.setattr("os.access", lambda path, mode: False)
    with pytest.raises(Exception) as info:
        open_store(db, create=True)
    message = str(info.value)
    assert "permissions problem" in message
    assert f"the index file {db}" in message and f"its folder {db.parent}" in message


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
def test_read_only_folder_and_index_for_real(kb_dir):
    db = kb_dir / ".groove.db"
    db.chmod(0o444)
    kb_dir.chmod(0o555)
    try:
        result = run("index", "--kb-path", str(kb_dir))
    finally:
        kb_dir.chmod(0o755)
        db.chmod(0o644)
    assert result.exit_code == 2 and "permissions problem" in result.stderr


def test_a_running_kb_reads_the_file_that_replaced_its_index(kb_dir, make_kb, write_files):
    """`index --force` swaps a new file in: an open KnowledgeBase follows it at its next call."""
    from groove.search.request import SearchRequest

    kb = make_kb(kb_dir)
    assert kb.list_documents()
    other = write_files(kb_dir.parent / "other", {"only.md": "# Only\n\nThe ibis note.\n"})
    fresh = make_kb(other)
    fresh.index()
    fresh.close()
    os.replace(other / ".groove.db", kb_dir / ".groove.db")
    assert [d.path for d in kb.list_documents()] == ["only.md"]
    hits = kb.search(SearchRequest(query="ibis", limit=3, include_low_quality=True))
    assert [h.path for h in hits.results] == ["only.md"]

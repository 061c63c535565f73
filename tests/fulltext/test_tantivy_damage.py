"""A damaged, planted or vanished full-text folder (``.groove.db.fts/``), as a user meets it:
through the CLI and real MCP clients. Never a hang, a crash or a traceback; the folder is
rebuilt from the database, and a search answers meanwhile."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client, StdioServerParameters
from tests.server._helpers import free_port

from groove.errors import FullTextDamaged
from groove.fulltext.tantivy import TantivyIndex

NOTES = {f"n{i}.md": f"# Note {i}\n\nalpha beta gamma number {i} delta\n" for i in range(12)}
NOTES["zebra.md"] = "# Zebra\n\nThe quagga grazes beside the zebra herd.\n"


def groove(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """One CLI run; a hang fails the test at ``timeout`` instead of stalling the suite."""
    return subprocess.run([sys.executable, "-m", "groove", *args], capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, "RUST_BACKTRACE": "0"})


def ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "PanicException" not in done.stderr, done.stderr
    return done.stdout


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    root.mkdir()
    for name, text in NOTES.items():
        (root / name).write_text(text, encoding="utf-8")
    ok(groove("index", "--kb-path", str(root)))
    return root


def fts(kb: Path) -> Path:
    return kb / ".groove.db.fts"


def segment_file(kb: Path, suffix: str) -> Path:
    """The largest segment's file: the one holding most notes, zebra.md among them (a build
    publishes its first document, n0.md, in a segment of its own)."""
    return max((p for p in fts(kb).iterdir() if p.suffix == suffix),
               key=lambda p: (p.stat().st_size, p.name))


def flip(path: Path, offset: int, count: int = 4) -> None:
    data = bytearray(path.read_bytes())
    for i in range(offset, min(offset + count, len(data))):
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))


def keyword_search_works(kb: Path, word: str = "quagga") -> bool:
    """The folder answers a keyword query with the one note holding it (opened afresh)."""
    index = TantivyIndex(fts(kb))
    try:
        return len(index.search([word], 5)) == 1
    finally:
        index.close()


def search_paths(kb: Path, query: str = "quagga") -> list[str]:
    out = ok(groove("search", "--kb-path", str(kb), "--format", "json", query))
    return [hit["path"] for hit in json.loads(out)["results"]]


# --- item 3: damaged bytes: no panic reaches the user, the folder is rebuilt -----------------

@pytest.mark.parametrize("suffix", [".fast", ".idx", ".term"])
def test_a_damaged_segment_never_panics_a_search_and_is_rebuilt(kb, suffix):
    target = segment_file(kb, suffix)
    flip(target, target.stat().st_size // 3)
    assert search_paths(kb)[0] == "zebra.md"
    assert keyword_search_works(kb)


def test_a_fresh_clone_holding_a_damaged_folder_can_be_rebuilt_with_force(kb, tmp_path):
    for path in fts(kb).iterdir():
        if path.suffix in (".fast", ".idx", ".term", ".pos", ".store", ".fieldnorm"):
            flip(path, 0, 64)
    clone = tmp_path / "clone"
    shutil.copytree(kb, clone)
    out = ok(groove("index", "--force", "--kb-path", str(clone)))
    assert out.startswith("indexed 13,")
    assert keyword_search_works(clone)


def _stdio(kb: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "groove", "serve", "--kb-path", str(kb), "--no-watch"],
        env={**os.environ, "RUST_BACKTRACE": "0"})


def _paths(result: Any) -> list[str]:
    assert not result.is_error, result.content
    return [hit["path"] for hit in result.structured_content["results"]]


def test_a_stdio_server_keeps_answering_when_its_folder_is_damaged_under_it(kb):
    """Bytes overwritten in every segment file while the server has them mapped: the
    next searches answer (the first from the vector leg, said so), the server lives."""
    async def go() -> list[Any]:
        async with Client(_stdio(kb)) as client:
            before = await client.call_tool("search", {"query": "quagga"})
            for path in fts(kb).iterdir():
                if path.suffix in (".fast", ".idx", ".term", ".fieldnorm"):
                    flip(path, 0, 64)
            during = [await client.call_tool("search", {"query": "quagga"}) for _ in range(3)]
            return [before, *during]

    results = asyncio.run(go())
    assert all(_paths(r)[:1] == ["zebra.md"] for r in results)
    assert keyword_search_works(kb)


# --- item 4: a FIFO in the folder hangs nothing --------------------------------------------

@pytest.mark.parametrize("name", ["meta.json", "segment"])
def test_a_fifo_in_the_folder_hangs_no_command(kb, name):
    target = fts(kb) / "meta.json" if name == "meta.json" else segment_file(kb, ".idx")
    target.unlink()
    os.mkfifo(target)
    assert search_paths(kb)[0] == "zebra.md"
    for command in (["index"], ["index", "--force"], ["doctor"]):
        if not target.exists():
            os.mkfifo(target)
        done = groove(*command, "--kb-path", str(kb), timeout=60)
        assert "Traceback" not in done.stderr, done.stderr
        assert done.returncode in (0, 1), done.stderr  # doctor: 1 = findings
    ok(groove("index", "--kb-path", str(kb)))  # doctor only looks: the last FIFO goes here
    assert keyword_search_works(kb)
    assert not any(p.is_fifo() for p in fts(kb).iterdir())


# --- item 5: links at or inside the folder are never followed -------------------------------

def test_the_folder_as_a_symbolic_link_is_refused_and_nothing_is_written_through_it(kb,
                                                                                  tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    shutil.rmtree(fts(kb))
    fts(kb).symlink_to(victim, target_is_directory=True)
    for command in (["index"], ["search", "quagga"]):
        done = groove(*command, "--kb-path", str(kb))
        assert done.returncode != 0 and "Traceback" not in done.stderr
        assert f"{fts(kb)} is a symbolic link" in done.stderr
        assert "never follows a link" in done.stderr
    assert list(victim.iterdir()) == []


@pytest.mark.parametrize("lock", [".tantivy-writer.lock", ".tantivy-meta.lock"])
def test_a_dangling_lock_link_creates_nothing_outside(kb, tmp_path, lock):
    outside = tmp_path / "outside-created"
    (fts(kb) / lock).unlink(missing_ok=True)
    (fts(kb) / lock).symlink_to(outside)
    (kb / "n1.md").write_text("# Note 1\n\nThe okapi is a forest giraffe of the Congo basin, with "
                                "striped legs like a zebra.\n", encoding="utf-8")
    ok(groove("index", "--kb-path", str(kb)))
    assert not outside.exists() and not os.path.lexists(outside)
    assert not (fts(kb) / lock).is_symlink()
    assert "n1.md" in search_paths(kb, "okapi") and keyword_search_works(kb, "okapi")


# --- item 6: a small change to a fast field: found by doctor, repaired by index -------------

def _fast_field_damage(kb: Path, scratch: Path) -> int:
    """An offset where 4 changed bytes leave the folder openable but its chunk ids
    unreadable (what made every search fail with a TypeError)."""
    source = segment_file(kb, ".fast")
    for offset in range(0, source.stat().st_size, 4):
        copy = scratch / f"probe-{offset}"
        shutil.copytree(fts(kb), copy)
        flip(copy / source.name, offset)
        index = TantivyIndex(copy)
        try:
            if index.recreated is None:
                index.verify()
        except FullTextDamaged as exc:
            if "reading every chunk id failed" in str(exc):
                return offset
        finally:
            index.close()
            # best effort: tantivy's meta.json watcher of the closed probe can still put
            # its lock file back while the copy is being removed (seen as ENOTEMPTY)
            shutil.rmtree(copy, ignore_errors=True)
    pytest.fail("no 4-byte change leaves the fast field openable but unreadable")


def test_a_four_byte_change_to_a_fast_field_is_reported_and_repaired(kb, tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    flip(segment_file(kb, ".fast"), _fast_field_damage(kb, scratch))
    doctor = groove("doctor", "--kb-path", str(kb))
    assert doctor.returncode == 1 and "No problems found" not in doctor.stdout
    assert "full-text" in doctor.stdout and "reading every chunk id failed" in doctor.stdout
    out = ok(groove("index", "--kb-path", str(kb)))
    assert "unchanged 13" in out
    assert keyword_search_works(kb)
    assert ok(groove("doctor", "--kb-path", str(kb))).rstrip().endswith("No problems found.")


def test_a_search_on_unreadable_chunk_ids_answers_and_repairs(kb, tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    flip(segment_file(kb, ".fast"), _fast_field_damage(kb, scratch))
    done = groove("search", "--kb-path", str(kb), "--format", "json", "quagga")
    assert json.loads(ok(done))["results"][0]["path"] == "zebra.md"
    assert "rebuilding it from the database" in done.stderr
    assert keyword_search_works(kb)


# --- items 7 and 8: under a running HTTP server --------------------------------------------

class _Server:
    def __init__(self, kb: Path, log: Path) -> None:
        self.port = free_port()
        self.log = log
        with log.open("wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "groove", "serve", "--kb-path", str(kb), "--transport",
                 "http", "--bind", f"127.0.0.1:{self.port}", "--debounce-ms", "100"],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                env={**os.environ, "RUST_BACKTRACE": "0"})
        self.wait_for(lambda: self.status().get("watcher", {}).get("state") == "watching")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def status(self) -> dict[str, Any]:
        import httpx

        try:
            return httpx.get(f"http://127.0.0.1:{self.port}/api/admin/status", timeout=5).json()
        except httpx.HTTPError:
            return {}

    def wait_for(self, condition: Any, seconds: float = 90) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.log.read_text()
            if condition():
                return
            time.sleep(0.2)
        raise AssertionError(f"timed out; server log:\n{self.log.read_text()}")

    def search(self, query: str) -> Any:
        async def go() -> Any:
            async with Client(self.url) as client:
                return await client.call_tool("search", {"query": query})
        return asyncio.run(go())

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(20)


@pytest.fixture
def server(kb, tmp_path):
    running = _Server(kb, tmp_path / "server.log")
    yield running
    running.stop()


def test_a_folder_deleted_under_the_server_is_rebuilt_and_the_next_edit_synced(kb, server):
    assert _paths(server.search("quagga"))[0] == "zebra.md"
    shutil.rmtree(fts(kb))
    (kb / "n3.md").write_text("# Note 3\n\nThe wombat digs a long burrow under the "
                                 "eucalyptus roots at night.\n", encoding="utf-8")

    def synced() -> bool:
        index = server.status().get("index", {})
        return (index.get("chunks_embedded") == index.get("chunks") == 13
                and _paths(server.search("wombat"))[:1] == ["n3.md"])

    server.wait_for(synced)
    status = server.status()
    assert status["watcher"]["state"] == "watching" and "error" not in status["watcher"]
    assert keyword_search_works(kb)
    assert "locked by another writer" not in server.log.read_text()


def test_a_segment_truncated_under_the_server_does_not_kill_it(kb, server):
    assert _paths(server.search("quagga"))[0] == "zebra.md"
    for path in fts(kb).iterdir():
        if path.suffix in (".idx", ".term", ".pos", ".fast", ".store", ".fieldnorm"):
            os.truncate(path, 0)
    for _ in range(3):
        assert _paths(server.search("quagga"))[0] == "zebra.md"
    assert server.proc.poll() is None
    assert "was truncated" in server.log.read_text()
    assert keyword_search_works(kb)


def test_a_regular_file_at_the_folder_name_is_named_not_a_permissions_problem(kb):
    shutil.rmtree(fts(kb))
    fts(kb).write_text("planted\n", encoding="utf-8")
    for command in (["index"], ["search", "quagga"]):
        done = groove(*command, "--kb-path", str(kb))
        assert done.returncode != 0 and "Traceback" not in done.stderr
        assert f"{fts(kb)} is a regular file; groove uses only a directory there" in done.stderr
        assert "permissions" not in done.stderr
    assert fts(kb).read_text(encoding="utf-8") == "planted\n"


# --- the guarantee, as a property: changed bytes are an answer or one clear error -----------

def _built_folder(root: Path) -> Path:
    from groove.fulltext import Stamp, TextRow

    folder = root / "built.fts"
    index = TantivyIndex(folder)
    index.add([TextRow(i, i, f"Note {i}", "", f"alpha beta number {i} quagga" * (i % 3 + 1))
               for i in range(1, 40)])
    index.commit(Stamp("db", 1))
    index.close()
    return folder


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_changed_bytes_anywhere_give_an_answer_or_one_clear_error(tmp_path, data):
    built = tmp_path / "built.fts"
    if not built.exists():
        _built_folder(tmp_path)
    files = sorted(p.name for p in built.iterdir()
                   if p.is_file() and p.stat().st_size and p.name not in (".managed.json",))
    name = data.draw(st.sampled_from(files))
    size = (built / name).stat().st_size
    offset = data.draw(st.integers(0, size - 1))
    count = data.draw(st.integers(1, 8))
    copy = Path(tempfile.mkdtemp(dir=tmp_path)) / "x.fts"
    shutil.copytree(built, copy)
    flip(copy / name, offset, count)
    index = TantivyIndex(copy)  # a folder it cannot open is recreated empty, never raised
    try:
        for read in (index.stamp, index.count, index.verify,
                     lambda: index.search(["quagga"], 5), lambda: index.matching(["alpha"])):
            try:
                read()
            except FullTextDamaged as exc:
                assert str(copy) in str(exc) and "rebuilds it from the database" in str(exc)
    finally:
        index.close()
        shutil.rmtree(copy.parent, ignore_errors=True)

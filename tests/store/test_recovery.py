"""``index --force`` builds aside and swaps: the previous index is untouched until then.

A failed rebuild (a remote embedder that does not answer, a full disk) leaves
the previous index exactly as it was and no half-built files; a reader (a
running server) keeps answering from the previous index, vector leg included,
for the whole rebuild and reopens the new file after the swap.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from groove.config import load_config
from groove.errors import GrooveError
from groove.indexing.indexer import Reporter
from groove.kb import KnowledgeBase
from groove.search.request import SearchRequest

pytestmark = pytest.mark.slow  # real model, several index runs

NOTES = {
    "cats.md": "# Cats\n\nCats sleep most of the day curled up in a patch of sunlight.\n",
    "pool.md": "# Pool\n\nThe connection pool times out after thirty seconds of waiting.\n",
    "heron.md": "# Herons\n\nThe heron count was taken at dawn by the river bank.\n",
}
#: No word in common with cats.md: only the vector leg can find it.
SEMANTIC_QUERY = "feline napping"


def leftovers(kb: Path) -> list[str]:
    """Files beside the index that are not the index's own (its lock, its full-text index)."""
    return sorted(p.name for p in kb.iterdir() if ".groove.db." in p.name
                  and not p.name.endswith(".lock") and p.name != ".groove.db.fts")


def cat_found(kb: KnowledgeBase) -> bool:
    hits = kb.search(SearchRequest(query=SEMANTIC_QUERY, limit=3)).results
    return any(hit.path == "cats.md" for hit in hits)


@pytest.fixture
def indexed(make_kb, write_files, tmp_path: Path) -> KnowledgeBase:
    kb = make_kb(write_files(tmp_path / "kb", NOTES))
    kb.index()
    assert cat_found(kb)
    return kb


def _unreachable_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}/v1"  # nothing listens there


def test_a_failed_force_rebuild_leaves_the_previous_index_untouched(indexed: KnowledgeBase,
                                                                    tmp_path: Path) -> None:
    before = indexed.status()
    toml = tmp_path / "remote.toml"
    toml.write_text(f'model = "openai:e5"\n[embedder]\nurl = "{_unreachable_url()}"\n'
                    "max_retries = 0\n", encoding="utf-8")
    remote = KnowledgeBase(load_config(kb_path=indexed.kb_path, cwd=tmp_path, config_path=toml))
    with pytest.raises(GrooveError, match="cannot connect"):
        remote.index(force=True)
    remote.close()
    after = indexed.status()
    assert (after["documents"], after["chunks"], after["model"]) == (
        before["documents"], before["chunks"], before["model"]) == (3, 3, before["model"])
    assert after["index"]["state"] == "complete"
    assert cat_found(indexed)
    assert leftovers(indexed.kb_path) == []


class _SearchWhileBuilding(Reporter):
    """At the start of the rebuild's embedding pass, ask the serving KB (another connection)."""

    def __init__(self, serving: KnowledgeBase) -> None:
        self.serving = serving
        self.found: list[bool] = []

    def embed_start(self, progress: object) -> None:
        self.found.append(cat_found(self.serving))


def test_a_server_keeps_its_vectors_during_a_force_rebuild(indexed: KnowledgeBase,
                                                           make_kb) -> None:
    writer = make_kb(indexed.kb_path)
    probe = _SearchWhileBuilding(indexed)
    writer.index(force=True, reporter=probe)
    assert probe.found == [True]  # mid-rebuild: the old index, vector leg included
    assert cat_found(indexed)  # after the swap: the new file, reopened
    assert indexed.status()["index"]["state"] == "complete"
    assert leftovers(indexed.kb_path) == []


@pytest.fixture
def small_disk(tmp_path: Path):
    """A 6 MiB tmpfs (root only): big enough for a small index, too small for a second copy."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=6m", "tmpfs", str(mount)],
                          capture_output=True)
    if done.returncode:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def _groove(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "groove", *args], cwd=cwd, text=True,
                          capture_output=True, timeout=300)


def _fill(disk: Path, leave: int = 64 * 1024) -> None:
    stats = os.statvfs(disk)
    (disk / "filler").write_bytes(b"\0" * max(0, stats.f_bavail * stats.f_frsize - leave))


@pytest.fixture
def full_kb(small_disk: Path, tmp_path: Path) -> Path:
    kb = small_disk / "kb"
    kb.mkdir()
    for i in range(20):
        (kb / f"n{i}.md").write_text(f"# Note {i}\n\n" + f"heron count {i} at dawn. " * 40,
                                     encoding="utf-8")
    assert _groove("index", "--kb-path", str(kb), "-q", cwd=tmp_path).returncode == 0
    return kb


def _one_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stderr
    return errors[0]


def test_force_recovery_on_a_full_disk_leaves_nothing_behind(full_kb: Path, small_disk: Path,
                                                             tmp_path: Path) -> None:
    db = full_kb / ".groove.db"
    data = bytearray(db.read_bytes())
    data[len(data) // 4: 3 * len(data) // 4] = b"\x5a" * (len(data) // 2)
    db.write_bytes(bytes(data))
    _fill(small_disk)
    _one_error(_groove("index", "--force", "--kb-path", str(full_kb), "-q", cwd=tmp_path))
    assert leftovers(full_kb) == []
    assert db.read_bytes() == bytes(data)  # the damaged file is still there, for another try


def test_search_on_an_incomplete_index_with_a_full_disk_is_one_error(full_kb: Path,
                                                                     small_disk: Path,
                                                                     tmp_path: Path) -> None:
    from groove.store import open_store

    store = open_store(full_kb / ".groove.db")
    store.set_meta(build_state="building")  # what a killed build leaves
    store.close()
    for i in range(20, 40):
        (full_kb / f"n{i}.md").write_text(f"# Note {i}\n\n" + f"egret {i} at dusk. " * 40,
                                          encoding="utf-8")
    _fill(small_disk, leave=0)
    done = _groove("search", "--kb-path", str(full_kb), "heron", cwd=tmp_path)
    assert "Traceback" not in done.stderr, done.stderr
    if done.returncode:
        assert str(full_kb) in _one_error(done)


class _EchoEmbeddings:
    """A real OpenAI-compatible service on 127.0.0.1 answering 3-dimensional vectors."""

    def __enter__(self) -> str:
        import json
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                raw = json.dumps({"data": [{"index": i, "embedding": [1.0, float(i), 0.5]}
                                           for i in range(len(body["input"]))]}).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_server_refuses_after_another_process_rebuilt_with_another_model(
        indexed: KnowledgeBase, tmp_path: Path) -> None:
    from groove.errors import IndexMismatchError

    with _EchoEmbeddings() as url:
        toml = tmp_path / "remote.toml"
        toml.write_text(f'model = "openai:echo"\n[embedder]\nurl = "{url}"\n', encoding="utf-8")
        other = KnowledgeBase(load_config(kb_path=indexed.kb_path, cwd=tmp_path,
                                          config_path=toml))
        other.index(force=True)
        other.close()
    with pytest.raises(IndexMismatchError, match="openai:echo"):
        indexed.search(SearchRequest(query=SEMANTIC_QUERY))

"""SPEC §13 soak: 16 Streamable-HTTP clients search for 20 s while another process keeps rewriting
three documents under the live watcher. No call errors, no hit mixes two versions, and once the
watcher settles the served index equals a fresh build of the same folder."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from _helpers import FIXTURE_KB, start_http_server, stop_server, write_config
from mcp import Client

from _index_snapshot import index_snapshot

CLIENTS = 16
SOAK_S = 20.0
WORDS = ("alpha", "beta")
FILES = ("soak/one.md", "soak/two.md", "soak/three.md")
QUERY = {"query": "soak marker part", "limit": 10}


def version(rel: str, word: str) -> str:
    """A whole document version: its title, headings and every chunk carry ``word``."""
    name = Path(rel).stem
    parts = "".join(f"## Part {p} {word}\n\n" + f"{word}marker " * 30 + f"soak {name}\n\n"
                    for p in range(3))
    return f"---\ntitle: Soak {name} {word}\ntags: [soak]\n---\n# Soak {name} {word}\n\n{parts}"


# The writer is another process, as an editor or `git checkout` would be. It paces itself
# (one whole-file write every 0.25 s, round-robin) and stops on the stop file or its deadline.
WRITER = r"""
import sys, time
from pathlib import Path
kb, stop, deadline = Path(sys.argv[1]), Path(sys.argv[2]), time.monotonic() + float(sys.argv[3])
versions = {}
for arg in sys.argv[4:]:
    rel, word, text_file = arg.split("|")
    versions.setdefault(rel, {})[word] = Path(text_file).read_text(encoding="utf-8")
files, writes = sorted(versions), 0
while not stop.exists() and time.monotonic() < deadline:
    rel = files[writes % len(files)]
    word = ("beta", "alpha")[(writes // len(files)) % 2]
    with open(kb / rel, "w", encoding="utf-8") as out:
        out.write(versions[rel][word])
    writes += 1
    time.sleep(0.25)
print(writes)
"""


_snapshot = index_snapshot


def _torn(hit: dict[str, Any]) -> str | None:
    """Why a soak hit mixes versions, or None when title, heading and content agree."""
    word = hit["title"].split()[-1]
    if word not in WORDS:
        return f"title {hit['title']!r} carries no version marker"
    other = WORDS[1 - WORDS.index(word)]
    text = f"{hit['heading'] or ''}\n{hit['content']}"
    if word not in text or other in text:
        return f"title says {word} but the chunk says otherwise: {text[:120]!r}"
    return None


async def _client(url: str, deadline: float) -> list[Any]:
    results = []
    async with Client(url) as client:
        while time.monotonic() < deadline:
            results.append(await client.call_tool("search", QUERY))
    return results


async def _soak(url: str) -> list[list[Any]]:
    deadline = time.monotonic() + SOAK_S
    return await asyncio.gather(*(_client(url, deadline) for _ in range(CLIENTS)))


async def _final_versions_served(url: str, finals: dict[str, str]) -> bool:
    async with Client(url) as client:
        for rel, word in finals.items():
            result = await client.call_tool("search", {"query": f"{word}marker", "limit": 10,
                                                       "path_globs": [rel]})
            hits = result.structured_content["results"] if not result.is_error else []
            if not hits or any(h["title"].split()[-1] != word for h in hits):
                return False
    return True


def _settled(server, finals: dict[str, str]) -> bool:
    status = httpx.get(server.base + "/api/admin/status", timeout=10).json()
    return status["indexing"]["active"] is False and asyncio.run(_final_versions_served(server.mcp_url, finals))


@pytest.mark.slow
def test_soak_concurrent_searches_while_another_process_rewrites(tmp_path):
    kb = tmp_path / "kb"
    shutil.copytree(FIXTURE_KB, kb)
    (kb / "soak").mkdir()
    version_args = []
    for rel in FILES:
        (kb / rel).write_text(version(rel, "alpha"), encoding="utf-8")
        for word in WORDS:
            text_file = tmp_path / f"{Path(rel).stem}-{word}.txt"
            text_file.write_text(version(rel, word), encoding="utf-8")
            version_args.append(f"{rel}|{word}|{text_file}")
    config = write_config(tmp_path / "groove.toml", kb, extra="\n[watch]\ndebounce_ms = 20\n")
    stop_file = tmp_path / "stop-writer"

    server = start_http_server(config, tmp_path)
    writer = None
    try:
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(kb), str(stop_file), str(SOAK_S + 10), *version_args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        started = time.monotonic()
        batches = asyncio.run(_soak(server.mcp_url))
        elapsed = time.monotonic() - started
        stop_file.touch()
        out, err = writer.communicate(timeout=30)
        assert writer.returncode == 0, err
        writes = int(out)

        calls = [r for batch in batches for r in batch]
        assert all(batch for batch in batches), "every client got at least one answer"
        seen: dict[str, set[str]] = {rel: set() for rel in FILES}
        for result in calls:
            assert not result.is_error, result.content
            for hit in result.structured_content["results"]:
                if hit["path"] in seen:
                    assert _torn(hit) is None, _torn(hit)
                    seen[hit["path"]].add(hit["title"].split()[-1])
            words_per_doc = {}
            for hit in result.structured_content["results"]:
                if hit["path"] in seen:
                    words_per_doc.setdefault(hit["path"], set()).add(hit["title"].split()[-1])
            assert all(len(w) == 1 for w in words_per_doc.values()), words_per_doc
        assert writes >= 3 * 4, f"the writer only managed {writes} rewrites"
        assert any(len(words) == 2 for words in seen.values()), (
            f"searches never saw a document change version: {seen}")
        assert server.stderr().count("sync: ") >= 2, "the watcher re-indexed during the soak"

        finals = {}
        for rel in FILES:
            text = (kb / rel).read_text(encoding="utf-8")
            finals[rel] = next(w for w in WORDS if text == version(rel, w))
        deadline = time.monotonic() + 90
        in_a_row = 0
        while in_a_row < 2:
            assert time.monotonic() < deadline, f"the watcher did not settle:\n{server.stderr()[-3000:]}"
            in_a_row = in_a_row + 1 if _settled(server, finals) else 0
            time.sleep(0.2)
        assert server.alive()
    finally:
        if writer is not None and writer.poll() is None:
            writer.kill()
            writer.wait(10)
        stop_server(server)

    served = _snapshot(kb / ".groove.db")
    fresh_db = tmp_path / "fresh" / "fresh.db"
    fresh_db.parent.mkdir()
    build = subprocess.run([sys.executable, "-m", "groove", "index", "--kb-path", str(kb),
                            "--db-path", str(fresh_db)], cwd=fresh_db.parent, capture_output=True,
                           text=True, timeout=300, env={**os.environ, "GROOVE_LOG": "warning"})
    assert build.returncode == 0, build.stderr
    fresh = _snapshot(fresh_db)
    served_docs, served_vectors, served_findings = served
    fresh_docs, fresh_vectors, fresh_findings = fresh
    assert served_findings == [] and fresh_findings == []
    assert served_docs == fresh_docs
    assert served_vectors.keys() == fresh_vectors.keys()
    for path, vectors in fresh_vectors.items():
        np.testing.assert_allclose(served_vectors[path], vectors, atol=1e-4, err_msg=path)
    print(f"soak: {len(calls)} searches by {CLIENTS} clients in {elapsed:.1f} s, "
          f"{writes} rewrites, versions seen {seen}")

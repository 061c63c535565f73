"""Indexing on a real local Ray cluster: same index as a local build, survives a lost actor.

Ray's own processes must stay on 127.0.0.1 here (RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0,
which ``--ray local`` sets by itself). One cluster serves the whole module.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

from groove.config import load_config
from groove.indexing.indexer import run_index
from groove.indexing.ray_executor import RayExecutor, RayUnavailable, connect
from groove.kb import KnowledgeBase

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.slow

DOCS = {
    f"notes/n{i:02}.md": f"# Note {i}\n\n## Part A\n\nThe connection pool number {i} handles "
    f"concurrent writes and retries.\n\n## Part B\n\nキャッシュ層 {i} の設定と監視の手順。\n"
    for i in range(12)
}


@pytest.fixture(scope="module")
def cluster():
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    assert connect("local", num_cpus=2)
    yield
    ray.shutdown()


def snapshot(kb: KnowledgeBase) -> dict[tuple[str, int], np.ndarray]:
    """``{(path, chunk_index): vector}`` of a built index."""
    out = {}
    ids, matrix = kb.store.load_vectors()
    row = {int(c): i for i, c in enumerate(ids)}
    for doc in kb.store.list_documents():
        for chunk in kb.store.document_chunks(doc.id):
            out[(doc.path, chunk.chunk_index)] = matrix[row[chunk.id]]
    return out


def test_ray_build_equals_a_local_build(cluster, tmp_path, write_files, make_kb):
    local_kb = make_kb(write_files(tmp_path / "a", DOCS))
    local_kb.index()
    ray_kb = make_kb(write_files(tmp_path / "b", DOCS),
                     index={"executor": "ray", "ray_address": "local"})
    ray_kb.index()
    want, got = snapshot(local_kb), snapshot(ray_kb)
    assert set(got) == set(want) and len(got) == 24
    for key, vector in want.items():
        np.testing.assert_allclose(got[key], vector, atol=1e-5)
    assert ray.is_initialized()  # a cluster this run did not start is left running


def test_a_killed_actor_is_restarted_and_the_build_completes(cluster, tmp_path, write_files,
                                                             make_kb):
    many = {f"more/m{i:02}.md": text for i, text in enumerate(list(DOCS.values()) * 4)}
    kb = make_kb(write_files(tmp_path / "kb", many))  # 96 chunks: two batches at least
    killed: list[int] = []

    class KillingExecutor(RayExecutor):
        def map(self, batches):
            def source():
                for i, batch in enumerate(batches):
                    if i == 1:  # batch 0 is on actor 0 now: its worker process dies
                        pid = self.actor_pids()[0]
                        os.kill(pid, signal.SIGKILL)
                        killed.append(pid)
                    yield batch
            yield from super().map(source())

    made: list[RayExecutor] = []

    def factory(_embedder):
        made.append(KillingExecutor(kb.config, 2))
        return made[-1]

    run_index(kb.config, kb._writable_store(), lambda: kb.embedder, executor_factory=factory)
    assert killed
    assert killed[0] not in made[0].actor_pids()  # Ray restarted the actor
    for executor in made:
        executor.close()
    counts = kb.store.embedding_counts()
    assert counts.chunks == counts.chunks_embedded == 96


def test_an_unreachable_cluster_fails_at_once_naming_the_address(tmp_path, write_files):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens there
    kb_dir = write_files(tmp_path / "kb", {"a.md": "# A\n\ntext\n"})
    t0 = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "groove", "index", "--kb-path", str(kb_dir),
                           "--ray", f"127.0.0.1:{port}"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode != 0 and time.monotonic() - t0 < 60
    assert f"127.0.0.1:{port}" in done.stderr and "ray status" in done.stderr
    assert "Traceback" not in done.stderr


def test_bad_ray_address_is_refused_by_the_config(tmp_path):
    from groove.errors import ConfigError

    with pytest.raises(ConfigError, match="not 'auto', 'local' or host:port"):
        load_config(kb_path=tmp_path, cwd=tmp_path,
                    overrides={"index": {"executor": "ray", "ray_address": "no port"}})
    with pytest.raises(RayUnavailable, match="not host:port"):
        connect("just-a-host")

"""`groove index --ray` on a real two-node Ray cluster on this machine, kept on loopback.

Ray's own test utility (``ray.cluster_utils.Cluster``) starts a head node and
a second node as separate raylets; with ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``
every component binds 127.0.0.1 (checked with ``ss``). Each node offers one
CPU, so the two embedding actors sit one per node. What a user relies on:
the index equals a local build, both nodes really embed, and a node that
disappears mid-run costs time, not the build.
"""

from __future__ import annotations

import os
import subprocess

import numpy as np
import pytest

from _index_snapshot import index_snapshot
from groove.indexing.indexer import run_index
from groove.indexing.ray_executor import RayExecutor, ray_executors
from groove.kb import KnowledgeBase

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.slow

#: 96 notes of two sections: 192 chunks, three embedding batches.
MANY = {
    f"runbooks/r{i:03}.md": f"# Runbook {i}\n\n## Symptoms\n\nQueue {i % 12} backs up when the "
    f"consumer restarts during a deploy.\n\n## 対処\n\nワーカー {i % 12} を再起動し、遅延を確認する。\n"
    for i in range(96)
}


@pytest.fixture(scope="module")
def two_nodes():
    from ray.cluster_utils import Cluster

    # RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 is set by tests/conftest.py before Ray is imported
    os.environ.setdefault("RAY_worker_niceness", "0")
    if ray.is_initialized():
        ray.shutdown()
    cluster = Cluster(initialize_head=True,
                      head_node_args={"num_cpus": 1, "include_dashboard": False})
    cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, log_to_driver=False)
    yield cluster
    ray.shutdown()
    cluster.shutdown()


def assert_same_index(got: KnowledgeBase, want: KnowledgeBase, chunks: int) -> None:
    """Same documents and chunks, vectors equal within 1e-5, and a consistent index."""
    got_docs, got_vectors, findings = index_snapshot(got.db_path)
    want_docs, want_vectors, _ = index_snapshot(want.db_path)
    assert got_docs == want_docs and findings == []
    assert sum(len(v) for v in got_vectors.values()) == chunks
    for path, vectors in want_vectors.items():
        np.testing.assert_allclose(got_vectors[path], vectors, atol=1e-5)


def ray_pids() -> set[str]:
    """Process ids of this machine's Ray processes (raylets, GCS, workers, actors)."""
    ps = subprocess.run(["ps", "-eo", "pid=,args="], capture_output=True, text=True).stdout
    return {line.split(None, 1)[0] for line in ps.splitlines()
            if "ray" in line.split(None, 1)[-1].lower()}


LOOPBACK = ("127.", "[::1]:", "[::ffff:127.")


def non_loopback_sockets() -> list[str]:
    """TCP sockets of Ray processes (listening or connected) not on a loopback address."""
    pids = ray_pids()
    out = subprocess.run(["ss", "-tanpH"], capture_output=True, text=True).stdout
    bad = []
    for line in out.splitlines():
        if not any(f"pid={pid}," in line for pid in pids):
            continue
        state, _, _, local, peer = line.split()[:5]
        listening_only = state == "LISTEN" and peer.endswith(":*")
        if not local.startswith(LOOPBACK) or not (listening_only or peer.startswith(LOOPBACK)):
            bad.append(line)
    return bad


def build(tmp_path, name, docs, write_files, make_kb, factory=None):
    kb = make_kb(write_files(tmp_path / name, docs), index={"ray_actors": 2})
    if factory is None:
        kb.index()
    else:
        run_index(kb.config, kb._writable_store(), lambda: kb.embedder, executor_factory=factory)
    return kb


def test_both_nodes_embed_and_the_index_equals_a_local_build(two_nodes, tmp_path, write_files,
                                                              make_kb):
    assert len([n for n in ray.nodes() if n["Alive"]]) == 2
    local = build(tmp_path, "local", MANY, write_files, make_kb)
    made: list[RayExecutor] = []
    on_ray = make_kb(write_files(tmp_path / "ray", MANY), index={"ray_actors": 2})
    with ray_executors(on_ray.config, two_nodes.address) as factory:
        def recording(embedder):
            made.append(factory(embedder))
            return made[-1]

        run_index(on_ray.config, on_ray._writable_store(), lambda: on_ray.embedder,
                  executor_factory=recording)
        assert ray_pids() and non_loopback_sockets() == []
    assert_same_index(on_ray, local, len(MANY) * 2)
    per_node = made[0].parts_by_node
    assert len(per_node) == 2 and all(n >= 1 for n in per_node.values()), per_node
    assert set(per_node) == {n["NodeID"] for n in ray.nodes() if n["Alive"]}


def test_a_node_removed_mid_run_is_survived(two_nodes, tmp_path, write_files, make_kb):
    worker = next(node for node in two_nodes.list_all_nodes() if not node.head)
    removed: list[int] = []

    class RemovingExecutor(RayExecutor):
        def map(self, batches):
            def source():
                for i, batch in enumerate(batches):
                    if i == 2:  # parts of batches 0-1 are out on both nodes: take one away
                        two_nodes.remove_node(worker)
                        removed.append(i)
                    yield batch
            yield from super().map(source())

    made: list[RayExecutor] = []

    def factory(_embedder):
        made.append(RemovingExecutor(kb_config, 2))
        return made[-1]

    target = write_files(tmp_path / "ray", MANY)
    kb = make_kb(target, index={"ray_actors": 2})
    kb_config = kb.config
    try:
        run_index(kb.config, kb._writable_store(), lambda: kb.embedder, executor_factory=factory)
    finally:
        for executor in made:
            executor.close()
    assert removed == [2] and made[0].parts_resent >= 1
    counts = kb.store.embedding_counts()
    assert counts.chunks == counts.chunks_embedded == len(MANY) * 2
    local = build(tmp_path, "local", MANY, write_files, make_kb)
    assert_same_index(kb, local, len(MANY) * 2)

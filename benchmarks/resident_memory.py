"""Resident memory of the vector index at N chunks, per storage (docs/scaling.md).

``python benchmarks/resident_memory.py build DB N`` writes N chunks (50 per
document, unit vectors of dimension 384 clustered around 2,000 centres, short
full-text rows) straight through the store API; ``... measure DB STORAGE``
loads them into a ``VectorIndex`` in a fresh process (with the approximate
index built and saved beside DB when N reaches ``ann_min_chunks``) and prints
one JSON line: the growth of the process's RSS over the load, its ratio to
the raw float32 vectors, and the parts (matrix, approximate index codes and
ids, columns, the rest), plus the overhead per chunk beyond the matrix.

``python benchmarks/resident_memory.py collections [OUT]`` measures collections
(docs/collections.md, "Memory"): the three collections of
``tests/fixtures/collections`` (Markdown EN, Markdown JA, Python) indexed with
the default model, then served once by one ``groove serve`` naming all three
and once by three single-folder servers running side by side. Each server is
asked one question per collection it serves over MCP stdio (so its model and
vectors are loaded), and the resident set size (VmRSS) and proportional set
size (Pss: shared pages divided among the processes sharing them) of every
server process are read from /proc. Prints (and writes to OUT) one JSON object.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

DIM = 384


def vm_mib(key: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def build(db: Path, n: int) -> None:
    from groove.models import Chunk, DocumentRecord
    from groove.store import open_store

    store = open_store(db, create=True)
    store.set_meta(model_id="synthetic", dim=DIM, context_mode="off")
    rng = np.random.default_rng(3)
    centres = rng.standard_normal((2000, DIM)).astype(np.float32)
    per = 50
    for d in range(n // per):
        vectors = centres[rng.integers(0, 2000, per)]
        vectors = vectors + 0.3 * rng.standard_normal((per, DIM)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        record = DocumentRecord(path=f"d/{d:06}.md", sha256=hashlib.sha256(str(d).encode()).hexdigest(),
                                title=f"doc {d}", category="c", topic=None, date=None, tags=(),
                                tags_invalid=False, metadata={}, size=1, mtime=1.0)
        store.write_document(record, [Chunk(i, "H", 2, "", f"w{d} x{i}", 4, 1.0, ())
                                      for i in range(per)], vectors)
    store.set_meta(last_indexed=time.time(), build_state="complete")
    store.close()


def measure(db: Path, storage: str) -> dict[str, object]:
    import faiss  # noqa: F401  (imported before the baseline, as a server has it)

    from groove.config.model import VectorsConfig
    from groove.search.vectors import VectorIndex
    from groove.store import open_store

    store = open_store(db)
    before = vm_mib("VmRSS")
    index = VectorIndex(store, VectorsConfig.model_validate({"storage": storage}), ann_path=db,
                        model_id="synthetic")
    index.refresh()
    ready = index.wait_for_ann(3600)
    grown = vm_mib("VmRSS") - before
    n = len(index.ids)
    raw = n * DIM * 4 / 2**20
    view = index._view
    ann_mib = 0.0
    if view is not None:
        codes = view.ann_index.index
        ann_mib = (codes.ntotal * (codes.code_size + 8) + view.ann_index.keys.nbytes) / 2**20
    columns = sum(a.nbytes for a in (index.ids, index.embedded, index._doc_slot, index._quality,
                                     index._binary)) / 2**20
    matrix = index.matrix.nbytes / 2**20
    return {"chunks": n, "storage": storage, "uses_ann": index.uses_ann, "ann_ready": ready,
            "rss_growth_mb": round(grown, 1), "raw_float32_mb": round(raw, 1),
            "ratio": round(grown / raw, 3), "matrix_mb": round(matrix, 1),
            "ann_codes_ids_mb": round(ann_mib, 1), "columns_mb": round(columns, 1),
            "rest_mb": round(grown - matrix - ann_mib - columns, 1),
            "per_chunk_beyond_matrix_bytes": round((grown - matrix) * 2**20 / n, 1),
            "loadavg_1m": os.getloadavg()[0]}


QUESTIONS = {"notes-en": "how often should a sourdough starter be fed",
             "notes-ja": "緑茶を淹れるお湯は何度がいい",
             "code": "function computing the area of a polygon"}
CODE_PARSERS = 'parsers.enabled = ["python"]\n'


def _proc_mib(pid: int, path: str, key: str) -> float:
    for line in Path(f"/proc/{pid}/{path}").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def _servers() -> list[int]:
    """The ``groove serve`` processes this process started."""
    me = str(os.getpid())
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = (entry / "stat").read_text().rsplit(")", 1)[1].split()[1]
            cmd = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if ppid == me and b"serve" in cmd:
            found.append(int(entry.name))
    return sorted(found)


def collections(out: Path | None) -> dict[str, object]:
    """One server with three collections against three single-folder servers."""
    import asyncio
    import shutil
    import subprocess
    import tempfile
    from contextlib import AsyncExitStack

    from mcp import Client, StdioServerParameters

    fixtures = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "collections"
    root = Path(tempfile.mkdtemp(prefix="groove-collections-"))
    text = ""
    for name in QUESTIONS:
        shutil.copytree(fixtures / name, root / name)
        extra = CODE_PARSERS if name == "code" else ""
        text += f'[collections.{name}]\nkb_path = "{name}"\n{extra}\n'
        (root / f"single-{name}.toml").write_text(f'kb_path = "{name}"\n{extra}')
    (root / "groove.toml").write_text(text)
    groove = [sys.executable, "-m", "groove"]
    subprocess.run([*groove, "index", "-q", "--config", str(root / "groove.toml")], check=True)

    def server(config: str) -> StdioServerParameters:
        return StdioServerParameters(command=sys.executable, cwd=str(root), env=dict(os.environ),
                                     args=["-m", "groove", "serve", "--config", config,
                                           "--no-watch"])

    async def run(configs: dict[str, str]) -> list[dict[str, float]]:
        async with AsyncExitStack() as stack:
            for name, config in configs.items():
                client = await stack.enter_async_context(Client(server(config)))
                asked = QUESTIONS if name == "all" else {name: QUESTIONS[name]}
                for question in asked.values():
                    answer = await client.call_tool("search", {"query": question})
                    assert not answer.is_error, answer.content
            return [{"pid": pid, "rss_mb": round(_proc_mib(pid, "status", "VmRSS"), 1),
                     "pss_mb": round(_proc_mib(pid, "smaps_rollup", "Pss"), 1)}
                    for pid in _servers()]

    one = asyncio.run(run({"all": "groove.toml"}))
    three = asyncio.run(run({name: f"single-{name}.toml" for name in QUESTIONS}))
    shutil.rmtree(root, ignore_errors=True)

    def total(rows: list[dict[str, float]], key: str) -> float:
        return round(sum(r[key] for r in rows), 1)

    result: dict[str, object] = {
        "collections": list(QUESTIONS), "model": "multilingual-e5-small (default)",
        "one_server": {"processes": len(one), "rss_mb": total(one, "rss_mb"),
                       "pss_mb": total(one, "pss_mb")},
        "three_servers": {"processes": len(three), "rss_mb": total(three, "rss_mb"),
                          "pss_mb": total(three, "pss_mb"),
                          "each": [{k: r[k] for k in ("rss_mb", "pss_mb")} for r in three]},
        "loadavg_1m": os.getloadavg()[0]}
    if out is not None:
        out.write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    if sys.argv[1] == "collections":
        print(json.dumps(collections(Path(sys.argv[2]) if len(sys.argv) > 2 else None)))
    elif sys.argv[1] == "build":
        build(Path(sys.argv[2]), int(sys.argv[3]))
    else:
        print(json.dumps(measure(Path(sys.argv[2]), sys.argv[3])))

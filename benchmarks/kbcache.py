"""Benchmark knowledge bases, built once and cached under ``benchmarks/.cache/``.

Two kinds of KB:

* ``model`` (1k, 10k): the generated Markdown is written to disk and indexed by
  the real ``KnowledgeBase.index()`` with the default model. Building one is
  the cold-index measurement, so its timings are stored next to it
  (``build.json``) and reported again on later runs, marked as cached.
* ``random`` (40k, 50k, 200k): the same generator's documents are parsed and
  chunked by groove's own parser and chunker, then written straight through
  ``store.write_document`` with deterministic random unit vectors (real FTS
  rows, fake embeddings), so that the vector and full-text legs can be timed
  at sizes the model would need hours to embed.
* ``clustered`` (1M): the same, but the unit vectors lie around 2,000 random
  centres (cosine to their centre about 0.86), because uniformly random vectors
  have no neighbours to find and no approximate index can be judged on them
  (docs/scaling.md). ``clustered_queries`` draws held-out queries from the same
  distribution for recall measurements.

The cache key covers everything that changes the stored bytes: corpus
parameters and the generator's output digest, the groove version, the
indexing-relevant config values, and a hash of the indexing source files.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
#: The knowledge-base sizes run.py measures: (label, chunks, source of vectors).
SIZES = [("1k", 1_000, "model"), ("10k", 10_000, "model"), ("50k", 50_000, "random"),
         ("200k", 200_000, "random")]
CACHE = HERE / ".cache"
SRC = HERE.parent / "src" / "groove"
sys.path.insert(0, str(HERE))

from corpus import corpus_key, generate, write_corpus  # noqa: E402

SEED = 12
DIM = 384
#: Source files whose change alters what an index run stores.
INDEXING_SOURCES = (
    "indexing", "models.py", "_version.py", "parsers", "store", "embedders",
)


def source_hash() -> str:
    digest = hashlib.sha256()
    for name in INDEXING_SOURCES:
        target = SRC / name
        files = sorted(target.rglob("*.py")) if target.is_dir() else [target]
        for path in files:
            digest.update(str(path.relative_to(SRC)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def load_bench_config(kb_dir: Path) -> Any:
    """Built-in defaults (no groove.toml exists in the repo), kb and db inside ``kb_dir``."""
    from groove.config import load_config

    kb_dir = Path(kb_dir).resolve()
    return load_config(kb_path=kb_dir, cwd=kb_dir)


def config_fingerprint(config: Any) -> str:
    values = {
        "model": config.model,
        "exclude_headings": list(config.exclude_headings),
        "contextual": bool(config.contextual.enabled),
        "parsers": sorted(config.parsers.enabled),
    }
    return json.dumps(values, sort_keys=True)


@dataclass(frozen=True)
class CachedKB:
    label: str  # "10k"
    n_chunks: int
    source: str  # "model" | "random"
    path: Path  # the KB folder (its .groove.db inside)
    build: dict[str, Any]  # build.json: timings of the cold build
    cached: bool  # True when this run reused an earlier build


def _key(n_chunks: int, source: str) -> str:
    from groove._version import __version__

    probe = CACHE / "_probe"
    probe.mkdir(parents=True, exist_ok=True)
    fp = config_fingerprint(load_bench_config(probe))
    parts = [str(n_chunks), str(SEED), source, corpus_key(n_chunks, SEED), __version__,
             source_hash(), fp]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


def _latest_build(label: str, source: str) -> Path | None:
    """The newest finished build of this size, whatever its key (for ``allow_stale``)."""
    builds = sorted(CACHE.glob(f"{label}-{source}-*/build.json"), key=lambda p: p.stat().st_mtime)
    return builds[-1].parent if builds else None


def ensure_kb(label: str, n_chunks: int, source: str, log=print, *,
              allow_stale: bool = False) -> CachedKB:
    """The cached KB for these parameters, building it first when missing.

    ``allow_stale`` reuses the newest earlier build of the same size when the
    key no longer matches (indexing sources changed since); the returned
    ``build`` then carries ``"stale_cache": true`` so the report says so.
    """
    key = _key(n_chunks, source)
    root = CACHE / f"{label}-{source}-{key}"
    done = root / "build.json"
    if done.is_file():
        return CachedKB(label, n_chunks, source, root / "kb", json.loads(done.read_text()), True)
    old = _latest_build(label, source) if allow_stale else None
    if old is not None:
        build = {**json.loads((old / "build.json").read_text()), "stale_cache": True,
                 "current_key": key}
        log(f"reusing stale {label} build {old.name} (current key {key})")
        return CachedKB(label, n_chunks, source, old / "kb", build, True)
    if root.exists():
        shutil.rmtree(root)  # a half-finished build
    (root / "kb").mkdir(parents=True)
    log(f"building {label} ({source}) at {root} ...")
    if source == "model":
        build = _build_model(root / "kb", n_chunks)
    else:
        build = _build_random(root / "kb", n_chunks, clustered=source == "clustered")
    build.update(key=key, built_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                 loadavg_after=os.getloadavg()[0])
    done.write_text(json.dumps(build, indent=2))
    log(f"built {label}: {json.dumps(build)}")
    return CachedKB(label, n_chunks, source, root / "kb", build, False)


def embed_sample(n_chunks: int) -> int:
    """Texts timed for ``embed_only_chunks_per_s``: 1000 at 10k, 200 for smaller KBs."""
    return 1000 if n_chunks >= 10_000 else 200


def _build_model(kb_dir: Path, n_chunks: int) -> dict[str, Any]:
    """Cold index with the real model, then the embedder alone on a sample of the same texts."""
    from groove.embedders import get_embedder
    from groove.indexing.indexer import embedding_input
    from groove.kb import KnowledgeBase

    docs = list(generate(n_chunks, SEED))
    raw_bytes = write_corpus(kb_dir, docs)
    config = load_bench_config(kb_dir)
    embedder = get_embedder(config.model)
    embedder.embed_query("warm up")
    load_before = os.getloadavg()[0]
    kb = KnowledgeBase(config, embedder=embedder)
    t0 = time.perf_counter()
    summary = kb.index()
    elapsed = time.perf_counter() - t0
    chunks = kb.store.stats().chunks
    sample_rows = kb.store.get_chunks(range(1, min(chunks, embed_sample(n_chunks)) + 1))
    texts = [embedding_input(row) for row in sample_rows.values()]  # type: ignore[arg-type]
    kb.close()
    t1 = time.perf_counter()
    embedder.embed_passages(texts)
    embed_only = time.perf_counter() - t1
    return {
        "documents": len(docs), "chunks": chunks, "expected_chunks": n_chunks,
        "corpus_bytes": raw_bytes, "index_s": round(elapsed, 3),
        "index_chunks_per_s": round(chunks / elapsed, 2),
        "index_embed_s": round(summary.embed_s, 3),
        "index_embed_share": round(summary.embed_s / elapsed, 4),
        "embed_only_sample": len(texts), "embed_only_s": round(embed_only, 3),
        "embed_only_chunks_per_s": round(len(texts) / embed_only, 2),
        "loadavg_before": load_before,
    }


def random_unit_vectors(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    matrix = rng.standard_normal((n, DIM), dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix


CENTRES = 2000
CENTRE_NOISE = 0.6


def clustered_unit_vectors(n: int, seed: int, *, centres_seed: int = SEED) -> np.ndarray:
    """Unit vectors around ``CENTRES`` fixed random centres (the centres depend only on
    ``centres_seed``, so queries drawn with another ``seed`` share them)."""
    centres = random_unit_vectors(CENTRES, centres_seed)
    rng = np.random.default_rng(seed + 1)
    out = np.empty((n, DIM), dtype=np.float32)
    for start in range(0, n, 65536):
        end = min(n, start + 65536)
        block = centres[rng.integers(0, CENTRES, end - start)]
        block += rng.standard_normal((end - start, DIM), dtype=np.float32) * (
            CENTRE_NOISE / np.sqrt(DIM))
        out[start:end] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def clustered_queries(n: int) -> np.ndarray:
    """Held-out queries from the ``clustered`` KBs' distribution."""
    return clustered_unit_vectors(n, SEED + 10_000)


def _build_random(kb_dir: Path, n_chunks: int, clustered: bool = False) -> dict[str, Any]:
    """Real parse/chunk/FTS, random unit vectors, through the store's own write path."""
    from groove.embedders import get_embedder
    from groove.indexing.chunking import chunk_document
    from groove.models import DocumentRecord
    from groove.parsers import get_parser_for
    from groove.store import open_store

    config = load_bench_config(kb_dir)
    embedder = get_embedder(config.model)
    store = open_store(config.db_path, create=True)
    store.set_meta(model_id=embedder.model_id, dim=embedder.dim, context_mode="off")
    make = clustered_unit_vectors if clustered else random_unit_vectors
    vectors = make(n_chunks, SEED)
    used = 0
    next_report = 50_000
    documents = 0
    t0 = time.perf_counter()
    for doc in generate(n_chunks, SEED):
        data = doc.text.encode("utf-8")
        write_corpus(kb_dir, [doc])  # on disk too, so a no-op `index()` can be timed
        parsed = get_parser_for(doc.path, config.parsers.enabled).parse(data, doc.path)
        chunks = chunk_document(parsed, exclude_headings=list(config.exclude_headings),
                                max_tokens=embedder.max_input_tokens - 16,
                                count_tokens=lambda t: max(1, len(t) // 4))
        chunks = [_no_context(c) for c in chunks]
        take = vectors[used:used + len(chunks)]
        if len(take) < len(chunks):  # the chunker found more than the generator planned
            take = np.vstack([take, make(len(chunks) - len(take), SEED + used)])
        used += len(chunks)
        if used >= next_report:
            print(f"  {used} chunks written, {time.perf_counter() - t0:.0f} s", file=sys.stderr,
                  flush=True)
            next_report += 50_000
        record = DocumentRecord(
            path=doc.path, sha256=hashlib.sha256(data).hexdigest(), title=parsed.title,
            category=parsed.category, topic=parsed.topic, date=parsed.date,
            tags=tuple(parsed.tags), tags_invalid=parsed.tags_invalid, metadata=parsed.metadata,
            size=len(data), mtime=(kb_dir / doc.path).stat().st_mtime,
        )
        store.write_document(record, chunks, take)
        documents += 1
    store.set_meta(last_indexed=time.time())
    elapsed = time.perf_counter() - t0
    chunks_stored = store.stats().chunks
    store.close()
    return {"documents": documents, "chunks": chunks_stored, "expected_chunks": n_chunks,
            "vectors": "clustered" if clustered else "uniform", "write_s": round(elapsed, 3), "write_chunks_per_s": round(chunks_stored / elapsed, 1),
            "token_count": "len/4 (no model pass)"}


def _no_context(chunk: Any) -> Any:
    from dataclasses import replace

    return replace(chunk, context="")


if __name__ == "__main__":  # prebuild: python benchmarks/kbcache.py 1k:1000:model ...
    for spec in sys.argv[1:]:
        lab, size, src = spec.split(":")
        ensure_kb(lab, int(size), src)

"""Index-lifecycle benchmarks: build throughput against the embedder alone, and time to first answer.

```sh
PYTHONPATH=src python benchmarks/lifecycle.py throughput --sections 200 --out /tmp/tp.json
PYTHONPATH=src python benchmarks/lifecycle.py ttfa --chunks 10000 --out /tmp/ttfa.json
```

``throughput`` writes the realistic-length corpus (``realistic.py``: sections of
150-400 tokens) to a temporary folder and, in one process with one warm model:

1. embeds every chunk text the index will hold with ``embed_passages`` alone,
   in corpus order (``embed_only_before``);
2. runs a cold ``KnowledgeBase.index()`` over the folder (``pipeline``: walk,
   read, parse, chunk, embed, write);
3. embeds the same texts alone once more (``embed_only_after``).

Throughput is model tokens (``token_count`` of each text the embedder saw)
per second of wall time. ``ratio`` is pipeline tokens/s over the mean of the
two embedder-alone runs: the machine is shared and noisy, so only this ratio
from one run is meant to be compared between revisions.

``ttfa`` writes the 10k-chunk benchmark corpus (``corpus.py``) to a temporary
folder, starts ``groove index`` on it in a child process and, from the moment
the index file exists, runs ``groove search`` for the title of the document
the walk reaches last, until an answer holds that document. The time from
starting the build to that answer is ``time_to_first_answer_s`` (lexical
answers during the build count). The build is stopped once the answer came.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpus import generate, write_corpus  # noqa: E402
from realistic import generate_realistic  # noqa: E402


def log(message: str) -> None:
    print(f"[lifecycle] {message}", file=sys.stderr, flush=True)


def _revision() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, text=True,
                              capture_output=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _texts_in_index(kb: Any) -> list[str]:
    """The exact texts the index embedded, in chunk-id order (= corpus order on a cold build)."""
    from groove.indexing.indexer import embedding_input

    rows = kb.store.get_chunks(range(1, kb.store.stats().chunks * 4 + 1))
    return [embedding_input(rows[i]) for i in sorted(rows)]


def _embed_alone(embedder: Any, texts: list[str], tokens: int) -> dict[str, float]:
    t0 = time.perf_counter()
    embedder.embed_passages(texts)
    elapsed = time.perf_counter() - t0
    return {"s": round(elapsed, 3), "tokens_per_s": round(tokens / elapsed, 1)}


class _Recorder:
    """Looks like the real embedder to the indexer but only records what it is given."""

    def __init__(self, real: Any) -> None:
        import numpy as np

        self._np = np
        self.real = real
        self.model_id, self.dim, self.max_input_tokens = real.model_id, real.dim, real.max_input_tokens
        self.token_count = real.token_count
        self.texts: list[str] = []

    def embed_passages(self, texts: list[str]) -> Any:
        self.texts.extend(texts)
        vectors = self._np.zeros((len(texts), self.dim), dtype=self._np.float32)
        vectors[:, 0] = 1.0
        return vectors

    def embed_query(self, text: str) -> Any:
        return self.real.embed_query(text)

    def __getattr__(self, name: str) -> Any:  # everything else (source, …) as the real one
        return getattr(self.real, name)


def throughput(sections: int) -> dict[str, Any]:
    from groove.config import load_config
    from groove.embedders import get_embedder
    from groove.kb import KnowledgeBase

    docs = list(generate_realistic(sections))
    with tempfile.TemporaryDirectory(prefix="groove-tp-") as tmp:
        root = Path(tmp) / "kb"
        corpus_bytes = write_corpus(root, docs)
        config = load_config(kb_path=root, cwd=Path(tmp))
        embedder = get_embedder(config.model)
        embedder.embed_passages(["warm up the engine"] * 4)

        # The texts are only known after chunking: an untimed index run on a
        # copy, with an embedder that only records, says what the timed run embeds.
        probe_root = Path(tmp) / "probe"
        shutil.copytree(root, probe_root)
        recorder = _Recorder(embedder)
        probe = KnowledgeBase(load_config(kb_path=probe_root, cwd=Path(tmp)), embedder=recorder)
        probe.index()
        probe.close()
        probe_texts = recorder.texts
        lengths = [embedder.token_count(t) for t in probe_texts]
        tokens = sum(lengths)
        log(f"{len(docs)} documents, {len(probe_texts)} chunks, {tokens} tokens")

        before = _embed_alone(embedder, probe_texts, tokens)
        log(f"embedder alone: {before}")
        kb = KnowledgeBase(config, embedder=embedder)
        load = os.getloadavg()[0]
        t0 = time.perf_counter()
        summary = kb.index()
        elapsed = time.perf_counter() - t0
        texts = _texts_in_index(kb)
        kb.close()
        pipeline = {"s": round(elapsed, 3), "tokens_per_s": round(tokens / elapsed, 1),
                    "summary": summary.to_json()}
        log(f"pipeline: {pipeline['s']} s, {pipeline['tokens_per_s']} tokens/s")
        after = _embed_alone(embedder, probe_texts, tokens)
        log(f"embedder alone: {after}")
    alone = statistics.mean([before["tokens_per_s"], after["tokens_per_s"]])
    return {
        "corpus": "realistic.py (sections of 150-400 tokens)",
        "documents": len(docs), "sections": sections, "chunks": len(texts),
        "corpus_bytes": corpus_bytes, "tokens": tokens,
        "tokens_per_chunk": {"min": min(lengths), "median": statistics.median(lengths),
                             "max": max(lengths)},
        "same_texts": sorted(texts) == sorted(probe_texts),
        "embed_only_before": before, "pipeline": pipeline, "embed_only_after": after,
        "ratio": round(pipeline["tokens_per_s"] / alone, 3),
        "loadavg_at_start": load,
    }


def _groove() -> list[str]:
    return [sys.executable, "-m", "groove"]


def ttfa(chunks: int, timeout: float) -> dict[str, Any]:
    docs = list(generate(chunks, 12))
    target = max(docs, key=lambda d: d.path)
    title = next(line[2:] for line in target.text.splitlines() if line.startswith("# "))
    with tempfile.TemporaryDirectory(prefix="groove-ttfa-") as tmp:
        root = Path(tmp) / "kb"
        write_corpus(root, docs)
        db = root / ".groove.db"
        env = dict(os.environ)
        log(f"{len(docs)} documents, {chunks} chunks; looking for {target.path} by {title!r}")
        t0 = time.perf_counter()
        build = subprocess.Popen([*_groove(), "index", "--kb-path", str(root), "--quiet"],
                                 cwd=tmp, env=env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, start_new_session=True)
        polls: list[dict[str, Any]] = []
        found_at: float | None = None
        try:
            while time.perf_counter() - t0 < timeout:
                if not db.exists():
                    time.sleep(0.05)
                    continue
                done = subprocess.run(
                    [*_groove(), "search", f'"{title}"', "--kb-path", str(root), "--limit", "5"],
                    cwd=tmp, env=env, capture_output=True, text=True, timeout=120)
                at = time.perf_counter() - t0
                paths: list[str] = []
                if done.returncode == 0:
                    answer = json.loads(done.stdout)
                    paths = [hit["path"] for hit in answer.get("results", [])]
                polls.append({"t_s": round(at, 2), "rc": done.returncode, "hits": len(paths),
                              "found": target.path in paths})
                if target.path in paths:
                    found_at = at
                    break
                time.sleep(0.5)
        finally:
            if build.poll() is None:
                os.killpg(build.pid, signal.SIGTERM)
            build.wait(30)
    return {
        "corpus": "corpus.py (sections of ~36 tokens)", "chunks": chunks, "documents": len(docs),
        "time_to_first_answer_s": None if found_at is None else round(found_at, 2),
        "timeout_s": timeout, "polls": polls[-5:], "poll_count": len(polls),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=["throughput", "ttfa"])
    parser.add_argument("--sections", type=int, default=200, help="realistic corpus size")
    parser.add_argument("--chunks", type=int, default=10_000, help="ttfa corpus size")
    parser.add_argument("--timeout", type=float, default=900.0, help="ttfa: give up after")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    started = time.time()
    result = throughput(args.sections) if args.kind == "throughput" else ttfa(args.chunks, args.timeout)
    result.update(kind=args.kind, revision=_revision(),
                  started=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)))
    args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps(result, ensure_ascii=False))


if __name__ == "__main__":
    main()

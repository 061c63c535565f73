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
the index file exists, runs ``groove search`` (a new process each time, as a
person at a terminal would) for the title of the document the walk reaches
first, until an answer holds it (``time_to_first_document_s``), then for the
title of the document the walk reaches last, until an answer holds that one
(``time_to_first_answer_s``: every document of the folder is findable by then).
Both are measured from starting the build; lexical answers during the build
count. Beside the ``groove search`` processes (each pays for starting Python
and loading groove, about a second on a quiet machine), a reader in the
benchmark's own process polls the full-text index every 50 ms, as a running
server's search would: ``published_in_process_s`` says when each of the two
documents was first findable there. The build is stopped once the last
answer came. ``--runs N`` repeats
the whole measurement on a fresh folder N times (medians in ``median``). groove's
modules are byte-compiled first, as an installed copy has them (``bytecode``).

Each command prints a ``calibration`` line before and after (``measure.py``'s
fixed reference work: a 50k x 384 mat-vec and a pure-Python loop), so a
figure taken on a busy machine can be told from a slow revision: on an idle
machine of this kind the mat-vec takes about 2.5-3.5 ms and the loop 8.5-10.5 ms
(``results.json``); the loop's ratio to 9.5 ms is the contention factor.
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
from measure import calibration  # noqa: E402
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


def _title(doc: Any) -> str:
    return next(line[2:] for line in doc.text.splitlines() if line.startswith("# "))


def _found(root: Path, cwd: str, env: dict[str, str], title: str, path: str) -> dict[str, Any]:
    """One ``groove search`` for ``title`` (a new process); whether ``path`` is among the hits."""
    done = subprocess.run(
        [*_groove(), "search", f'"{title}"', "--kb-path", str(root), "--limit", "5"],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    paths: list[str] = []
    if done.returncode == 0:
        answer = json.loads(done.stdout)
        paths = [hit["path"] for hit in answer.get("results", [])]
    return {"rc": done.returncode, "hits": len(paths), "found": path in paths}


class _Published:
    """A reader in this process polling the full-text index every 50 ms, as a running
    server's search would see it: when each title is first found (no CLI start-up in it)."""

    def __init__(self, db: Path, titles: dict[str, tuple[str, str]], t0: float) -> None:
        import threading

        self.db, self.titles, self.t0 = db, titles, t0
        self.at: dict[str, float] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True)
        self.thread.start()

    def _poll(self) -> None:
        from groove.store import open_store

        store = None
        try:
            while not self.stop.wait(0.05) and len(self.at) < len(self.titles):
                if store is None:
                    if not self.db.exists():
                        continue
                    try:
                        store = open_store(self.db, create=False)
                    except Exception:  # noqa: BLE001 - the build is still creating it
                        continue
                for which, (title, path) in self.titles.items():
                    if which in self.at:
                        continue
                    ids = [cid for cid, _ in store.fulltext_search([title], 5)]
                    rows = store.get_chunks(ids)
                    doc_ids = {rows[i].doc_id for i in ids if i in rows}
                    found = store.get_document(path)
                    if found is not None and found.id in doc_ids:
                        self.at[which] = round(time.perf_counter() - self.t0, 2)
        finally:
            if store is not None:
                store.close()

    def result(self) -> dict[str, float | None]:
        self.stop.set()
        self.thread.join(10)
        return {which: self.at.get(which) for which in self.titles}


def ttfa_once(docs: list[Any], chunks: int, timeout: float) -> dict[str, Any]:
    """One cold build; the times until the walk's first and last documents are findable."""
    walk = sorted(docs, key=lambda d: d.path)
    targets = [("first", walk[0]), ("last", walk[-1])]
    with tempfile.TemporaryDirectory(prefix="groove-ttfa-") as tmp:
        root = Path(tmp) / "kb"
        write_corpus(root, docs)
        db = root / ".groove.db"
        env = dict(os.environ)
        log(f"{len(docs)} documents, {chunks} chunks; looking for {walk[0].path} "
            f"({_title(walk[0])!r}), then {walk[-1].path} ({_title(walk[-1])!r})")
        t0 = time.perf_counter()
        build = subprocess.Popen([*_groove(), "index", "--kb-path", str(root), "--quiet"],
                                 cwd=tmp, env=env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, start_new_session=True)
        published = _Published(db, {which: (_title(doc), doc.path) for which, doc in targets}, t0)
        polls: list[dict[str, Any]] = []
        found_at: dict[str, float] = {}
        try:
            while targets and time.perf_counter() - t0 < timeout:
                if not db.exists():
                    time.sleep(0.05)
                    continue
                which, doc = targets[0]
                poll = _found(root, tmp, env, _title(doc), doc.path)
                at = time.perf_counter() - t0
                polls.append({"t_s": round(at, 2), "looking_for": which, **poll})
                if poll["found"]:
                    found_at[which] = at
                    targets.pop(0)
                    continue  # the last one is asked for at once
                time.sleep(0.5)
        finally:
            in_process = published.result()
            if build.poll() is None:
                os.killpg(build.pid, signal.SIGTERM)
            build.wait(30)

    def seconds(which: str) -> float | None:
        return round(found_at[which], 2) if which in found_at else None

    result = {"time_to_first_document_s": seconds("first"),
              "time_to_first_answer_s": seconds("last"),
              "published_in_process_s": in_process,
              "polls": polls[-6:], "poll_count": len(polls)}
    log(f"first document {result['time_to_first_document_s']} s, "
        f"last document {result['time_to_first_answer_s']} s (groove search processes); "
        f"in-process full-text reader: first {in_process['first']} s, "
        f"last {in_process['last']} s")
    return result


def _compile_groove() -> str:
    """Byte-compile groove's modules, as an installed copy has them, so every process timed
    (the build, each polling search) loads them rather than compiling them again.

    ``pip install`` compiles a package's modules, and Python writes the cache of a
    module it imports; a machine that sets ``PYTHONDONTWRITEBYTECODE`` (this kind
    does) has neither for modules changed since, and each ``groove`` process then
    spends about 0.1 s compiling them.
    """
    import compileall

    import groove

    package = Path(groove.__file__).parent
    done = compileall.compile_dir(str(package), quiet=1)
    return f"groove's modules byte-compiled before the runs ({'ok' if done else 'partly'})"


def ttfa(chunks: int, timeout: float, runs: int = 1) -> dict[str, Any]:
    docs = list(generate(chunks, 12))
    bytecode = _compile_groove()
    rounds = [ttfa_once(docs, chunks, timeout) for _ in range(max(1, runs))]

    return {
        "corpus": "corpus.py (sections of ~36 tokens)", "chunks": chunks, "documents": len(docs),
        "bytecode": bytecode,
        "timeout_s": timeout, "runs": rounds,
        "median": {"time_to_first_document_s": _median([r["time_to_first_document_s"]
                                                        for r in rounds]),
                   "time_to_first_answer_s": _median([r["time_to_first_answer_s"]
                                                      for r in rounds]),
                   "published_first_s": _median([r["published_in_process_s"]["first"]
                                                 for r in rounds]),
                   "published_last_s": _median([r["published_in_process_s"]["last"]
                                                for r in rounds])},
    }


def _median(values: list[float | None]) -> float | None:
    return None if None in values or not values else round(statistics.median(values), 2)  # type: ignore[type-var]


def _calibrate(when: str) -> dict[str, Any]:
    figures = {**calibration(), "loadavg": [round(v, 2) for v in os.getloadavg()]}
    log(f"calibration ({when}): {json.dumps(figures)}")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=["throughput", "ttfa"])
    parser.add_argument("--sections", type=int, default=200, help="realistic corpus size")
    parser.add_argument("--chunks", type=int, default=10_000, help="ttfa corpus size")
    parser.add_argument("--timeout", type=float, default=900.0, help="ttfa: give up after")
    parser.add_argument("--runs", type=int, default=1, help="ttfa: cold builds to measure")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    started = time.time()
    before = _calibrate("start")
    result = (throughput(args.sections) if args.kind == "throughput"
              else ttfa(args.chunks, args.timeout, args.runs))
    result.update(kind=args.kind, revision=_revision(),
                  started=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
                  calibration={"start": before, "end": _calibrate("end")})
    args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps(result, ensure_ascii=False))


if __name__ == "__main__":
    main()

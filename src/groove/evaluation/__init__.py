"""Retrieval evaluation: golden sets, metrics, runs with history, and ``tune``.

``golden`` reads the golden file, ``metrics`` scores one ranking, ``run`` sends
every golden query through the real search, ``report`` presents a run,
``history`` fingerprints runs so only like is compared with like, and ``tune``
sweeps fusion settings with cross-validation (docs/evaluation.md).
"""

from __future__ import annotations

from groove.evaluation.golden import (
    Expected as Expected,
)
from groove.evaluation.golden import (
    GoldenError as GoldenError,
)
from groove.evaluation.golden import (
    GoldenQuery as GoldenQuery,
)
from groove.evaluation.golden import (
    GoldenSet as GoldenSet,
)
from groove.evaluation.golden import (
    load_golden as load_golden,
)
from groove.evaluation.golden import (
    parse_golden as parse_golden,
)
from groove.evaluation.golden import (
    quoted_golden_warnings as quoted_golden_warnings,
)
from groove.evaluation.history import (
    ARROW_DOWN as ARROW_DOWN,
)
from groove.evaluation.history import (
    ARROW_UP as ARROW_UP,
)
from groove.evaluation.history import (
    HISTORY_FILENAME as HISTORY_FILENAME,
)
from groove.evaluation.history import (
    HISTORY_VERSION as HISTORY_VERSION,
)
from groove.evaluation.history import (
    MARK_SAME as MARK_SAME,
)
from groove.evaluation.history import (
    MARK_WITHIN as MARK_WITHIN,
)
from groove.evaluation.history import (
    build_fingerprint as build_fingerprint,
)
from groove.evaluation.history import (
    compare_metrics as compare_metrics,
)
from groove.evaluation.history import (
    corpus_digest as corpus_digest,
)
from groove.evaluation.history import (
    fingerprint_hash as fingerprint_hash,
)
from groove.evaluation.history import (
    load_history as load_history,
)
from groove.evaluation.history import (
    previous_compatible_run as previous_compatible_run,
)
from groove.evaluation.history import (
    save_history as save_history,
)
from groove.evaluation.metrics import (
    expected_ranks as expected_ranks,
)
from groove.evaluation.metrics import (
    hit_matches as hit_matches,
)
from groove.evaluation.metrics import (
    ndcg_at as ndcg_at,
)
from groove.evaluation.metrics import (
    query_metrics as query_metrics,
)
from groove.evaluation.metrics import (
    recall_at as recall_at,
)
from groove.evaluation.metrics import (
    reciprocal_rank as reciprocal_rank,
)
from groove.evaluation.report import (
    EvalReport as EvalReport,
)
from groove.evaluation.report import (
    QueryResult as QueryResult,
)
from groove.evaluation.run import (
    aggregate as aggregate,
)
from groove.evaluation.run import (
    run_eval as run_eval,
)

__all__ = [
    "ARROW_DOWN",
    "ARROW_UP",
    "EvalReport",
    "Expected",
    "GoldenError",
    "GoldenQuery",
    "GoldenSet",
    "HISTORY_FILENAME",
    "HISTORY_VERSION",
    "MARK_SAME",
    "MARK_WITHIN",
    "QueryResult",
    "aggregate",
    "build_fingerprint",
    "compare_metrics",
    "corpus_digest",
    "expected_ranks",
    "fingerprint_hash",
    "hit_matches",
    "load_golden",
    "load_history",
    "ndcg_at",
    "parse_golden",
    "previous_compatible_run",
    "query_metrics",
    "quoted_golden_warnings",
    "recall_at",
    "reciprocal_rank",
    "run_eval",
    "save_history",
]

"""Connection-graph arguments: bounds, defaults and their validation (see docs/graph.md).
"""


from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from groove.errors import InvalidArgument

DEPTH_MAX = 3
FAN_OUT_MAX = 20
MAX_SEED_CHUNKS_RANGE = (1, 1000)
MAX_NODES_RANGE = (1, 2000)
EXCLUDE_PATHS_MAX = 64
PATH_ARG_MAX_BYTES = 1024
SNIPPET_CHARS = 200
SEED_STRATEGIES = {"all_chunks": "all_chunks", "all-chunks": "all_chunks", "centroid": "centroid"}


@dataclass(frozen=True)
class GraphParams:
    """The validated, normalised arguments of one graph request."""

    start: str
    depth: int
    fan_out: int
    min_similarity: float
    seed_strategy: str
    max_seed_chunks: int
    max_nodes: int
    dedup_by_path: bool
    category: str | None
    topic: str | None
    exclude_paths: tuple[str, ...]


# --- argument checks --------------------------------------------------------------
def _int_arg(name: str, value: Any, low: int, high: int, note: str = "") -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidArgument(
            f"{name} must be an integer in {low}..{high}{note}, got {value!r}"
        )
    return value


def _path_arg(name: str, value: Any) -> str:
    """A relative POSIX path inside kb_path, checked by the one lexical path gate."""
    from groove.paths import check_rel_path

    if not isinstance(value, str) or not value.strip():
        raise InvalidArgument(f"{name} must be a non-empty relative path, got {value!r}")
    if len(value.encode("utf-8", "surrogatepass")) > PATH_ARG_MAX_BYTES:
        raise InvalidArgument(f"{name} must be at most {PATH_ARG_MAX_BYTES} bytes long")
    return check_rel_path(value, what=name)


def _optional_text(name: str, value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value.encode("utf-8", "surrogatepass")) > PATH_ARG_MAX_BYTES:
        raise InvalidArgument(f"{name} must be a string of at most {PATH_ARG_MAX_BYTES} bytes")
    return value


def validate_graph_args(
    *,
    start: Any,
    depth: Any = 2,
    fan_out: Any = 5,
    min_similarity: Any = 0.3,
    seed_strategy: Any = "all_chunks",
    max_seed_chunks: Any = 32,
    max_nodes: Any = 100,
    dedup_by_path: Any = False,
    category: Any = None,
    topic: Any = None,
    exclude_paths: Any = None,
) -> GraphParams:
    """Check every bound (raising InvalidArgument / PathRefused) without touching the index."""
    depth = _int_arg("depth", depth, 0, DEPTH_MAX)
    fan_out = _int_arg("fan_out", fan_out, 0, FAN_OUT_MAX, " (0 = seed only)")
    if (
        isinstance(min_similarity, bool)
        or not isinstance(min_similarity, (int, float))
        or not math.isfinite(min_similarity)
        or not 0.0 <= min_similarity <= 1.0
    ):
        raise InvalidArgument(f"min_similarity must be a number in [0, 1], got {min_similarity!r}")
    if not isinstance(seed_strategy, str) or seed_strategy not in SEED_STRATEGIES:
        raise InvalidArgument(
            f"seed_strategy must be one of all_chunks (or all-chunks), centroid; got {seed_strategy!r}"
        )
    max_seed_chunks = _int_arg("max_seed_chunks", max_seed_chunks, *MAX_SEED_CHUNKS_RANGE)
    max_nodes = _int_arg("max_nodes", max_nodes, *MAX_NODES_RANGE)
    if not isinstance(dedup_by_path, bool):
        raise InvalidArgument(f"dedup_by_path must be true or false, got {dedup_by_path!r}")
    excludes: list[str] = []
    if exclude_paths is not None:
        if isinstance(exclude_paths, str) or not isinstance(exclude_paths, (list, tuple)):
            raise InvalidArgument("exclude_paths must be a list of relative paths")
        if len(exclude_paths) > EXCLUDE_PATHS_MAX:
            raise InvalidArgument(
                f"exclude_paths accepts at most {EXCLUDE_PATHS_MAX} entries, got {len(exclude_paths)}"
            )
        excludes = [_path_arg("exclude_paths entry", p).rstrip("/") for p in exclude_paths]
    return GraphParams(
        start=_path_arg("start", start),
        depth=depth,
        fan_out=fan_out,
        min_similarity=float(min_similarity),
        seed_strategy=SEED_STRATEGIES[seed_strategy],
        max_seed_chunks=max_seed_chunks,
        max_nodes=max_nodes,
        dedup_by_path=dedup_by_path,
        category=_optional_text("category", category),
        topic=_optional_text("topic", topic),
        exclude_paths=tuple(p for p in excludes if p),
    )


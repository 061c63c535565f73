"""Run fingerprints and the eval history file.

Each run is appended to ``<kb>/.groove-eval-history.json`` (last
``history_size`` kept) with a *fingerprint* of everything that shapes the
ranking, so a run is only ever compared with a previous run of the same setup.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from groove.search.request import SearchRequest
from groove.search.stages import resolve_stages
from groove.store.files import read_bytes, replace_atomically

if TYPE_CHECKING:
    from groove.config import Config

log = logging.getLogger("groove.evaluation")

HISTORY_FILENAME = ".groove-eval-history.json"
HISTORY_VERSION = 1
#: What the history file is called in messages.
WHAT = "the eval history file"
#: Metrics are compared after rounding to this many places, so float noise is "same".
_COMPARE_DIGITS = 6

ARROW_UP = "↑"
ARROW_DOWN = "↓"
MARK_WITHIN = "·"
MARK_SAME = "—"
#: Metrics where a rise is the regression (↓ marks a rise for them).
LOWER_IS_BETTER = frozenset({"low_confidence_rate"})

# --- fingerprint, corpus digest ---------------------------------------------------


def build_fingerprint(config: Config, request: SearchRequest, golden_sha256: str) -> dict[str, Any]:
    """Everything that shapes the ranking, with per-call overrides applied.

    Beyond the list in docs/evaluation.md (model, reranker, fusion, MMR,
    parent settings, golden hash) it includes the request's filters: a run
    restricted to one category is not comparable with an unrestricted one.
    """
    stages = resolve_stages(request, config).fingerprint(config)
    filters = {
        name: getattr(request, name)
        for name in ("category", "topic", "path_globs", "tags_any", "tags_all", "date_from",
                     "date_to", "min_quality", "include_low_quality")
        if getattr(request, name) not in (None, False)
    }
    return {
        "model": config.model,
        **stages,
        "filters": filters,
        "golden_sha256": golden_sha256,
    }


def fingerprint_hash(fingerprint: dict[str, Any]) -> str:
    canonical = json.dumps(fingerprint, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def corpus_digest(hashes: dict[str, str]) -> str:
    """sha256 over the sorted (path, sha256) pairs of the indexed documents."""
    digest = hashlib.sha256()
    for path, sha in sorted(hashes.items()):
        digest.update(f"{path}\0{sha}\n".encode())
    return digest.hexdigest()


# --- comparison and history ---------------------------------------------------------


def compare_metrics(
    current: dict[str, float], previous: dict[str, float], threshold: float
) -> tuple[dict[str, str], bool]:
    """Marks per metric present in both runs, and whether any dropped beyond ``threshold``."""
    marks: dict[str, str] = {}
    regressed = False
    for name, value in current.items():
        if name not in previous or not isinstance(previous[name], (int, float)):
            continue
        delta = round(value - float(previous[name]), _COMPARE_DIGITS)
        if name in LOWER_IS_BETTER:
            delta = -delta
        if delta > threshold:
            marks[name] = ARROW_UP
        elif delta < -threshold:
            marks[name] = ARROW_DOWN
            regressed = True
        elif delta == 0:
            marks[name] = MARK_SAME
        else:
            marks[name] = MARK_WITHIN
    return marks, regressed


def load_history(path: Path) -> list[dict[str, Any]]:
    """Past runs, oldest first; an unreadable file is reported and treated as empty."""
    try:
        data = json.loads(read_bytes(path, WHAT).decode("utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        log.warning("ignoring unreadable eval history %s (%s); it will be rewritten", path, exc)
        return []
    runs = data.get("runs") if isinstance(data, dict) else None
    if not isinstance(runs, list):
        log.warning("ignoring eval history %s: no `runs` list; it will be rewritten", path)
        return []
    return [r for r in runs if isinstance(r, dict) and isinstance(r.get("metrics"), dict)]


def save_history(path: Path, runs: list[dict[str, Any]], history_size: int) -> None:
    """Keep the newest ``history_size`` runs; written atomically (temp file + rename)."""
    kept = runs[-history_size:] if history_size > 0 else []
    payload = json.dumps({"version": HISTORY_VERSION, "runs": kept}, ensure_ascii=False, indent=2)
    try:
        replace_atomically(path, lambda tmp: tmp.write_text(payload + "\n", encoding="utf-8"),
                           WHAT)
    except OSError as exc:
        log.warning("could not write eval history %s: %s", path, exc.strerror or exc)


def previous_compatible_run(runs: list[dict[str, Any]], fp_hash: str) -> dict[str, Any] | None:
    for run in reversed(runs):
        if run.get("fingerprint_hash") == fp_hash:
            return run
    return None


def _now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime())



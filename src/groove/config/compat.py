"""GrooveSeek settings, read under groove's names (docs/grooveseek.md).

Applied to every configuration layer (the file and the command-line
overrides) before validation, so an old ``groove.toml`` keeps working. Each
renamed key or value gets one warning line naming the old and the new
spelling; nothing else changes. When a file sets both the old and the new key
to different values it is refused, naming both, since neither can be guessed.
"""

from __future__ import annotations

import logging
from typing import Any

from groove.errors import ConfigError

log = logging.getLogger("groove.config")

#: Top-level keys GrooveSeek spelled differently.
RENAMED_KEYS: dict[str, str] = {"fastembed_cache_dir": "model_cache_dir"}
#: GrooveSeek's short reranker names.
RERANKER_ALIASES: dict[str, str] = {
    "bge-v2-m3": "bge-reranker-v2-m3",
    "jina-v2-ml": "jina-reranker-v2-ml",
    "bge-base": "bge-reranker-base",
}


def deprecated(where: str, old: str, new: str) -> None:
    """The one line every compatibility rewrite prints."""
    log.warning("%s: %s is GrooveSeek's spelling, read as %s; please change it (docs/grooveseek.md)",
                where, old, new)


def upgrade_settings(raw: dict[str, Any], where: str) -> dict[str, Any]:
    """``raw`` with GrooveSeek's keys and values renamed (a new dict; ``raw`` is not changed)."""
    out = dict(raw)
    for old, new in RENAMED_KEYS.items():
        if old not in out:
            continue
        value = out.pop(old)
        if new in out and out[new] != value:
            raise ConfigError(f"{where}: both {old} (GrooveSeek's name) and {new} are set, to "
                              f"different values; keep only {new}")
        out[new] = value
        deprecated(where, f"`{old}`", f"`{new}`")
    reranker = out.get("reranker")
    if isinstance(reranker, str) and reranker in RERANKER_ALIASES:
        out["reranker"] = RERANKER_ALIASES[reranker]
        deprecated(where, f"reranker = {reranker!r}", f"reranker = {out['reranker']!r}")
    return out

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
from groove.parsers import PARSER_ALIASES

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


#: GrooveSeek's ``[embedding]`` keys (provider = "openai-compatible") -> ``[embedder]`` keys.
EMBEDDING_KEYS: dict[str, str] = {
    "endpoint": "url",
    "query_model": "query_model",
    "dimension": "dimensions",
    "timeout_seconds": "timeout_s",
    "max_retries": "max_retries",
    "max_input_chars": "max_input_chars",
}
_EMBEDDING_ACCEPTED = ("provider", "model", "document_model", "request_dimensions", "api_key",
                       *EMBEDDING_KEYS)


def upgrade_embedding(section: Any, out: dict[str, Any], where: str) -> None:
    """GrooveSeek's ``[embedding]`` table read as ``model = "openai:<name>"`` plus ``[embedder]``.

    ``provider = "fastembed"`` (GrooveSeek's default) names no service: the
    table is dropped with a note (``model`` chooses groove's model). An
    ``api_key`` written in the file is refused: groove reads keys only from
    the environment variable ``[embedder] api_key_env`` names.
    """
    if not isinstance(section, dict):
        raise ConfigError(f"{where}: [embedding] must be a table")
    unknown = sorted(set(section) - set(_EMBEDDING_ACCEPTED))
    if unknown:
        raise ConfigError(f"{where}: [embedding] {unknown[0]} is not a GrooveSeek embedding "
                          f"key groove reads; accepted: {', '.join(_EMBEDDING_ACCEPTED)}")
    provider = section.get("provider", "fastembed")
    if provider == "fastembed" and "api_key" in section:
        log.warning("%s: [embedding] api_key does nothing with the local model (and groove "
                    "reads keys only from the environment variable [embedder] api_key_env "
                    "names): remove it from the file", where)
    if provider == "fastembed":
        log.warning("%s: [embedding] provider = \"fastembed\" is GrooveSeek's local model; "
                    "ignored: groove's `model` key chooses the model (docs/grooveseek.md)", where)
        return
    if provider != "openai-compatible":
        raise ConfigError(f"{where}: [embedding] provider = {provider!r}; accepted: "
                          "\"openai-compatible\" or \"fastembed\"")
    if "api_key" in section:
        raise ConfigError(f"{where}: [embedding] api_key: groove does not read API keys from "
                          "groove.toml; put the key in an environment variable and name it in "
                          "[embedder] api_key_env (docs/grooveseek.md)")
    name = section.get("document_model") or section.get("model")
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"{where}: [embedding] needs model (or document_model), the name the "
                          "endpoint knows the model by")
    model = f"openai:{name}"
    if out.get("model", model) != model:
        raise ConfigError(f"{where}: both model = {out['model']!r} and [embedding] model "
                          f"{name!r} are set; keep only one")
    out["model"] = model
    deprecated(where, f"[embedding] model {name!r}", f"model = {model!r}")
    embedder = dict(out.get("embedder") or {})
    for old, new in EMBEDDING_KEYS.items():
        if old not in section:
            continue
        value = section[old]
        if old == "endpoint" and isinstance(value, str):
            value = value.rstrip("/").removesuffix("/embeddings")
        if new in embedder and embedder[new] != value:
            raise ConfigError(f"{where}: both [embedding] {old} and [embedder] {new} are set, to "
                              f"different values; keep only [embedder] {new}")
        embedder[new] = value
        deprecated(where, f"[embedding] {old}", f"[embedder] {new}")
    if "request_dimensions" in section:
        embedder["send_dimensions"] = section["request_dimensions"]
        deprecated(where, "[embedding] request_dimensions", "[embedder] send_dimensions")
    out["embedder"] = embedder


def upgrade_settings(raw: dict[str, Any], where: str) -> dict[str, Any]:
    """``raw`` with GrooveSeek's keys and values renamed (a new dict; ``raw`` is not changed)."""
    out = dict(raw)
    if "embedding" in out:
        upgrade_embedding(out.pop("embedding"), out, where)
    for old, new in RENAMED_KEYS.items():
        if old not in out:
            continue
        value = out.pop(old)
        if new in out and out[new] != value:
            raise ConfigError(f"{where}: both {old} (GrooveSeek's name) and {new} are set, to "
                              f"different values; keep only {new}")
        out[new] = value
        deprecated(where, f"`{old}`", f"`{new}`")
    parsers = out.get("parsers")
    enabled = parsers.get("enabled") if isinstance(parsers, dict) else None
    if isinstance(parsers, dict) and isinstance(enabled, list):
        short = [p for p in enabled if isinstance(p, str) and p in PARSER_ALIASES]
        for pid in dict.fromkeys(short):
            deprecated(where, f"parser id {pid!r}", f"{PARSER_ALIASES[pid]!r}")
        if short:
            out["parsers"] = {**parsers, "enabled": [
                PARSER_ALIASES.get(p, p) if isinstance(p, str) else p for p in enabled]}
    reranker = out.get("reranker")
    if isinstance(reranker, str) and reranker in RERANKER_ALIASES:
        out["reranker"] = RERANKER_ALIASES[reranker]
        deprecated(where, f"reranker = {reranker!r}", f"reranker = {out['reranker']!r}")
    return out

"""Trust rules for discovered config files.

A file found by discovery is *untrusted*: it may shape search and indexing but
cannot widen the HTTP exposure, pick the model cache or the index file, send the notes
(and an API key from the environment) to an embedding service or a Ray cluster, or point
``kb_path`` at the home directory (docs/configuration.md, "Trust"). ``--config PATH``
makes a file trusted.

The rule every key is judged by: a key that sends data or code anywhere, runs
anything, loads code, or widens who can reach the server is trusted-only
(:data:`TRUSTED_ONLY`). tests/config/test_trust.py pins the classification of every
key, so a new key cannot slip in unjudged.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from groove.config._util import _get
from groove.config.bind import BindAddress
from groove.config.model import _Settings

log = logging.getLogger("groove.config")

#: Keys (dotted paths) only a trusted file may set, and why each is refused otherwise.
#: ``transport.http.bind`` is not here: an untrusted non-loopback bind is moved to
#: loopback rather than dropped.
TRUSTED_ONLY: dict[str, str] = {
    "db_path": "groove would write its tables into that file",
    "model_cache_dir": "a hostile cache could hold a hostile model",
    "embedder.url": "it would send your notes to that service",
    "embedder.api_key_env": "it would send that variable's value to the embedding service",
    "index.executor": "\"ray\" would send your notes to a Ray cluster",
    "index.ray_address": "it would send your notes to that Ray cluster",
    "transport.http.allowed_hosts": "it would widen who may reach the HTTP server",
    "transport.http.allowed_origins": "it would widen which web pages may call the HTTP server",
    "transport.http.max_sessions": "it would lift the HTTP session cap",
    "index.max_binary_file_size": "it would change how much of a file groove holds in memory",
    "index.max_text_file_size": "it would change how much of a file groove holds in memory",
    "index.max_decompressed_size": "it would change how far an Office file may inflate",
    "transport.http.systemd_socket": "it would serve on a socket another program set up "
                                     "(a Unix socket has no loopback peer check)",
    "eval.golden": "`groove eval` would read that file, anywhere, and quote it in errors",
}


def _unsafe_kb_reason(kb: Path, config_dir: Path) -> str | None:
    """Why an untrusted file may not choose ``kb`` (docs/configuration.md), or None."""
    if kb.parent == kb:
        return "it is a filesystem root"
    try:
        home = Path.home().resolve()
    except (RuntimeError, KeyError, OSError):
        home = None
    if home is not None and kb == home:
        return "it is the home directory"
    if home is not None and kb in home.parents:
        return "it is an ancestor of the home directory"
    if kb in config_dir.resolve().parents:
        return "it is an ancestor of the config file's folder"
    return None


def _apply_trust(raw: dict[str, Any], validated: _Settings, source: Path) -> str | None:
    """Strip what an untrusted file may not set; return why kb_path was dropped, if it was."""
    http = _get(raw, ("transport", "http"))
    if isinstance(http, dict):
        bind = validated.transport.http.address
        if "bind" in http and not bind.is_loopback:
            http["bind"] = str(BindAddress("127.0.0.1", bind.port))
            log.warning("%s is untrusted (found by discovery): transport.http.bind %s moved to %s; "
                        "pass --config to trust it", source, bind, http["bind"])
    for dotted, why in TRUSTED_ONLY.items():
        *parents, key = dotted.split(".")
        table = _get(raw, tuple(parents)) if parents else raw
        if isinstance(table, dict) and key in table:
            del table[key]
            log.warning("%s is untrusted (found by discovery): %s ignored (%s); "
                        "pass --config to trust it", source, dotted, why)
    _announce_parsers(raw, validated, source)
    reason = None
    if raw.get("kb_path") is not None:
        reason = _unsafe_kb_reason(raw["kb_path"], source.parent)
        if reason:
            log.warning("%s is untrusted (found by discovery): kb_path %s ignored because %s",
                        source, raw["kb_path"], reason)
            reason = f"kb_path {raw.pop('kb_path')} in {source} was ignored because {reason}"
    return reason


def _announce_parsers(raw: dict[str, Any], validated: _Settings, source: Path) -> None:
    """An untrusted ``[parsers] enabled`` beyond Markdown is applied, and said so.

    GrooveSeek drops the key from an untrusted file (since v1.3) because there it
    decides whether a grammar plugin, native code from a directory, is loaded.
    In groove a parser is code the user installed (a package), never code from
    the folder, so the key stays among those a discovered file may set; but
    which formats of a shared folder get read is worth one line.
    """
    parsers = _get(raw, ("parsers",))
    enabled = list(validated.parsers.enabled)
    if not isinstance(parsers, dict) or "enabled" not in parsers or enabled == ["md"]:
        return
    log.warning("%s is untrusted (found by discovery): [parsers] enabled = %s is applied "
                "(groove's installed parsers read these formats; nothing is loaded from the "
                "folder; GrooveSeek ignores the key in an untrusted file); pass --config to "
                "trust the file, or remove the key to read Markdown only",
                source, ", ".join(enabled))

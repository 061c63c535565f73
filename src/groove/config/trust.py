"""Trust rules for discovered config files.

A file found by discovery is *untrusted*: it may shape search and indexing but
cannot widen the HTTP exposure, pick the model cache or the index file, send the notes
(and an API key from the environment) to an embedding service, or point ``kb_path`` at the
home directory (docs/configuration.md, "Trust"). ``--config PATH`` makes a file
trusted.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from groove.config._util import _exists, _get
from groove.config.bind import BindAddress
from groove.config.model import _HTTP_TRUSTED_ONLY, _Settings
from groove.errors import ConfigError

log = logging.getLogger("groove.config")

#: Top-level paths only a trusted file may set: where models are loaded from, and
#: the SQLite file groove writes into (any file the user can write, otherwise).
_TRUSTED_ONLY_PATHS = ("model_cache_dir", "db_path")
#: ``[embedder]`` keys only a trusted file may set: the service every chunk's text is
#: sent to, and which environment variable's value goes with it as a Bearer token.
_TRUSTED_ONLY_EMBEDDER = ("url", "api_key_env")

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
        for key in _HTTP_TRUSTED_ONLY:
            if key in http:
                del http[key]
                log.warning("%s is untrusted (found by discovery): transport.http.%s ignored; "
                            "pass --config to trust it", source, key)
    embedder = raw.get("embedder")
    if isinstance(embedder, dict):
        for key in _TRUSTED_ONLY_EMBEDDER:
            if key in embedder:
                del embedder[key]
                log.warning("%s is untrusted (found by discovery): embedder.%s ignored (it "
                            "would send your notes to that service); pass --config to trust it",
                            source, key)
    for key in _TRUSTED_ONLY_PATHS:
        if key in raw:
            del raw[key]
            log.warning("%s is untrusted (found by discovery): %s ignored; "
                        "pass --config to trust it", source, key)
    reason = None
    if raw.get("kb_path") is not None:
        reason = _unsafe_kb_reason(raw["kb_path"], source.parent)
        if reason:
            log.warning("%s is untrusted (found by discovery): kb_path %s ignored because %s",
                        source, raw["kb_path"], reason)
            reason = f"kb_path {raw.pop('kb_path')} in {source} was ignored because {reason}"
    return reason


def _check_kb_dir(kb: Path, origin: str) -> None:
    if not _exists(kb):
        raise ConfigError(f"{origin}: kb_path {kb} does not exist; accepted: an existing folder")
    try:
        is_dir = kb.is_dir()
    except OSError:
        is_dir = False
    if not is_dir:
        raise ConfigError(f"{origin}: kb_path {kb} is not a folder; accepted: an existing folder")



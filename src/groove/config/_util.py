"""Small filesystem and mapping helpers shared by config loading and the trust rules."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from groove.errors import ConfigError


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:
        return False


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:
        return False


def _absolute(path: Path, base: Path) -> Path:
    path = path.expanduser()
    return (path if path.is_absolute() else base / path).resolve()


def _get(data: Mapping[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        if not isinstance(data, Mapping) or key not in data:
            return None
        data = data[key]
    return data

def _check_kb_dir(kb: Path, origin: str) -> None:
    if not _exists(kb):
        raise ConfigError(f"{origin}: kb_path {kb} does not exist; accepted: an existing folder")
    try:
        is_dir = kb.is_dir()
    except OSError:
        is_dir = False
    if not is_dir:
        raise ConfigError(f"{origin}: kb_path {kb} is not a folder; accepted: an existing folder")


def _deep_merge(base: dict[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    """``top``'s keys laid over ``base`` (tables merged key by key, anything else replaced
    by a copy); ``base`` is changed and returned."""
    for key, value in top.items():
        if isinstance(value, Mapping) and isinstance(base.get(key), dict):
            _deep_merge(base[key], value)
        else:
            base[key] = copy.deepcopy(value)
    return base

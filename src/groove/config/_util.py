"""Small filesystem and mapping helpers shared by config loading and the trust rules."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any


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

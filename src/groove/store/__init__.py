"""Persistent storage for groove: the :class:`Store` contract and its SQLite implementation."""

from __future__ import annotations

from pathlib import Path

from groove.store.base import SCHEMA_VERSION, IndexMeta, Store, StoreStats
from groove.store.sqlite import SQLiteStore

__all__ = ["SCHEMA_VERSION", "IndexMeta", "SQLiteStore", "Store", "StoreStats", "open_store"]


def open_store(db_path: Path, create: bool = False) -> SQLiteStore:
    """Open the index at ``db_path`` (``create`` makes a new one if absent)."""
    return SQLiteStore.open(Path(db_path), create=create)

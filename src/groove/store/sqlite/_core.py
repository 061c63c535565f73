"""The shared state of :class:`~groove.store.sqlite.SQLiteStore` and its plumbing.

The connection and its lock, transactions (``_write`` bumps ``generation``), read
snapshots, ``index_meta`` and the counters, the error wording every part uses, and
``close``. The other files' mixins build on :class:`StoreCore`; the few hooks one
file calls in another are declared here as abstract methods.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
from abc import abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Unpack

from groove.errors import CorruptIndexError, GrooveError
from groove.fulltext import FullTextIndex, Stamp, open_fulltext
from groove.store.base import IndexMeta, MetaUpdate, Store, build_finished

log = logging.getLogger("groove.store")

#: Counters kept in ``index_meta`` by the triggers of ``_schema.py``, in the same
#: transaction as the rows they count, so the index state costs one read
#: however large the index is (never a ``count(*)`` per search).
COUNTERS = ("count_documents", "count_chunks", "count_chunks_embedded",
            "count_documents_pending", "count_tags_invalid", "count_field_values")

_FIX_FORCE = "run `groove index --force` to rebuild the index"

#: Primary SQLite result codes that mean "the file is damaged", not "busy" or "misused".
_SQLITE_CORRUPT = 11
_SQLITE_NOTADB = 26


def is_corruption(exc: BaseException) -> bool:
    """True for SQLite's "database disk image is malformed" and "file is not a database"."""
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(exc, sqlite3.DatabaseError) and code is not None and (
        code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB))


def corrupt_index_error(db_path: Path, detail: str) -> CorruptIndexError:
    """The one-line message every command gives for a damaged index (docs/troubleshooting.md)."""
    return CorruptIndexError(
        f"the index {db_path} is damaged ({detail}); run `groove index --force` to rebuild it "
        "into a fresh file (the damaged one is kept aside as "
        f"{db_path.name}.corrupt-<time>)")


_SQLITE_READONLY = 8
_SQLITE_CANTOPEN = 14


def _sqlite_error(db_path: Path, what: str, exc: sqlite3.Error) -> GrooveError:
    if is_corruption(exc):
        return corrupt_index_error(db_path, str(exc))
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None and code & 0xFF in (_SQLITE_READONLY, _SQLITE_CANTOPEN):
        return GrooveError(f"index {db_path}: {what} failed ({exc}): {permission_hint(db_path)}")
    return GrooveError(f"index {db_path}: {what} failed: {exc}")


def permission_hint(db_path: Path) -> str:
    """Which of the index file and its folder groove cannot write, in words."""
    folder = db_path.parent
    blocked = []
    if db_path.exists() and not os.access(db_path, os.W_OK):
        blocked.append(f"the index file {db_path}")
    if not os.access(folder, os.W_OK | os.X_OK):
        blocked.append(f"its folder {folder}")
    if not blocked:
        return (f"this is usually a permissions problem: groove needs to write {db_path} and, "
                f"for its -wal and -shm files, the folder {folder}")
    return (f"a permissions problem: groove cannot write {' nor '.join(blocked)} (it needs both, "
            "the folder for the -wal and -shm files); fix the permissions or set db_path to a "
            "writable place")


class StoreCore(Store):
    """The connection, the lock and the full-text handle every mixin shares."""

    def __init__(self, conn: sqlite3.Connection, db_path: Path) -> None:
        self._conn = conn
        self._path = db_path
        self._lock = threading.RLock()
        self._fulltext: FullTextIndex | None = None
        #: Documents queued to the full-text index since its last commit.
        self._fulltext_queued = 0
        self._fulltext_committed_at = time.monotonic()
        #: True from this process's first text write until :meth:`flush`.
        self._fulltext_writing = False
        #: Whether a batch was published since the writing began (the first goes at once).
        self._fulltext_published = False
        #: The stamp of the full-text commit loaded here (None: not looked at yet).
        self._fulltext_seen: Stamp | None = None
        #: The full-text damage last reported (:meth:`_without_fulltext` says each once).
        self._fulltext_said: str | None = None
        #: True inside a read snapshot this store began (:meth:`read_snapshot`).
        self._reading = False
        #: ``index_meta`` as the open read snapshot sees it, once read (see _meta_values).
        self._snapshot_meta: dict[str, str | None] | None = None
        #: True once :meth:`close` ran (a second close, or a flush after it, does nothing).
        self._closed = False


    # --- hooks the other files provide -------------------------------------------
    @abstractmethod
    def _before_text_write(self) -> None:
        """Before a write that changes chunk text (``_fulltext.py``)."""

    @abstractmethod
    def _queued(self, documents: int) -> None:
        """After such a write: count it into the full-text batch (``_fulltext.py``)."""

    @abstractmethod
    def _flush_fulltext(self) -> None:
        """Publish the queued full-text changes, release the writer (``_fulltext.py``)."""

    @abstractmethod
    def _settle_links(self) -> None:
        """Resolve again the links the writes marked (``_links.py``)."""

    # --- plumbing ------------------------------------------------------------
    @contextmanager
    def _errors(self, what: str) -> Iterator[None]:
        """Hold the lock and turn sqlite3 errors into GrooveError naming the file."""
        with self._lock:
            try:
                yield
            except sqlite3.Error as exc:
                raise _sqlite_error(self._path, what, exc) from exc

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE … COMMIT; roll back on any exception (including Ctrl-C)."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    @contextmanager
    def read_snapshot(self) -> Iterator[None]:
        """Every read inside sees one committed state (a deferred read transaction).

        Without it, two SELECTs around another process's commit can disagree
        (chunks of a document the first SELECT did not see).
        """
        with self._lock:
            if self._conn.in_transaction:
                yield
                return
            with self._errors("starting a read snapshot"):
                self._conn.execute("BEGIN")
            self._reading = True
            try:
                yield
            finally:
                self._reading, self._snapshot_meta = False, None
                if self._conn.in_transaction:
                    with self._errors("ending a read snapshot"):
                        self._conn.execute("COMMIT")

    @contextmanager
    def _write(self, what: str, *, text: bool = False) -> Iterator[sqlite3.Connection]:
        """One write transaction that also bumps ``generation`` and records ``changed_at``.

        ``text``: the write changes chunk text, so ``text_generation`` is bumped
        too (the full-text index must follow).
        """
        with self._errors(what), self._transaction() as conn:
            yield conn
            keys = "('generation', 'text_generation')" if text else "('generation')"
            conn.execute(
                "UPDATE index_meta SET value = CAST(value AS INTEGER) + 1 WHERE key IN " + keys
            )
            conn.execute("INSERT OR REPLACE INTO index_meta(key, value) VALUES ('changed_at', ?)",
                         (repr(time.time()),))

    def _meta_values(self) -> dict[str, str | None]:
        """Every ``index_meta`` row: the model, the counters, the generations, the stamps.

        Inside a read snapshot the table cannot change (this connection writes
        only in its own transactions, which cannot start there, and other
        processes' commits are not seen), so it is read once per snapshot: a
        search asks for the model, the generation, the full-text stamp and the
        counters, and pays for one small SELECT. Under the store's lock, which the
        snapshot holds throughout: another thread's read waits for it to end rather
        than reading inside it.
        """
        with self._lock:
            if self._snapshot_meta is not None:
                return self._snapshot_meta
            values = dict(self._conn.execute("SELECT key, value FROM index_meta").fetchall())
            if self._reading:
                self._snapshot_meta = values
            return values

    # --- metadata ------------------------------------------------------------
    def meta(self) -> IndexMeta:
        with self._errors("reading index_meta"):
            values = self._meta_values()
        return IndexMeta(
            schema_version=int(values.get("schema_version") or 0),
            model_id=values.get("model_id"),
            dim=_opt_int(values.get("dim")),
            context_mode=values.get("context_mode") or "off",
            last_indexed=_opt_float(values.get("last_indexed")),
            build_state=values.get("build_state"),
            changed_at=_opt_float(values.get("changed_at")),
            model_url=values.get("model_url") or None,
            chunk_policy=values.get("chunk_policy"),
            parser_policies=_opt_policies(values.get("parser_policies")),
            declared_fields=_opt_names(values.get("declared_fields")),
        )

    def set_meta(self, **fields: Unpack[MetaUpdate]) -> None:
        """Record the given fields (None = leave alone; ``model_url=""`` records a local model).

        Changing model, dimension or context mode bumps ``generation`` (caches
        built under the old model are stale); ``last_indexed`` and
        ``build_state`` do not, so a no-op index run does not make every
        reader reload.
        """
        dim, last_indexed = fields.get("dim"), fields.get("last_indexed")
        policies, declared = fields.get("parser_policies"), fields.get("declared_fields")
        updates = {
            "model_id": fields.get("model_id"),
            "dim": None if dim is None else str(int(dim)),
            "context_mode": fields.get("context_mode"),
            "last_indexed": None if last_indexed is None else repr(float(last_indexed)),
            "build_state": fields.get("build_state"),
            "model_url": fields.get("model_url"),
            "chunk_policy": fields.get("chunk_policy"),
            "parser_policies": None if policies is None else json.dumps(dict(sorted(policies.items()))),
            "declared_fields": None if declared is None else json.dumps(
                sorted(set(declared)), ensure_ascii=False),
        }
        rows = [(k, v) for k, v in updates.items() if v is not None]
        if not rows:
            return
        structural = any(k not in ("last_indexed", "build_state", "chunk_policy",
                                   "parser_policies")
                         for k, _ in rows)
        with self._errors("writing index_meta"), self._transaction() as conn:
            conn.executemany("INSERT OR REPLACE INTO index_meta(key, value) VALUES (?, ?)", rows)
            if structural:
                conn.execute(
                    "UPDATE index_meta SET value = CAST(value AS INTEGER) + 1"
                    " WHERE key = 'generation'"
                )

    def generation(self) -> int:
        with self._errors("reading generation"):
            return int(self._meta_values().get("generation") or 0)


    def _counters(self) -> dict[str, int]:
        with self._errors("reading the index counters"):
            rows = self._meta_values()
        return {key: int(rows.get(key) or 0) for key in COUNTERS}

    def _fulltext_index(self) -> FullTextIndex:
        if self._fulltext is None:
            self._fulltext = open_fulltext(self._path)
        return self._fulltext

    def _db_stamp(self) -> Stamp:
        values = self._meta_values()
        return Stamp(values.get("fulltext_id") or "", int(values.get("text_generation") or 0))

    def _build_finished(self) -> bool:
        return build_finished(self.meta())

    def close(self) -> None:
        with self._lock:
            try:
                try:
                    self._settle_links()
                except GrooveError as exc:  # a damaged file: closing must still close
                    log.warning("links left to resolve at the next flush: %s", exc)
                self._flush_fulltext()
                if self._fulltext is not None:
                    self._fulltext.close()
            finally:
                self._conn.close()
                self._closed = True


def _opt_policies(value: str | None) -> dict[str, str] | None:
    return None if value is None else {str(k): str(v) for k, v in json.loads(value).items()}


def _opt_names(value: str | None) -> tuple[str, ...] | None:
    return None if value is None else tuple(json.loads(value))


def _opt_int(value: str | None) -> int | None:
    return None if value is None else int(value)


def _opt_float(value: str | None) -> float | None:
    return None if value is None else float(value)



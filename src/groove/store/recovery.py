"""Rebuilding an index aside and swapping it in (docs/troubleshooting.md, docs/index-lifecycle.md).

``groove index --force`` never rebuilds in place: the new index is built in a
sibling file (``<db>.rebuild``), then put in place with one atomic rename.
Until then the previous index is untouched, so

* a failed rebuild (a remote embedder that stops answering, a full disk)
  leaves the previous index exactly as it was, and the half-built file and its
  ``-wal``/``-shm`` are removed (:func:`discard_rebuild`);
* a running server keeps answering from the previous index during the whole
  rebuild, and reopens the path once the file there was replaced.

A damaged index is kept as ``<db>.corrupt-<time>`` for inspection; a healthy
one is removed after the swap. The old file is hard-linked aside first, so at no
moment is there no file at the index path, and its ``-wal``/``-shm`` go aside
with it *before* the swap: a stale write-ahead log beside the new file would
otherwise be replayed into it.

The derived full-text index directory (``<db>.fts``) follows its database
through every step: built beside the fresh file, moved aside with the old one,
removed with a discarded one. Its stamp matches only its own database, so a
missed step shows as a stale full-text index that is rebuilt, never searched.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from pathlib import Path

from groove.fulltext import fulltext_path

log = logging.getLogger("groove.store.recovery")

SIDECARS = ("-wal", "-shm", "-journal")


def rebuild_path(db_path: Path) -> Path:
    """Where the fresh index is built; leftovers of an interrupted rebuild are removed."""
    fresh = db_path.with_name(db_path.name + ".rebuild")
    discard_rebuild(fresh)
    return fresh


def rebuild_leftovers(db_path: Path) -> list[Path]:
    """What an interrupted ``--force`` left beside ``db_path`` (its rebuild file, companions
    and full-text folder); ``lstat`` only, nothing is opened or followed."""
    fresh = db_path.with_name(db_path.name + ".rebuild")
    return [path for path in (*(Path(f"{fresh}{s}") for s in ("", *SIDECARS)),
                              fulltext_path(fresh)) if os.path.lexists(path)]


def discard_rebuild(fresh: Path) -> None:
    """Remove a rebuild file and its companions (a failed or interrupted rebuild)."""
    for suffix in ("", *SIDECARS):
        try:
            Path(f"{fresh}{suffix}").unlink(missing_ok=True)
        except OSError as exc:
            log.warning("could not remove %s%s: %s", fresh, suffix, exc.strerror or exc)
    shutil.rmtree(fulltext_path(fresh), ignore_errors=True)


def _aside_path(db_path: Path, label: str) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    aside = db_path.with_name(f"{db_path.name}.{label}-{stamp}")
    n = 1
    while aside.exists():
        n += 1
        aside = db_path.with_name(f"{db_path.name}.{label}-{stamp}-{n}")
    return aside


def swap_in(db_path: Path, fresh: Path, *, damaged: bool) -> Path | None:
    """Put ``fresh`` (closed: no ``-wal`` of its own) at ``db_path``.

    A ``damaged`` old file is kept aside and its path returned; a healthy one
    is removed (a process that still has it open keeps reading it until it
    notices the replacement and reopens the path).
    """
    aside = _aside_path(db_path, "corrupt" if damaged else "previous")
    for suffix in SIDECARS:
        side = Path(f"{db_path}{suffix}")
        if side.exists():
            os.replace(side, f"{aside}{suffix}")
    try:
        os.link(db_path, aside)
    except FileNotFoundError:
        pass  # the old file vanished meanwhile: nothing to keep
    except OSError:  # no hard links here: a short moment without a file at db_path
        os.replace(db_path, aside)
    os.replace(fresh, db_path)
    _move_fulltext(fulltext_path(db_path), fulltext_path(aside))
    _move_fulltext(fulltext_path(fresh), fulltext_path(db_path))
    if damaged:
        log.warning("the damaged index was kept as %s; the rebuilt index is now %s", aside, db_path)
        return aside
    discard_rebuild(aside)
    return None


def _move_fulltext(source: Path, target: Path) -> None:
    """Rename a full-text index directory if it exists, replacing whatever is at ``target``."""
    if not source.exists():
        return
    if target.exists():
        shutil.rmtree(target, ignore_errors=True)
    os.replace(source, target)

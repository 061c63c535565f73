"""Replacing a damaged index file with a freshly built one (docs/troubleshooting.md).

``groove index --force`` on a damaged index builds the new index in a
sibling file (``<db>.rebuild``), then puts it in place with one atomic
rename. The damaged file is kept as ``<db>.corrupt-<time>`` for inspection:
it is hard-linked there first, so at no moment is there no file at the
index path. The damaged file's ``-wal``/``-shm`` go aside with it *before*
the swap: a stale write-ahead log beside the new file would otherwise be
replayed into it. The derived full-text index directory (``<db>.fts``)
follows its database: the damaged one's goes aside with it, the fresh one's
moves into place (its stamp matches only the fresh database, so a missed step
shows as a stale full-text index and is rebuilt, never searched).
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
    for suffix in ("", *SIDECARS):
        Path(f"{fresh}{suffix}").unlink(missing_ok=True)
    shutil.rmtree(fulltext_path(fresh), ignore_errors=True)
    return fresh


def replace_damaged(db_path: Path, fresh: Path) -> Path:
    """Move the damaged index aside and the fresh one into place; return the aside path.

    ``fresh`` must be closed (no ``-wal`` of its own left behind).
    """
    stamp = time.strftime("%Y%m%d-%H%M%S")
    aside = db_path.with_name(f"{db_path.name}.corrupt-{stamp}")
    n = 1
    while aside.exists():
        n += 1
        aside = db_path.with_name(f"{db_path.name}.corrupt-{stamp}-{n}")
    for suffix in SIDECARS:
        side = Path(f"{db_path}{suffix}")
        if side.exists():
            os.replace(side, f"{aside}{suffix}")
    try:
        os.link(db_path, aside)
    except FileNotFoundError:
        pass  # the damaged file vanished meanwhile: nothing to keep
    except OSError:  # no hard links here: a short moment without a file at db_path
        os.replace(db_path, aside)
    os.replace(fresh, db_path)
    _move_fulltext(fulltext_path(db_path), fulltext_path(aside))
    _move_fulltext(fulltext_path(fresh), fulltext_path(db_path))
    log.warning("the damaged index was kept as %s; the rebuilt index is now %s", aside, db_path)
    return aside


def _move_fulltext(source: Path, target: Path) -> None:
    """Rename a full-text index directory if it exists (a directory: never over another)."""
    if not source.exists():
        return
    if target.exists():
        shutil.rmtree(target, ignore_errors=True)
    os.replace(source, target)

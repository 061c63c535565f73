"""Live sync (docs/indexing.md, 'Live sync'): watch kb_path and apply changes incrementally.

A :class:`Watcher` runs ``watchfiles.watch`` in a daemon thread. Changes are
debounced (``[watch] debounce_ms`` of quiet, capped so a file that never stops
changing still syncs), filtered by the *same* :class:`groove.indexing.walk.ExclusionRules`
the walk uses, and handed to ``kb.sync_paths`` in one batch, so a delete plus
an add of the same bytes is seen together and becomes a rename.

A change to ``.grooveignore`` reloads the rules first and then runs a full
incremental pass, because new rules can include or exclude any file.
Directory events are expanded: a directory that appears contributes the
files under it, one that vanishes contributes the indexed documents under it.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from groove._logging import note

if TYPE_CHECKING:
    from collections.abc import Callable

    from groove.kb import KnowledgeBase

log = logging.getLogger("groove.server.watcher")

#: Longest a continuous stream of changes is grouped before syncing anyway.
MAX_GROUP_MS = 5_000
#: How often the watch loop wakes up to notice stop() when nothing changes.
WAKE_MS = 200
#: Pause before watching again after the watch itself failed, doubling per
#: consecutive failure up to the cap (a failure that repeats must not spin).
RESTART_DELAY_S = 0.5
RESTART_DELAY_MAX_S = 30.0
#: How often a sync waiting for another index run (the background build) checks stop().
BUSY_CHECK_S = 0.2


class Watcher:
    """File watcher for one knowledge base; ``state`` is "off", "watching" or "error"."""

    def __init__(self, kb: KnowledgeBase, *, debounce_ms: int | None = None,
                 catch_up: bool = True, on_documents_changed: Callable[[], None] | None = None) -> None:
        from groove.indexing.fileset import FileSet

        self.kb = kb
        cfg = kb.config
        self.debounce_ms = cfg.watch.debounce_ms if debounce_ms is None else debounce_ms
        self.files = FileSet.from_config(cfg)
        self.catch_up = catch_up
        #: Called (in the watcher thread) after a sync that added, deleted or renamed documents.
        self.on_documents_changed = on_documents_changed
        self.state = "off"
        self.last_error: str | None = None
        self.last_sync: str | None = None
        #: Set once the OS watch is active (changes from then on are seen).
        self.ready = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # --- lifecycle --------------------------------------------------------------
    def start(self) -> None:
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="groove-watcher", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        if self.state == "watching":
            self.state = "off"

    def __enter__(self) -> Watcher:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- the loop ---------------------------------------------------------------
    def _run(self) -> None:
        """Watch until stopped; when the watch itself fails, log, pause, resync, watch again.

        The watch can fail on an event it cannot represent (a file name that
        is not valid UTF-8 makes watchfiles raise "Unable to decode path");
        one such file must not end live sync for the rest of the session.
        """
        failures = 0
        while not self._stop.is_set():
            started = time.monotonic()
            try:
                self._watch(resync=failures > 0)
                return
            except Exception as exc:
                # a watch that ran a while before failing starts the back-off over
                steady = time.monotonic() - started > 2 * RESTART_DELAY_MAX_S
                failures = 1 if steady else failures + 1
                delay = min(RESTART_DELAY_S * 2 ** (failures - 1), RESTART_DELAY_MAX_S)
                self.last_error = f"{type(exc).__name__}: {exc}"
                log.warning("file watcher failed (%s); watching again in %.1f s and re-checking "
                            "every file", self.last_error, delay)
                if not self.ready.is_set():  # failed before it ever watched: say so in status
                    self.state = "error"
                    self.ready.set()
                self._stop.wait(delay)

    def _watch(self, *, resync: bool) -> None:
        import watchfiles

        step = max(self.debounce_ms, 1)
        for changes in watchfiles.watch(
            self.kb.kb_path, watch_filter=self._wanted, debounce=max(MAX_GROUP_MS, step),
            step=step, stop_event=self._stop, rust_timeout=WAKE_MS, yield_on_timeout=True,
            raise_interrupt=False,
        ):
            if not self.ready.is_set() or resync:
                self._become_ready(catch_up=self.catch_up or resync)
                resync = False
            if changes:
                self._apply({Path(p) for _, p in changes})

    def _become_ready(self, *, catch_up: bool) -> None:
        self.state = "watching"
        note(log, "watching %s for changes (debounce %d ms)", self.kb.kb_path, self.debounce_ms)
        if catch_up:  # files changed while groove was not running (or not watching)
            self._sync(None)
        self.ready.set()

    def _rel(self, path: Path | str) -> str | None:
        try:
            return Path(path).relative_to(self.kb.kb_path).as_posix()
        except ValueError:
            try:
                return Path(path).resolve().relative_to(self.kb.kb_path.resolve()).as_posix()
            except (ValueError, OSError):
                return None

    def _wanted(self, _change: object, path: str) -> bool:
        """Cheap pre-filter: the exclusion rules plus "could this be a document or a folder"."""
        rel = self._rel(path)
        if rel is None or rel == ".":
            return False
        if self.files.is_ignore_file(rel):
            return True
        if self.files.rules.excludes_file(rel):
            return False
        if self.files.has_extension(rel):
            return True
        full = Path(path)
        return full.is_dir() or not full.exists()  # a folder appearing or vanishing

    def _apply(self, paths: set[Path]) -> None:
        rels = {r for r in (self._rel(p) for p in paths) if r}
        if any(self.files.is_ignore_file(r) for r in rels):
            self.files.reload()  # its warnings are logged as it reads the file
            note(log, ".grooveignore changed: exclusion rules reloaded, re-checking every file")
            self._sync(None)
            return
        self._sync(sorted(self._expand(rels)))

    def _expand(self, rels: set[str]) -> set[str]:
        """Files and folders → the document paths to re-check."""
        out: set[str] = set()
        known: list[str] | None = None
        walked: list[str] | None = None
        for rel in rels:
            full = self.kb.kb_path / rel
            if full.is_dir() and not full.is_symlink():
                if self.files.excludes_dir(rel):
                    continue
                if walked is None:  # one walk of the KB serves every folder in the batch
                    walked = list(self.files.walk())
                out.update(p for p in walked if p.startswith(rel + "/"))
            elif self.files.has_extension(rel):
                out.add(rel)
            elif not full.exists():
                if known is None:
                    known = self._indexed_paths()
                out.update(p for p in known if p.startswith(rel + "/"))
        return out

    def _indexed_paths(self) -> list[str]:
        from groove.errors import GrooveError

        try:
            return [d.path for d in self.kb.list_documents()]
        except GrooveError:
            return []

    def _wait_for_other_runs(self) -> bool:
        """Wait while another run writes the index, checking stop(); False if stopped meanwhile.

        ``serve`` on a new folder builds the index in a thread while the
        watcher catches up. The catch-up's own run would wait for the build's
        lock inside :meth:`KnowledgeBase.index`, where stop() cannot reach it,
        and stopping ``serve`` (Ctrl-C) would then wait out the join's timeout.
        """
        while self.kb.indexing:
            if self._stop.wait(BUSY_CHECK_S):
                return False
        return True

    def _sync(self, rel_paths: list[str] | None) -> None:
        """One incremental run; a failure is logged and the watcher keeps going."""
        from groove.errors import GrooveError

        if rel_paths is not None and not rel_paths:
            return
        if not self._wait_for_other_runs():
            return  # stopped while another run held the index
        try:
            summary = self.kb.index() if rel_paths is None else self.kb.sync_paths(rel_paths)
        except GrooveError as exc:
            log.warning("sync failed: %s", exc)
            self.last_error = str(exc)
            return
        except Exception as exc:
            log.exception("sync failed unexpectedly")
            self.last_error = f"{type(exc).__name__}: {exc}"
            return
        self.last_error = None
        self.last_sync = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        if rel_paths is None or any((summary.indexed, summary.updated, summary.renamed,
                                     summary.deleted)):
            note(log, "sync: %s", summary.line())
        if self.on_documents_changed is not None and any(
                (summary.indexed, summary.renamed, summary.deleted)):
            try:
                self.on_documents_changed()
            except Exception:
                log.exception("telling clients about changed documents failed")


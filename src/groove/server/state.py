"""What the running server knows about itself, for status and rebuild_index.

One :class:`ServerState` is shared by the MCP tools, the HTTP status route
and the UI, so "is an index rebuild running, since when" has one answer.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from groove._version import __version__
from groove.errors import Busy

if TYPE_CHECKING:
    from groove.collections import Collections
    from groove.kb import KnowledgeBase
    from groove.server.notifications import ListChangedNotifier
    from groove.server.watcher import Watcher


@dataclass
class ServerState:
    kb: KnowledgeBase
    watcher: Watcher | None = None
    #: Set by build_mcp_server; told when the watcher changes the set of documents.
    notifier: ListChangedNotifier | None = None
    started_at: float = field(default_factory=time.time)
    _rebuild_lock: threading.Lock = field(default_factory=threading.Lock)
    _rebuild_started: float | None = None
    #: The served collections, when the server serves several (``kb`` is then the first).
    collections: Collections | None = None
    #: Each collection's watcher, by name (collections only; ``watcher`` is the first's).
    watchers: dict[str, Watcher] = field(default_factory=dict)

    @contextmanager
    def exclusive_rebuild(self) -> Iterator[None]:
        """Enter once at a time; a second caller gets Busy with the running one's age."""
        if not self._rebuild_lock.acquire(blocking=False):
            started = self._rebuild_started or time.monotonic()
            raise Busy(
                f"rebuild_index is already running (for {time.monotonic() - started:.1f} s); "
                "wait for it to finish and call again if still needed"
            )
        self._rebuild_started = time.monotonic()
        try:
            yield
        finally:
            self._rebuild_started = None
            self._rebuild_lock.release()

    def documents_changed(self) -> None:
        """The watcher added, removed or renamed documents: clients refetch resources/list."""
        if self.notifier is not None:
            self.notifier.resources_changed()

    @property
    def indexing(self) -> bool:
        """True while any indexing run (rebuild, watcher sync, CLI) holds the KB's index lock."""
        return self._rebuild_started is not None or self.kb.indexing

    def watcher_state(self) -> str:
        return self.watcher.state if self.watcher is not None else "off"

    def status(self) -> dict[str, Any]:
        """The /api/admin/status body: GrooveSeek's shape plus groove's own fields.

        GrooveSeek's objects — ``daemon`` (version, pid, uptime, start time),
        ``indexing`` (active, since when, progress), ``watcher`` (active,
        debounce) and ``kb`` (documents, chunks, model) — plus its
        ``config_source`` label, so a monitor written for GrooveSeek (its
        Windows tray polled this route) keeps working. groove adds the fields
        of ``groove status --format json`` with the local paths cut down
        (:func:`without_local_paths`), ``watcher.state`` / ``watcher.error``,
        and ``version``, ``uptime_s`` and ``pid`` at the top level
        (docs/deployment.md, "The /ui page").
        """
        from groove.errors import GrooveError

        try:
            out: dict[str, Any] = without_local_paths(self.kb.status(check=False))
        except GrooveError as exc:
            out = {"error": str(exc), "index": self.kb.index_state(files=False).to_json()}
        now = time.time()
        index = out["index"]
        active = self.indexing
        started = (now - (time.monotonic() - self._rebuild_started)
                   if self._rebuild_started is not None else None)
        watcher: dict[str, Any] = {
            "active": self.watcher_state() == "watching",
            "debounce_ms": (self.watcher.debounce_ms if self.watcher is not None
                            else self.kb.config.watch.debounce_ms),
            "state": self.watcher_state(),
        }
        if self.watcher is not None and self.watcher.last_error:
            watcher["error"] = self.watcher.last_error
        out.update(
            daemon={"version": __version__, "pid": os.getpid(),
                    "uptime_secs": int(now - self.started_at),
                    "started_at": _iso_utc(self.started_at)},
            indexing={"active": active,
                      "started_at": _iso_utc(started) if started is not None else None,
                      "progress": ({"current": index["documents_embedded"],
                                    "total": index["documents"]} if active else None)},
            watcher=watcher,
            kb={"documents": out.get("documents", index["documents"]),
                "chunks": out.get("chunks", index["chunks"]), "model": self.kb.model_id},
            config_source=config_source_label(self.kb.config),
            version=__version__,
            uptime_s=round(now - self.started_at, 1),
            pid=os.getpid(),
        )
        if self.collections is not None:
            out["collections"] = self.collections_status()
        return out

    def collections_status(self) -> dict[str, Any]:
        """Each collection's status fields and watcher state, by name (local paths cut)."""
        from groove.collections import status_of

        assert self.collections is not None
        out: dict[str, Any] = {}
        for name, status in status_of(self.collections, check=False).items():
            body = without_local_paths(status) if "error" not in status else {
                "error": status["error"]}
            watcher = self.watchers.get(name)
            body["watcher"] = watcher.state if watcher is not None else "off"
            out[name] = body
        return out


def _iso_utc(seconds: float) -> str:
    """``2026-07-26T09:12:03Z``, GrooveSeek's timestamp form."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def config_source_label(config: Any) -> str:
    """Which rule found the config, in GrooveSeek's words (``Explicit``, ``Cwd``, ...).

    ``KbPath`` (a groove.toml in the ``--kb-path`` folder) is groove's own rule.
    No path is given: the route is served to any local process.
    """
    from pathlib import Path

    from groove.config.loading import program_dir

    source = config.source
    if source is None:
        return "NotFound"
    if source.parent == program_dir():
        return "AlongsideBinary"
    if config.trusted:
        return "Explicit"
    if source.parent == Path.cwd():
        return "Cwd"
    if source.parent == config.kb_path:
        return "KbPath"
    return "GitRoot"


def without_local_paths(status: dict[str, Any]) -> dict[str, Any]:
    """``status`` with no absolute path of this machine in it (same keys, same types).

    The HTTP status is loopback-only, but a loopback client is any local
    process or user, not necessarily the person who started groove: the KB
    becomes its folder name, the index its path relative to the KB (or its
    file name when it lives elsewhere), and the writer's command line its
    program and subcommand (its arguments may hold paths). The CLI's
    ``groove status`` shows the full paths to the user who asked.
    """
    from pathlib import Path

    out = dict(status)
    kb = Path(status["kb_path"])
    index = Path(status["index_path"])
    out["kb_path"] = kb.name
    out["index_path"] = index.relative_to(kb).as_posix() if index.is_relative_to(kb) else index.name
    writer = status.get("writer")
    if writer is not None:
        out["writer"] = {"pid": writer["pid"], "command": " ".join(writer["command"].split()[:2])}
    return out

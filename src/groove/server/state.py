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
        """kb.status() plus what only the server knows (the /api/admin/status body).

        The same shape as ``groove status --format json``, with the local paths
        cut down (see :func:`without_local_paths`).
        """
        from groove.errors import GrooveError

        try:
            out: dict[str, Any] = without_local_paths(self.kb.status(check=False))
        except GrooveError as exc:
            out = {"error": str(exc), "index": self.kb.index_state(files=False).to_json()}
        out.update(
            version=__version__,
            watcher=self.watcher_state(),
            uptime_s=round(time.time() - self.started_at, 1),
            pid=os.getpid(),
            indexing=self.indexing,
        )
        if self.watcher is not None and self.watcher.last_error:
            out["watcher_error"] = self.watcher.last_error
        return out


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

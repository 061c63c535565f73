"""One index writer at a time across processes: an exclusive lock file next to the database.

``<db>.lock`` (e.g. ``.groove.db.lock``) is locked with ``flock`` by whoever
writes the index: ``groove index``, the CLI's automatic build, the watcher and
the ``rebuild_index`` tool. The holder writes its pid and command line into
the file, so a second writer can say whom it is waiting for. Rules:

* the kernel releases an ``flock`` when its holder dies (even on SIGKILL), so
  a stale lock file never blocks anybody; the file itself is left in place;
* readers (searches) never take it: :meth:`WriterLock.holder` only *probes*,
  so "is a build running" costs one non-blocking syscall;
* a probe takes a shared lock for an instant, so a writer's non-blocking
  attempt retries briefly before it concludes that somebody holds the lock;
* the file is opened through :mod:`groove.store.files`: a link, FIFO or directory
  planted at its name is never followed or waited on; writers are refused with
  one line naming it, readers go on (one warning);
* every failure after the file is opened (a full disk while writing the holder
  record, say) releases the lock and closes the descriptor before it propagates;
* where ``fcntl`` does not exist (Windows) the lock is process-local only
  (docs/index-lifecycle.md says so).
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from groove.errors import Busy, GrooveError, UnsafeFile
from groove.store.files import open_fd

log = logging.getLogger("groove.store.writer_lock")

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

#: How long a non-blocking attempt keeps retrying (a reader's probe holds it for microseconds).
PROBE_GRACE_S = 0.2
#: How often a waiting writer re-reads who holds the lock (the message names the holder).
WAIT_POLL_S = 0.5
#: What the lock file is called in messages.
WHAT = "the writer lock file"


@dataclass(frozen=True)
class Holder:
    """Who holds the writer lock."""

    pid: int | None
    command: str
    since: float | None

    def describe(self) -> str:
        who = f"pid {self.pid}" if self.pid else "another process"
        since = (f", since {time.strftime('%H:%M:%S', time.localtime(self.since))}"
                 if self.since else "")
        return f"{who} ({self.command or 'unknown command'}{since})"


def lock_path(db_path: Path) -> Path:
    """The lock file of the index at ``db_path``."""
    return db_path.with_name(db_path.name + ".lock")


def _command_line() -> str:
    argv = [os.path.basename(sys.argv[0]) if sys.argv else "python", *sys.argv[1:]]
    return " ".join(argv)[:300]


class WriterLock:
    """The cross-process writer lock of one index file (re-entrant within a process)."""

    def __init__(self, db_path: Path) -> None:
        self.path = lock_path(Path(db_path))
        self._fd: int | None = None
        self._depth = 0
        self._owner: int | None = None
        self._mutex = threading.Lock()
        self._warned: set[str] = set()

    # --- taking it ---------------------------------------------------------------
    @contextmanager
    def hold(self, *, wait: bool = True,
             on_wait: Callable[[Holder], None] | None = None) -> Iterator[None]:
        """Hold the lock for the block.

        With ``wait`` a busy lock is waited for (``on_wait`` is told who holds
        it, once); without, :class:`~groove.errors.Busy` names the holder.
        Re-entering from the thread that holds it is allowed.
        """
        me = threading.get_ident()
        if self._owner == me:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        self._acquire(wait=wait, on_wait=on_wait)
        self._owner, self._depth = me, 1
        try:
            yield
        finally:
            self._owner, self._depth = None, 0
            self._release()

    def _acquire(self, *, wait: bool, on_wait: Callable[[Holder], None] | None) -> None:
        self._mutex.acquire()  # one holder per process; other threads queue here
        try:
            if fcntl is None:
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = open_fd(self.path, os.O_RDWR | os.O_CREAT, WHAT)
            try:
                self._lock_fd(fd, wait=wait, on_wait=on_wait)
            except BaseException:
                os.close(fd)
                raise
            try:
                self._write_holder(fd)
            except BaseException as exc:
                _unlock_and_close(fd)
                if isinstance(exc, OSError):
                    raise GrooveError(f"cannot take {WHAT} {self.path}: writing the holder record "
                                      f"failed ({exc.strerror or exc}); free some disk space "
                                      "and run again") from None
                raise
            self._fd = fd
        except BaseException:
            self._mutex.release()
            raise

    def _lock_fd(self, fd: int, *, wait: bool, on_wait: Callable[[Holder], None] | None) -> None:
        deadline = time.monotonic() + PROBE_GRACE_S
        told = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                pass
            if time.monotonic() < deadline:
                time.sleep(0.01)
                continue
            holder = _read_holder(fd)
            if not wait:
                raise Busy(f"the index {self.path.with_suffix('')} is being written by "
                           f"{holder.describe()}; try again when it has finished")
            if not told and on_wait is not None:
                on_wait(holder)
                told = True
            time.sleep(WAIT_POLL_S)

    def _write_holder(self, fd: int) -> None:
        record = json.dumps({"pid": os.getpid(), "command": _command_line(), "since": time.time()})
        os.ftruncate(fd, 0)
        os.pwrite(fd, record.encode("utf-8"), 0)

    def _release(self) -> None:
        try:
            if self._fd is not None:
                _unlock_and_close(self._fd, clear=True)
        finally:
            self._fd = None
            self._mutex.release()

    # --- looking at it -------------------------------------------------------------
    @property
    def held_here(self) -> bool:
        """True while this process holds it."""
        return self._owner is not None

    def holder(self) -> Holder | None:
        """Who holds the lock now, or None; never blocks and never takes it for long.

        A lock file that cannot be a lock (a link, FIFO or directory planted
        there) holds nobody: readers go on, with one warning naming it, and
        every writer is refused by :meth:`hold` with the same line.
        """
        if self.held_here:
            return Holder(os.getpid(), _command_line(), None)
        if fcntl is None:
            return None
        try:
            fd = open_fd(self.path, os.O_RDONLY, WHAT)
        except FileNotFoundError:
            return None
        except UnsafeFile as exc:
            if str(exc) not in self._warned:
                self._warned.add(str(exc))
                log.warning("%s; indexing is refused until then", exc)
            return None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return _read_holder(fd)
            fcntl.flock(fd, fcntl.LOCK_UN)
            return None
        finally:
            os.close(fd)


def _read_holder(fd: int) -> Holder:
    """The holder record in the open lock file (empty or unreadable: an unknown holder)."""
    try:
        data = json.loads(os.pread(fd, 4096, 0).decode("utf-8") or "{}")
    except (OSError, ValueError):
        data = {}
    if not isinstance(data, dict):
        data = {}
    pid = data.get("pid")
    since = data.get("since")
    return Holder(pid if isinstance(pid, int) else None, str(data.get("command") or ""),
                  since if isinstance(since, int | float) else None)


def _unlock_and_close(fd: int, *, clear: bool = False) -> None:
    """Empty the holder record (``clear``), unlock and close: the last two happen whatever fails."""
    try:
        if clear:
            os.ftruncate(fd, 0)
    except OSError as exc:
        log.warning("could not clear the holder record of %s: %s", WHAT, exc.strerror or exc)
    finally:
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

"""One index writer at a time across processes; readers never wait (docs/index-lifecycle.md)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from groove.errors import Busy
from groove.store.writer_lock import WriterLock, lock_path

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="flock is POSIX")

_HOLDER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from groove.store.writer_lock import WriterLock
    with WriterLock(Path(sys.argv[1])).hold():
        print("held", flush=True)
        sys.stdin.read()
""")


def _deadline_poll(check, timeout: float = 30.0, what: str = "condition"):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def holder(tmp_path):
    """Another process holding the writer lock of ``tmp_path/kb/.groove.db`` until closed."""
    db = tmp_path / "kb" / ".groove.db"
    db.parent.mkdir(exist_ok=True)
    proc = subprocess.Popen([sys.executable, "-c", _HOLDER, str(db)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    yield proc, db
    if proc.poll() is None:
        proc.kill()
    proc.wait(10)


def test_the_lock_file_sits_next_to_the_database(tmp_path):
    assert lock_path(tmp_path / ".groove.db") == tmp_path / ".groove.db.lock"


def test_a_second_writer_is_refused_naming_the_holder_and_a_reader_only_sees_it(holder):
    proc, db = holder
    lock = WriterLock(db)
    found = lock.holder()
    assert found is not None and found.pid == proc.pid
    started = time.monotonic()
    with pytest.raises(Busy) as refused, lock.hold(wait=False):
        pass
    assert f"pid {proc.pid}" in str(refused.value)
    assert time.monotonic() - started < 5


def test_a_waiting_writer_is_told_who_holds_it_and_gets_it_when_released(holder):
    proc, db = holder
    told = []
    lock = WriterLock(db)
    result = []

    def take() -> None:
        with lock.hold(on_wait=told.append):
            result.append(os.getpid())

    waiter = threading.Thread(target=take)
    waiter.start()
    _deadline_poll(lambda: told, what="the wait message")
    assert told[0].pid == proc.pid and not result
    proc.stdin.close()  # the holder finishes
    waiter.join(30)
    assert result == [os.getpid()]


def test_a_killed_holder_leaves_no_stale_lock(holder):
    proc, db = holder
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    lock = WriterLock(db)
    _deadline_poll(lambda: lock.holder() is None, what="the lock to be free")
    with lock.hold(wait=False):
        assert lock.holder() is not None and lock.held_here


def _groove(*args: str, cwd: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "groove", *args], cwd=cwd, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.mark.slow
def test_cli_index_waits_or_fails_fast_and_search_answers_at_once(holder, write_files,
                                                                 tmp_path):
    proc, db = holder
    kb_dir = write_files(db.parent, {"a.md": "# A\n\n## Tokio\n\nUse tokio::spawn for tasks.\n"})
    refused = _groove("index", "--kb-path", str(kb_dir), "--no-wait", cwd=tmp_path)
    out, err = refused.communicate(timeout=120)
    assert refused.returncode == 2 and f"pid {proc.pid}" in err and out == ""

    search = _groove("search", "tokio", "--kb-path", str(kb_dir), cwd=tmp_path)
    out, err = search.communicate(timeout=120)
    assert search.returncode == 0, err
    assert "no index yet" in err  # answered without waiting, and said why it is empty

    waiting = _groove("index", "--kb-path", str(kb_dir), "--quiet", cwd=tmp_path)
    assert waiting.stderr is not None
    def waiting_line() -> str | None:
        line = waiting.stderr.readline()  # type: ignore[union-attr]
        return line if "waiting for the index writer lock" in line or not line else None

    line = _deadline_poll(waiting_line, timeout=120, what="the waiting message")
    assert f"pid {proc.pid}" in line
    assert waiting.poll() is None
    proc.stdin.close()
    out, _ = waiting.communicate(timeout=300)
    assert waiting.returncode == 0 and out.startswith("indexed 1")

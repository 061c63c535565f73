"""Files beside the index: planted links, FIFOs and directories are refused, never followed.

A knowledge base is often a cloned repository, and git stores symbolic links:
each test plants something at a name groove writes and checks that the victim
outside the KB is untouched and the refusal is one line naming the path.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groove.errors import UnsafeFile
from groove.evaluation.history import HISTORY_FILENAME, load_history, save_history
from groove.store import open_store
from groove.store.files import check_regular, open_fd, read_bytes, replace_atomically
from groove.store.writer_lock import WriterLock, lock_path

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX links and FIFOs")

SECRET = b"the victim's own content\n"


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    path = tmp_path / "outside" / "victim.txt"
    path.parent.mkdir()
    path.write_bytes(SECRET)
    return path


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    root.mkdir()
    return root


def plant(at: Path, kind: str, target: Path | None = None) -> None:
    if kind == "link":
        assert target is not None
        at.symlink_to(target)
    elif kind == "fifo":
        os.mkfifo(at)
    else:
        at.mkdir()


# --------------------------------------------------------------------------- the helper


@pytest.mark.parametrize("kind", ["link", "fifo", "directory"])
def test_open_fd_refuses_what_is_not_a_regular_file(kb: Path, victim: Path, kind: str) -> None:
    path = kb / "thing"
    plant(path, kind, victim)
    for flags in (os.O_RDONLY, os.O_RDWR | os.O_CREAT):
        with pytest.raises(UnsafeFile) as info:
            open_fd(path, flags, "the test file")
        message = str(info.value)
        assert str(path) in message and "\n" not in message
    assert victim.read_bytes() == SECRET


def test_a_second_hard_link_is_refused_for_writing_only(kb: Path, victim: Path) -> None:
    os.link(victim, kb / "thing")
    os.close(open_fd(kb / "thing", os.O_RDONLY, "the test file"))
    with pytest.raises(UnsafeFile, match="2 hard links"):
        open_fd(kb / "thing", os.O_RDWR, "the test file")


def test_a_missing_file_reads_as_missing(kb: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_bytes(kb / "absent", "the test file")
    check_regular(kb / "absent", "the test file")


@settings(max_examples=25, deadline=None)
@given(payload=st.binary(max_size=4096))
def test_replace_atomically_writes_exactly_and_leaves_no_temporary(tmp_path_factory, payload) -> None:
    folder = tmp_path_factory.mktemp("atomic")
    target = folder / "file.json"
    replace_atomically(target, lambda tmp: tmp.write_bytes(payload), "the test file")
    assert target.read_bytes() == payload
    assert sorted(p.name for p in folder.iterdir()) == ["file.json"]


def test_replace_atomically_cleans_up_when_the_writer_fails(kb: Path) -> None:
    def fail(tmp: Path) -> None:
        tmp.write_bytes(b"half")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError):
        replace_atomically(kb / "file.json", fail, "the test file")
    assert list(kb.iterdir()) == []


# --------------------------------------------------------------------------- the writer lock


@pytest.mark.parametrize("dangling", [False, True])
def test_a_planted_lock_link_neither_truncates_the_victim_nor_creates_a_file(
        kb: Path, victim: Path, dangling: bool) -> None:
    target = victim.with_name("created-by-groove") if dangling else victim
    lock_path(kb / ".groove.db").symlink_to(target)
    with pytest.raises(UnsafeFile, match="symbolic link"), WriterLock(kb / ".groove.db").hold():
        pass
    assert victim.read_bytes() == SECRET
    assert not victim.with_name("created-by-groove").exists()


def _groove(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "groove", *args], cwd=cwd, text=True,
                          capture_output=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})


@pytest.mark.parametrize("kind", ["fifo", "directory", "immutable"])
def test_a_bad_lock_file_never_hangs_search_or_status_and_refuses_writers(tmp_path: Path,
                                                                          kb: Path,
                                                                          kind: str) -> None:
    """Searches and status answer at once (a warning names the file, unless only writing is
    impossible); a writer gets one clear `error:` line naming it; never a traceback."""
    (kb / "a.md").write_text("# A\n\nlaunch notes\n", encoding="utf-8")
    assert _groove("index", "--kb-path", str(kb), "-q", cwd=tmp_path).returncode == 0
    lock = lock_path(kb / ".groove.db")
    lock.unlink()
    if kind == "immutable":
        lock.write_text("")
        if subprocess.run(["chattr", "+i", str(lock)], capture_output=True).returncode:
            pytest.skip("chattr +i is not available here")
    else:
        plant(lock, kind)
    try:
        for args in (["search", "launch"], ["status"]):
            done = _groove(*args, "--kb-path", str(kb), cwd=tmp_path)
            assert done.returncode == 0, done.stderr
            assert "Traceback" not in done.stderr and "complete" in done.stdout
            if kind != "immutable":
                assert f"{lock} is " in done.stderr and "indexing is refused" in done.stderr
        done = _groove("index", "--kb-path", str(kb), "-q", cwd=tmp_path)
        assert done.returncode == 2, (done.stdout, done.stderr)
        assert "Traceback" not in done.stderr
        errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and str(lock) in errors[0], done.stderr
    finally:
        subprocess.run(["chattr", "-i", str(lock)], capture_output=True)


def test_a_full_disk_while_taking_the_lock_releases_it(kb: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import groove.store.writer_lock as module

    def full(fd: int, data: bytes, offset: int) -> int:
        raise OSError(28, "No space left on device")

    lock = WriterLock(kb / ".groove.db")
    with monkeypatch.context() as patched:
        patched.setattr(module.os, "pwrite", full)
        with pytest.raises(Exception, match="No space left on device") as info, lock.hold():
            pass
        assert "\n" not in str(info.value) and str(lock.path) in str(info.value)
    assert lock.holder() is None and not lock.held_here
    with WriterLock(kb / ".groove.db").hold(wait=False):  # another taker gets it at once
        pass
    with lock.hold(wait=False):  # and so does this one again (its mutex was released too)
        pass


# --------------------------------------------------------------------------- the other files


def test_a_planted_history_temporary_does_not_receive_the_history(kb: Path, victim: Path) -> None:
    history = kb / HISTORY_FILENAME
    history.with_name(history.name + ".tmp").symlink_to(victim)
    save_history(history, [{"metrics": {"mrr": 1.0}}], 10)
    assert victim.read_bytes() == SECRET
    assert load_history(history) == [{"metrics": {"mrr": 1.0}}]


@pytest.mark.parametrize("kind", ["link", "fifo"])
def test_a_planted_history_file_is_refused(kb: Path, victim: Path, kind: str) -> None:
    history = kb / HISTORY_FILENAME
    plant(history, kind, victim)
    with pytest.raises(UnsafeFile, match="eval history"):
        load_history(history)
    with pytest.raises(UnsafeFile, match="eval history"):
        save_history(history, [], 10)
    assert victim.read_bytes() == SECRET


def test_predictable_ann_temporaries_cannot_redirect_the_sidecar(kb: Path, victim: Path) -> None:
    pytest.importorskip("faiss")
    from groove.search.ann import AnnIndex, ann_paths

    db = kb / ".groove.db"
    for path in ann_paths(db):  # every name the old code would have used, for nearby pids
        for pid in range(max(1, os.getpid() - 50), os.getpid() + 50):
            Path(f"{path}.tmp{pid}").symlink_to(victim)
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(64, 8)).astype(np.float32)
    index = AnnIndex.trained(vectors, 64, "m", threads=1)
    index.updated(np.arange(64, dtype=np.int64), lambda a, b: vectors[a:b],
                  np.zeros(0, dtype=np.int64), threads=1)
    index.save(db)
    assert victim.read_bytes() == SECRET
    assert json.loads(ann_paths(db)[2].read_text())["model_id"] == "m"


def test_a_dangling_database_link_does_not_create_the_index_outside(kb: Path,
                                                                    victim: Path) -> None:
    outside = victim.with_name("planted.db")
    (kb / ".groove.db").symlink_to(outside)
    with pytest.raises(UnsafeFile, match="symbolic link") as info:
        open_store(kb / ".groove.db", create=True)
    assert str(kb / ".groove.db") in str(info.value)
    assert not outside.exists()


def test_a_planted_wal_link_is_refused(kb: Path, victim: Path) -> None:
    open_store(kb / ".groove.db", create=True).close()
    Path(f"{kb / '.groove.db'}-wal").symlink_to(victim)
    with pytest.raises(UnsafeFile, match="-wal"):
        open_store(kb / ".groove.db", create=False)
    assert victim.read_bytes() == SECRET

"""Logging: GROOVE_LOG sets the level; GrooveSeek's RUST_LOG is honoured when it is unset."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from groove._logging import level_from_rust_log


@pytest.mark.parametrize(("value", "level"), [
    ("debug", "debug"), ("trace", "debug"), ("warn", "warning"), ("off", "critical"),
    ("grooveseek=debug", "debug"), ("info,grooveseek=debug", "debug"),
    ("grooveseek=debug,info", "debug"), ("grooveseek::server=warn", "warning"),
    ("hyper=debug", None), ("error,hyper=debug", "error"), ("nonsense", None), ("", None),
])
def test_rust_log_directives(value, level):
    assert level_from_rust_log(value) == level


@given(st.lists(st.sampled_from(["hyper=debug", "ort=trace", "tokio=info", "info", "warn"]),
                max_size=4), st.sampled_from(["trace", "debug", "info", "warn", "error"]))
def test_our_own_target_wins_wherever_it_is(others, level):
    directives = [*others, f"grooveseek={level}"]
    for rotation in range(len(directives)):
        value = ",".join(directives[rotation:] + directives[:rotation])
        assert level_from_rust_log(value) == level_from_rust_log(level)


def _status(tmp_path, **env):
    kb = tmp_path / "kb"
    kb.mkdir(exist_ok=True)
    clean = {k: v for k, v in os.environ.items() if k not in ("GROOVE_LOG", "RUST_LOG")}
    return subprocess.run([sys.executable, "-m", "groove", "status", "--kb-path", str(kb)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**clean, **env})


def test_rust_log_is_read_with_one_note_and_groove_log_wins(tmp_path):
    quiet = _status(tmp_path, RUST_LOG="error")
    assert "INFO " not in quiet.stderr
    assert quiet.stderr.count("note: RUST_LOG=error is GrooveSeek's setting") == 1
    chatty = _status(tmp_path, RUST_LOG="hyper=debug,grooveseek=debug")
    assert "DEBUG " in chatty.stderr or "INFO " in chatty.stderr
    assert chatty.stderr.count("read as GROOVE_LOG=debug") == 1
    both = _status(tmp_path, RUST_LOG="error", GROOVE_LOG="info")
    assert "note: RUST_LOG" not in both.stderr and "INFO " in both.stderr


@given(st.text())
def test_no_control_character_reaches_a_log_line(text):
    """The guarantee: whatever text a message carries, the line holds no control character
    but tab and newline, and printable text is left alone."""
    import logging

    from groove._logging import _EscapingFormatter, escape_controls

    line = _EscapingFormatter("%(message)s").format(
        logging.LogRecord("groove", logging.WARNING, __file__, 1, "got %s", (text,), None))
    assert not any((ord(c) < 32 and c not in "\t\n") or 0x7F <= ord(c) <= 0x9F for c in line)
    if text.isprintable():
        assert escape_controls(text) == text


def test_an_unknown_groove_log_level_is_named_once(tmp_path):
    result = _status(tmp_path, GROOVE_LOG="verbose")
    assert result.stderr.count("GROOVE_LOG=verbose is not a level; accepted: debug, info, note, "
                               "warning, error, critical (using note)") == 1
    assert "INFO " not in result.stderr  # the default level applies
    assert "is not a level" not in _status(tmp_path, GROOVE_LOG="warning").stderr

"""`groove index` and `groove search` as a new user meets them: real processes, piped, Ctrl-C.

Each test runs ``python -m groove`` with stdout and stderr piped (as scripts
and tools run it) and reads what a person would read.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

WORDS = ["index", "search", "vector", "chunk", "heading", "notes", "fusion", "rank", "query",
         "token", "model", "window", "document", "batch", "resume", "interrupt", "progress",
         "answer"]


def _folder(root: Path, documents: int) -> Path:
    """Notes of 2-6 sections each, enough that embedding them takes a while."""
    for d in range(documents):
        sections = []
        for s in range(2 + d % 5):
            body = " ".join(WORDS[(d * 7 + s * 3 + i) % len(WORDS)] for i in range(60 + 25 * s))
            sections.append(f"## Part {s} of note {d}\n\n{body}\n")
        (root / f"note-{d:03}.md").write_text(f"# Note {d}\n\n" + "\n".join(sections))
    return root


def _groove(*args: str, cwd: Path) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k != "GROOVE_LOG"}
    # A suite started in the background of a non-interactive shell inherits SIGINT
    # ignored; the child gets the default back, as a run from a terminal has it.
    return subprocess.Popen([sys.executable, "-m", "groove", *args], cwd=cwd, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


PERCENT = re.compile(r"^Embedding: (\d+)/(\d+) documents, (\d+)/(\d+) tokens \((\d+)%\), "
                     r"(\d+) tokens/s, ETA ")


@pytest.mark.slow
def test_ctrl_c_keeps_what_was_embedded_says_so_and_search_answers_at_once(tmp_path):
    kb = tmp_path / "kb"
    kb.mkdir()
    _folder(kb, 40)
    build = _groove("index", "--kb-path", str(kb), cwd=tmp_path)
    assert build.stderr is not None
    lines: list[str] = []
    seen = 0
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        line = build.stderr.readline()
        if not line:
            break
        lines.append(line.rstrip("\n"))
        match = PERCENT.match(line)
        if match and int(match.group(5)) >= 25:
            seen = int(match.group(5))
            build.send_signal(signal.SIGINT)  # Ctrl-C
            break
    assert seen, "no Embedding: progress line reached 25 %:\n" + "\n".join(lines)
    # plain (non-TTY) runs show documents, tokens, rate and ETA from the first batch on
    assert PERCENT.match(next(x for x in lines if x.startswith("Embedding: ")))
    out, err = build.communicate(timeout=120)
    assert build.returncode == 130, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("error: interrupted; kept 40 document(s)"), err  # on its own line
    assert f"run `groove index --kb-path {kb}` to finish" in last
    kept, total = map(int, re.search(r"\((\d+) of (\d+) chunks\)", last).groups())
    assert kept / total >= (seen - 5) / 100, last  # whole documents kept all along the run

    search = _groove("search", "index resume", "--kb-path", str(kb), cwd=tmp_path)
    out, err = search.communicate(timeout=300)
    assert search.returncode == 0, err
    answer = json.loads(out)
    assert answer["results"] and answer["index"]["state"] == "incomplete"
    assert answer["index"]["chunks_embedded"] == kept  # answered at once: nothing embedded
    assert "note: the index is incomplete" in err and "groove index" in err
    assert "INFO" not in err and "groove.toml" not in err  # quiet by default

    finish = _groove("index", "--kb-path", str(kb), "--quiet", "--json", cwd=tmp_path)
    out, err = finish.communicate(timeout=900)
    assert finish.returncode == 0, err
    assert json.loads(out)["chunks_embedded"] == total - kept  # resumed: nothing twice


def test_the_progress_bar_on_a_terminal_shows_rate_and_eta(tmp_path):
    """`--progress` on a real terminal (a pty): the embedding bar carries documents, rate, ETA."""
    import pty
    import shutil

    kb = tmp_path / "kb"
    shutil.copytree(Path(__file__).resolve().parents[2] / "examples" / "kb", kb)
    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "GROOVE_LOG"} | {"COLUMNS": "200"}
    proc = subprocess.Popen([sys.executable, "-m", "groove", "index", "--kb-path", str(kb),
                             "--progress"], cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=follower)
    os.close(follower)
    screen = b""
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # the pty closes when the process exits
            break
        if not data:
            break
        screen += data
    os.close(leader)
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 0
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen.decode("utf-8", "replace"))
    assert "embedding (tokens)" in text
    assert re.search(r"6/6 documents, \d+ tokens/s, ETA \d+ s", text), text[-2000:]
    assert "-:--:--" not in text
    assert out.startswith(b"indexed 6,")


def test_index_help_names_no_argument_it_does_not_take():
    result = subprocess.run([sys.executable, "-m", "groove", "index", "--help"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0
    assert "KB_PATH" not in result.stdout and "--kb-path" in result.stdout


@pytest.mark.slow
def test_a_one_line_minified_file_costs_a_bounded_embedding_and_hits_say_they_are_cut(
        tmp_path):
    """A 120 kB single-line ``min.js`` (the issue's 12.5 MB at a test's scale): cut by
    characters into at most ``max_chunks_per_file`` chunks that keep every byte, each
    embedded from its first characters only, and a hit's content cut with a note."""
    from groove.config import load_config
    from groove.kb import KnowledgeBase
    from groove.models import HIT_CONTENT_MAX_CHARS, PASSAGE_MAX_CHARS

    kb = tmp_path / "kb"
    kb.mkdir()
    line = ";".join(f"var v{i}=filter(map(x{i}),{i})" for i in range(5000))
    (kb / "min.js").write_text(line + "\n", encoding="utf-8")
    config = tmp_path / "groove.toml"
    config.write_text(f'kb_path = "{kb.as_posix()}"\nmax_chunks_per_file = 4\n\n'
                      '[parsers]\nenabled = ["javascript"]\n', encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "groove", "index", "--config", str(config)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    estimate = int(re.search(r"about (\d+) tokens", done.stderr).group(1))
    assert estimate <= 4 * (PASSAGE_MAX_CHARS // 4 + 50)  # not len(line) / 4 = 37k tokens
    knowledge = KnowledgeBase(load_config(config_path=config))
    try:
        doc = knowledge.store.get_document("min.js")
        chunks = knowledge.store.document_chunks(doc.id)
    finally:
        knowledge.close()
    assert 1 < len(chunks) <= 4 and "".join(c.content for c in chunks) == line
    found = subprocess.run([sys.executable, "-m", "groove", "search", "--config", str(config),
                            "--format", "json", "filter map"], capture_output=True, text=True,
                           timeout=300)
    assert found.returncode == 0, found.stderr
    hit = json.loads(found.stdout)["results"][0]
    assert len(hit["content"]) == HIT_CONTENT_MAX_CHARS
    assert hit["content_cut"].startswith(f"content is cut to its first {HIT_CONTENT_MAX_CHARS} of ")


@pytest.mark.slow
def test_serve_stopped_while_it_builds_in_the_background_exits_cleanly(tmp_path):
    """Ctrl-C while the background build is inside the model: the process leaves with
    status 130 and one line, not an abort from the runtime the model runs on."""
    from server._helpers import free_port

    kb = tmp_path / "kb"
    kb.mkdir()
    _folder(kb, 160)  # about a minute of embedding on two cores: a status poll sees it midway
    serving = _groove("serve", "--kb-path", str(kb), "--transport", "http", "--port",
                      str(free_port()), "--no-watch", cwd=tmp_path)
    assert serving.stderr is not None
    lines: list[str] = []
    while not any("serving MCP" in line for line in lines):
        line = serving.stderr.readline()
        assert line, "serve stopped before it listened:\n" + "".join(lines)
        lines.append(line)
    embedded = 0
    deadline = time.monotonic() + 300
    while embedded == 0 and time.monotonic() < deadline:  # the build is embedding now
        status = subprocess.run([sys.executable, "-m", "groove", "status", "--kb-path", str(kb),
                                 "--format", "json"], capture_output=True, text=True, check=True)
        index = json.loads(status.stdout)["index"]
        embedded, total = index["chunks_embedded"], index["chunks"]
    assert 0 < embedded < total, index  # a Ctrl-C now lands while the model runs
    serving.send_signal(signal.SIGINT)
    _, err = serving.communicate(timeout=120)
    assert serving.returncode == 130, err
    assert "terminate called" not in err and "onnxruntime" not in err, err
    assert err.strip().splitlines()[-1] == "error: interrupted"

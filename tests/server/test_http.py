"""Streamable HTTP end to end: a real `groove serve --transport http` and real clients."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import time
from typing import Any

import httpx
import pytest
from _helpers import SECRET, free_port, groove_cmd, write_config
from mcp import Client
from mcp.shared.exceptions import MCPError

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "raw-test", "version": "1"}}}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def text_of(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def call(url: str, tool: str, args: dict[str, Any], **client_kw: Any) -> Any:
    async with Client(url, **client_kw) as client:
        return await client.call_tool(tool, args)


def no_union(schema: Any) -> bool:
    if isinstance(schema, dict):
        return not ({"anyOf", "oneOf"} & schema.keys()) and all(no_union(v) for v in schema.values())
    if isinstance(schema, list):
        return all(no_union(v) for v in schema)
    return True


# --- listing and calling everything ------------------------------------------------------------

def test_lists_eight_tools_without_unions_four_prompts_and_topic_groups(http_server):
    async def go():
        async with Client(http_server.mcp_url) as client:
            tools = (await client.list_tools()).tools
            prompts = (await client.list_prompts()).prompts
            resources = (await client.list_resources()).resources
            templates = (await client.list_resource_templates()).resource_templates
        return tools, prompts, resources, templates

    tools, prompts, resources, templates = run(go())
    assert {t.name for t in tools} == {"search", "get_document", "multi_get", "list_topics",
                                      "get_connection_graph", "get_best_practice", "rebuild_index",
                                      "links"}
    assert all(no_union(t.input_schema) for t in tools)
    search = next(t for t in tools if t.name == "search").input_schema["properties"]
    assert set(search) == {"query", "limit", "category", "topic", "rerank", "min_quality",
                           "include_low_quality", "path_globs", "tags_any", "tags_all", "date_from",
                           "date_to", "min_confidence_ratio", "mmr", "mmr_lambda",
                           "mmr_same_doc_penalty", "parent_retriever", "fusion",
                           "fusion_vector_weight", "max_chunks_per_document", "all_language_spans",
                           "fields", "fields_not", "languages", "symbol_kind", "min_score",
                           "explain"}
    graph = next(t for t in tools if t.name == "get_connection_graph").input_schema["properties"]
    assert graph["depth"]["maximum"] == 3 and graph["fan_out"]["maximum"] == 20
    assert set(graph["seed_strategy"]["enum"]) == {"all_chunks", "all-chunks", "centroid"}
    assert {p.name for p in prompts} == {"summarize_topic", "deep_dive", "whats_new", "find_gaps"}
    uris = {str(r.uri) for r in resources}
    assert {"kb://topic/guides", "kb://topic/guides/rust", "kb://topic/notes"} <= uris
    assert not any(u.startswith("kb://doc/") for u in uris), "list shows groups, not documents"
    assert not any("link.md" in u or "hard.md" in u for u in uris)
    assert {t.uri_template for t in templates} >= {"kb://doc/{+path}"}


def test_search_returns_hits_with_percent_encoded_uris_and_spans(http_server):
    result = run(call(http_server.mcp_url, "search", {"query": "bootstrap script", "limit": 3}))
    assert not result.is_error, text_of(result)
    body = result.structured_content
    assert body["results"][0]["path"] == "guides/setup.md"
    assert body["results"][0]["uri"] == "kb://doc/guides/setup.md"
    assert "match_spans" in body["results"][0]
    assert isinstance(body["low_confidence"], bool)


def test_search_accepts_every_parameter(http_server):
    args = {"query": "executor futures", "limit": 2, "category": "guide", "topic": "rust",
            "rerank": False, "min_quality": 0.0, "include_low_quality": True,
            "path_globs": ["guides/**"], "tags_any": ["rust"], "tags_all": ["async"],
            "date_from": "2024-01-01", "date_to": "2024-12-31", "min_confidence_ratio": 0,
            "mmr": True, "mmr_lambda": 0.5, "mmr_same_doc_penalty": 0.1,
            "parent_retriever": True}
    result = run(call(http_server.mcp_url, "search", args))
    assert not result.is_error, text_of(result)
    body = result.structured_content
    assert [h["path"] for h in body["results"]] and {h["path"] for h in body["results"]} == {
        "guides/rust/async.md"}
    assert body["filter_applied"]["category"] == "guide"


def test_bad_search_arguments_are_tool_errors(http_server):
    for args in ({"query": "x" * 2000}, {"query": "setup", "limit": 0},
                 {"query": "setup", "path_globs": []}, {"query": "a\x00b" + "\"" * 500}):
        result = run(call(http_server.mcp_url, "search", args))
        if result.is_error:
            assert "Traceback" not in text_of(result)
    assert run(call(http_server.mcp_url, "search", {"query": "setup", "limit": 0})).is_error
    assert http_server.alive()


def test_get_document_list_topics_best_practice_graph(http_server):
    async def go():
        async with Client(http_server.mcp_url) as client:
            return (await client.call_tool("get_document", {"path": "guides/setup.md"}),
                    await client.call_tool("list_topics", {}),
                    await client.call_tool("get_best_practice", {"target": "logging"}),
                    await client.call_tool("get_best_practice",
                                           {"target": "logging", "category": "Levels"}),
                    await client.call_tool("get_connection_graph",
                                           {"start": "guides/setup.md", "min_similarity": 0.0}))

    doc, topics, bp, section, graph = run(go())
    for r in (doc, topics, bp, section, graph):
        assert not r.is_error, text_of(r)
    assert "bootstrap script" in doc.structured_content["text"]
    assert doc.structured_content["truncated"] is False
    assert doc.structured_content["tags"] == ["install", "onboarding"]
    cats = {c["name"]: c["documents"] for c in topics.structured_content["categories"]}
    assert cats["guide"] == 2
    tree = {c["segment"]: c for c in topics.structured_content["children"]}
    assert tree["guides"]["file_count"] == 2
    assert tree["guides"]["children"] == [{"segment": "rust", "file_count": 1, "children": []}]
    assert "README.md" not in tree and all(c["children"] == [] for c in tree["notes"]["children"])
    assert "## Destinations" in bp.structured_content["text"]
    assert section.structured_content["text"].startswith("## Levels")
    assert "Destinations" not in section.structured_content["text"]
    nodes = graph.structured_content["nodes"]
    assert nodes and nodes[0]["path"] == "guides/setup.md"


def test_best_practice_missing_section_and_target_are_clear_errors(http_server):
    missing = run(call(http_server.mcp_url, "get_best_practice", {"target": "nothing-here"}))
    assert missing.is_error and "no best-practice document for 'nothing-here'" in text_of(missing)
    assert "best-practices/" not in text_of(missing)  # the probed paths stay private
    section = run(call(http_server.mcp_url, "get_best_practice",
                       {"target": "logging", "category": "Nope"}))
    assert section.is_error and "Levels" in text_of(section)


def test_rebuild_index_runs_one_at_a_time(http_server):
    async def go():
        return await asyncio.gather(
            call(http_server.mcp_url, "rebuild_index", {"force": True}),
            call(http_server.mcp_url, "rebuild_index", {"force": True}),
        )

    results = run(go())
    ok = [r for r in results if not r.is_error]
    refused = [r for r in results if r.is_error]
    assert len(ok) == 1 and len(refused) == 1, [text_of(r) for r in results]
    assert "already running (for " in text_of(refused[0])
    assert ok[0].structured_content["indexed"] + ok[0].structured_content["updated"] >= 6
    assert not run(call(http_server.mcp_url, "rebuild_index", {})).is_error


def test_prompts_tell_the_model_to_cite_flag_and_admit_silence(http_server):
    async def go():
        async with Client(http_server.mcp_url) as client:
            return [await client.get_prompt("summarize_topic", {"topic": "rust"}),
                    await client.get_prompt("deep_dive", {"question": "how to cancel?"}),
                    await client.get_prompt("whats_new", {"since": "2024-01-01"}),
                    await client.get_prompt("whats_new", {}),
                    await client.get_prompt("find_gaps", {})]

    for prompt in run(go()):
        text = prompt.messages[0].content.text
        assert "cite" in text and "low_confidence" in text and "does not cover" in text


def test_resources_read_topic_and_documents(http_server):
    async def go():
        async with Client(http_server.mcp_url) as client:
            return (await client.read_resource("kb://topic/guides"),
                    await client.read_resource("kb://doc/guides/setup.md"),
                    await client.read_resource("kb://doc/guides%2Frust%2Fasync.md"),
                    await client.read_resource("kb://topic/"),
                    (await client.list_resources()).resources)

    topic, doc, encoded, top, listed = run(go())
    listing = topic.contents[0].text
    assert "kb://doc/guides/setup.md" in listing and "kb://doc/guides/rust/async.md" in listing
    assert "notes/" not in listing
    assert "bootstrap script" in doc.contents[0].text
    assert "Tokio" in encoded.contents[0].text
    assert "kb://doc/README.md" in top.contents[0].text and "guides/" not in top.contents[0].text
    # groups only: a top-level document is listed under the root group, not as a topic of its own
    root = next(r for r in listed if r.uri == "kb://topic/")
    assert root.name == "topic: (top level)" and "1 document(s) at the top level" in root.description
    assert not any(r.uri.endswith(".md") for r in listed)


# --- refusals ----------------------------------------------------------------------------------

def _bad_paths(server_kb) -> list[str]:
    return ["../outside/secret.md", "%2e%2e%2foutside/secret.md", "guides/../../outside/secret.md",
            str(server_kb.outside / "secret.md"), "/etc/passwd", "notes/\x00.md",
            "notes/link.md", "notes/hard.md", "notes/binary.exe", "..\\outside\\secret.md"]


def test_path_tools_refuse_traversal_links_and_unregistered_extensions(http_server, server_kb):
    async def go():
        out = []
        async with Client(http_server.mcp_url) as client:
            for bad in _bad_paths(server_kb):
                out.append((bad, await client.call_tool("get_document", {"path": bad})))
                out.append((bad, await client.call_tool("get_connection_graph", {"start": bad})))
                if not bad.startswith("notes/"):  # exclusions are filters: only the lexical gate applies
                    out.append((bad, await client.call_tool(
                        "get_connection_graph", {"start": "guides/setup.md", "exclude_paths": [bad]})))
            for bad in ("../outside/secret", "%2e%2e%2foutside%2fsecret", "/etc/passwd", "a\x00"):
                out.append((bad, await client.call_tool("get_best_practice", {"target": bad})))
        return out

    for bad, result in run(go()):
        text = text_of(result)
        assert result.is_error, f"{bad!r} was accepted: {text[:200]}"
        assert SECRET not in text and "Traceback" not in text
    assert http_server.alive()


def test_refusal_messages_say_why(http_server):
    async def go():
        async with Client(http_server.mcp_url) as client:
            return {bad: text_of(await client.call_tool("get_document", {"path": bad}))
                    for bad in ("%2e%2e%2fx.md", "/etc/passwd.md", "notes/link.md",
                                "notes/hard.md", "notes/binary.exe")}

    msgs = run(go())
    assert "'..'" in msgs["%2e%2e%2fx.md"]
    assert "absolute" in msgs["/etc/passwd.md"]
    assert "symbolic link" in msgs["notes/link.md"]
    assert "hard link" in msgs["notes/hard.md"]
    assert "extension" in msgs["notes/binary.exe"]


def test_kb_uris_refuse_traversal_and_links(http_server):
    bad_uris = ["kb://doc/../outside/secret.md", "kb://doc/%2e%2e%2foutside%2fsecret.md",
                "kb://doc/%2E%2E/outside/secret.md", "kb://doc//etc/passwd",
                "kb://doc/%2Fetc%2Fpasswd", "kb://doc/notes/%00.md", "kb://doc/notes/link.md",
                "kb://doc/notes/hard.md", "kb://doc/notes/binary.exe", "kb://topic/..",
                "kb://topic/%2e%2e%2foutside", "kb://doc/guides/none.md"]

    async def go():
        out = []
        async with Client(http_server.mcp_url) as client:
            for uri in bad_uris:
                try:
                    result = await client.read_resource(uri)
                    out.append((uri, None, result.contents[0].text))
                except MCPError as exc:
                    out.append((uri, str(exc), None))
        return out

    for uri, error, text in run(go()):
        assert error is not None, f"{uri} was served: {text[:200]}"
        assert SECRET not in error and "Traceback" not in error
    assert http_server.alive()


# --- the HTTP gates ----------------------------------------------------------------------------

def _post(server, body: Any = INIT, headers: dict[str, str] | None = None, **kw: Any) -> httpx.Response:
    data = body if isinstance(body, (bytes, str)) else json.dumps(body)
    return httpx.post(server.mcp_url, content=data, headers={**MCP_HEADERS, **(headers or {})},
                      timeout=10, **kw)


def _delete(server, response: httpx.Response) -> None:
    sid = response.headers.get("mcp-session-id")
    if sid:
        httpx.delete(server.mcp_url, headers={"mcp-session-id": sid})


def test_host_and_origin_gate(http_server):
    port = http_server.port
    assert _post(http_server, headers={"Host": "evil.example:80"}).status_code == 403
    assert _post(http_server, headers={"Host": f"evil.example:{port}"}).status_code == 403
    assert _post(http_server, headers={"Origin": "http://evil.example"}).status_code == 403
    assert _post(http_server, headers={"Origin": "http://127.0.0.1:1"}).status_code == 403
    assert _post(http_server, headers={"Host": f"EVIL.example:{port}"}).status_code == 403
    for good in ({}, {"Origin": f"http://127.0.0.1:{port}"}, {"Origin": f"http://localhost:{port}"},
                 {"Host": f"localhost:{port}"}, {"Host": f"LOCALHOST:{port}"},
                 {"Host": f"LocalHost:{port}", "Origin": f"HTTP://LOCALHOST:{port}"}):
        response = _post(http_server, headers=good)
        assert response.status_code == 200, (good, response.text)
        _delete(http_server, response)
    assert http_server.alive()


def test_oversized_body_is_413_and_server_keeps_serving(http_server):
    big = json.dumps({**INIT, "params": {**INIT["params"], "pad": "x" * (1024 * 1024)}})
    assert _post(http_server, big).status_code == 413
    assert httpx.post(http_server.base + "/healthz", content=b"x" * (1024 * 1024 + 1)).status_code == 413
    assert http_server.alive()


def test_nosniff_everywhere_csp_on_ui(http_server):
    responses = [httpx.get(http_server.base + p) for p in ("/healthz", "/ui", "/ui/ui.js",
                                                           "/ui/ui.css", "/api/admin/status",
                                                           "/nope")]
    responses += [_post(http_server), _post(http_server, headers={"Host": "evil.example"})]
    for response in responses:
        assert response.headers.get("x-content-type-options") == "nosniff", response.url
    _delete(http_server, responses[-2])
    ui = responses[1]
    assert ui.status_code == 200 and "text/html" in ui.headers["content-type"]
    csp = ui.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src 'self'" in csp and "connect-src 'self'" in csp
    assert "http" not in ui.text.replace("http-equiv", ""), "no external references"


def test_admin_status_json(http_server, server_kb):
    status = httpx.get(http_server.base + "/api/admin/status").json()
    assert status["documents"] == 6
    assert status["chunks"] >= 5
    # GrooveSeek's objects (what its tray polled), then groove's own fields
    daemon, indexing, watcher, kb = (status[k] for k in ("daemon", "indexing", "watcher", "kb"))
    assert set(daemon) == {"version", "pid", "uptime_secs", "started_at"}
    assert daemon["pid"] == status["pid"] and isinstance(daemon["uptime_secs"], int)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", daemon["started_at"])
    assert set(indexing) == {"active", "started_at", "progress"}
    assert indexing["active"] is False and indexing["progress"] is None
    assert {"active", "debounce_ms"} <= set(watcher) and watcher["state"] in ("watching", "off")
    assert watcher["active"] is (watcher["state"] == "watching")
    assert kb == {"documents": 6, "chunks": status["chunks"], "model": status["model"]}
    assert status["config_source"] == "Explicit"  # the test server is given --config
    assert status["version"] and status["uptime_s"] >= 0
    # the same shape as `groove status --format json`, without this machine's paths
    assert {"kb_path", "index_path", "model", "writer", "index"} <= set(status)
    assert status["index"]["state"] == "complete" and status["index"]["documents"] == 6
    assert status["index_path"] == ".groove.db" and status["kb_path"] == server_kb.kb.name
    assert str(server_kb.kb.parent) not in json.dumps(status)
    assert httpx.get(http_server.base + "/api/admin/status",
                     headers={"Host": "evil.example"}).status_code == 403


def test_session_cap_is_429_with_retry_after(server_kb, server_factory, tmp_path):
    config = write_config(tmp_path / "capped.toml", server_kb.kb, max_sessions=2)
    server = server_factory(config, "--no-watch")
    first, second = _post(server), _post(server)
    assert first.status_code == second.status_code == 200
    third = _post(server)
    assert third.status_code == 429
    assert int(third.headers["retry-after"]) > 0
    sid = first.headers["mcp-session-id"]
    listed = _post(server, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                   headers={"mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"})
    assert listed.status_code == 200 and "get_document" in listed.text
    _delete(server, first)
    assert _post(server).status_code == 200
    assert server.alive()


def test_busy_port_is_a_clear_start_error(http_server, server_kb):
    proc = subprocess.run(groove_cmd("serve", "--config", str(server_kb.config), "--transport",
                                     "http", "--port", str(http_server.port), "--no-watch"),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert f"port {http_server.port} is in use — is another groove running?" in proc.stderr
    assert proc.stdout == ""


def test_non_loopback_bind_needs_i_know(server_kb):
    proc = subprocess.run(groove_cmd("serve", "--config", str(server_kb.config), "--transport",
                                     "http", "--bind", f"0.0.0.0:{free_port()}", "--no-watch"),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "--i-know" in proc.stderr


# --- loopback-only pages (in-process: a non-loopback peer cannot be faked over a socket) -------

@pytest.mark.parametrize(("host", "expected"), [
    ("127.0.0.1", True), ("127.8.9.10", True), ("::1", True), ("::ffff:127.0.0.1", True),
    ("10.0.0.5", False), ("192.168.1.2", False), ("::ffff:10.0.0.5", False), ("fe80::1", False),
    ("localhost", False), ("", False), (None, False), ("not-an-ip", False),
])
def test_loopback_peer_predicate(host, expected):
    from groove.server.http import is_loopback_peer

    assert is_loopback_peer(host) is expected


def test_ui_and_status_refuse_non_loopback_peers(server_kb, make_kb):
    from starlette.testclient import TestClient

    from groove.server.http import build_http_app

    kb = make_kb(server_kb.kb)
    app = build_http_app(kb)
    base = "http://127.0.0.1:3100"
    remote = TestClient(app, base_url=base, client=("192.0.2.7", 50000))
    local = TestClient(app, base_url=base, client=("127.0.0.1", 50000))
    for path in ("/ui", "/ui/ui.js", "/api/admin/status"):
        assert remote.get(path).status_code == 403
        assert local.get(path).status_code == 200
    assert remote.get("/healthz").status_code == 200  # public by default
    # The bare address, as a person types it into a browser, leads to the page.
    assert remote.get("/", follow_redirects=False).status_code == 403
    landed = local.get("/", follow_redirects=False)
    assert landed.status_code == 307 and landed.headers["location"] == "/ui"
    assert local.get("/").text == local.get("/ui").text


def test_healthz_can_be_loopback_only(server_kb, make_kb):
    from starlette.testclient import TestClient

    from groove.server.http import build_http_app

    kb = make_kb(server_kb.kb, transport={"http": {"healthz_public": False}})
    app = build_http_app(kb)
    base = "http://127.0.0.1:3100"
    assert TestClient(app, base_url=base, client=("192.0.2.7", 1)).get("/healthz").status_code == 403
    assert TestClient(app, base_url=base, client=("127.0.0.1", 1)).get("/healthz").status_code == 200


def test_concurrent_clients_search_while_the_watcher_reindexes(tmp_path, server_factory):
    """16 clients search while one document flips between two versions: no errors, no torn hits."""
    import shutil
    import threading

    from _helpers import FIXTURE_KB

    kb = tmp_path / "kb"
    shutil.copytree(FIXTURE_KB, kb)
    versions = {word: f"---\ntitle: Torn {word}\n---\n# Flip\n\n" + f"{word}marker " * 40 + "\n"
                for word in ("alpha", "beta")}
    target = kb / "flip.md"
    target.write_text(versions["alpha"], encoding="utf-8")
    config = write_config(tmp_path / "groove.toml", kb, extra="\n[watch]\ndebounce_ms = 20\n")
    server = server_factory(config)
    stop = threading.Event()

    def flip() -> None:
        i = 0
        while not stop.is_set():
            i += 1
            target.write_text(versions["beta" if i % 2 else "alpha"], encoding="utf-8")
            stop.wait(0.15)

    deadline = time.monotonic() + 60

    async def client(n: int) -> list[Any]:
        # Keep searching until the watcher has re-indexed at least twice while
        # searches were in flight (bounded by the deadline), so the overlap the
        # test is about really happens however fast one search is.
        results: list[Any] = []
        async with Client(server.mcp_url) as c:
            while len(results) < 3 or (server.stderr().count("sync: ") < 2
                                       and time.monotonic() < deadline):
                results.append(await c.call_tool("search", {"query": "marker flip", "limit": 3}))
        return results

    async def go() -> list[list[Any]]:
        return await asyncio.gather(*(client(n) for n in range(16)))

    flipper = threading.Thread(target=flip)
    flipper.start()
    try:
        batches = run(go())
    finally:
        stop.set()
        flipper.join()
    seen_titles = set()
    for result in (r for batch in batches for r in batch):
        assert not result.is_error, text_of(result)
        for hit in result.structured_content["results"]:
            if hit["path"] != "flip.md":
                continue
            word = hit["title"].removeprefix("Torn ")
            other = "beta" if word == "alpha" else "alpha"
            assert f"{word}marker" in hit["content"] and f"{other}marker" not in hit["content"]
            seen_titles.add(hit["title"])
    assert seen_titles, "the flipping document was never found"
    assert server.stderr().count("sync: ") >= 2, "the watcher re-indexed during the searches"
    status = httpx.get(server.base + "/api/admin/status").json()
    assert status["watcher"]["state"] == "watching" and status["watcher"]["active"] is True


def test_host_names_are_compared_without_case():
    from hypothesis import given
    from hypothesis import strategies as st

    from groove.server.http import lowercase_names

    @given(st.sampled_from(["localhost", "127.0.0.1", "notes.lan"]), st.data())
    def check(name, data):
        shouted = "".join(c.upper() if data.draw(st.booleans()) else c for c in name)
        headers = [(b"host", f"{shouted}:3100".encode()), (b"origin", f"HTTP://{shouted}".encode()),
                   (b"x-other", b"KEEP")]
        assert lowercase_names(headers) == [(b"host", f"{name}:3100".encode()),
                                            (b"origin", f"http://{name}".encode()),
                                            (b"x-other", b"KEEP")]

    check()


def test_a_fifo_at_the_lock_file_never_hangs_a_running_server(server_kb, server_factory,
                                                              tmp_path):
    """Searches and /api/admin/status answer at once; rebuild_index is refused in one line."""
    import os
    import shutil
    from pathlib import Path

    from mcp import Client

    kb = Path(shutil.copytree(server_kb.kb, tmp_path / "kb", symlinks=True))
    lock = kb / ".groove.db.lock"
    lock.unlink(missing_ok=True)
    os.mkfifo(lock)
    server = server_factory(write_config(tmp_path / "groove.toml", kb), "--no-watch")
    status = httpx.get(server.base + "/api/admin/status", timeout=30)
    assert status.status_code == 200 and status.json()["kb"]["documents"] > 0

    async def calls():
        async with Client(server.base + "/mcp") as client:
            return (await client.call_tool("search", {"query": "setup"}),
                    await client.call_tool("rebuild_index", {}))

    found, rebuilt = asyncio.run(calls())
    assert not found.is_error
    text = "".join(getattr(c, "text", "") for c in rebuilt.content)
    assert rebuilt.is_error and f"{lock} is a FIFO" in text and "Traceback" not in text
    assert "Traceback" not in server.stderr()


def test_fifty_bad_hosts_make_one_log_line_quoting_nothing_they_sent(server_kb, server_factory):
    """A fresh server (its own log): 50 refusals, each with a distinct hostile value."""
    server = server_factory(server_kb.config)
    for i in range(50):
        response = _post(server, headers={"Host": f"evil-{i}.attacker-bytes.example:1"})
        assert response.status_code == 403
    assert _post(server, headers={"Origin": "http://origin-bytes.example"}).status_code == 403
    assert server.alive()
    log = server.stderr()
    assert "attacker-bytes" not in log and "origin-bytes" not in log
    lines = [line for line in log.splitlines() if "refused requests outside" in line]
    assert len(lines) == 1 and "1 with a Host header" in lines[0]


def test_refusal_lines_are_at_most_one_a_minute_and_count_what_they_hid(caplog):
    import logging

    from groove.server.refusals import RefusalLog

    now = [0.0]
    gate = RefusalLog(clock=lambda: now[0])
    sdk = logging.getLogger("test.sdk.gate")
    sdk.addFilter(gate)
    try:
        with caplog.at_level(logging.WARNING):
            for second in range(0, 150):
                now[0] = float(second)
                sdk.warning("Invalid Host header: %s", f"x{second}")
    finally:
        sdk.removeFilter(gate)
    said = [r.getMessage() for r in caplog.records if "refused requests" in r.getMessage()]
    assert [s.split(": ", 1)[1].split(" (")[0] for s in said] == [
        "1 with a Host header", "60 with a Host header", "60 with a Host header"]
    assert not any("x1" in r.getMessage() for r in caplog.records)

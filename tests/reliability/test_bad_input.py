"""SPEC §13 bad input, on every surface: the CLI, every path/query-taking MCP tool and URI over a
real HTTP server, and the raw HTTP endpoints. Nothing crashes, no traceback leaks, and the server
answers a good search after every bad call."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from _helpers import (
    SECRET,
    RunningServer,
    ServerKB,
    build_hostile_kb,
    start_http_server,
    stop_server,
)
from click.testing import CliRunner
from mcp import Client
from mcp.shared.exceptions import MCPError

from groove.cli import cli
from groove.cli.commands import load_all

load_all()

GOOD_QUERY = {"query": "bootstrap script", "limit": 2}

# (id, query, refused?) — refused queries are §5 "query" bound violations; the rest are legal
# queries that must simply work.
QUERIES = [
    ("oversized", "x" * 1025, True),
    ("oversized-multibyte", "検" * 342, True),
    ("empty", "", True),
    ("whitespace", " \t\n\u3000 ", True),
    ("lone-surrogate", "\ud800", True),
    ("lone-low-surrogate", "setup \udc80 script", True),
    ("nul", "boot\x00strap", True),
    ("quote-storm-5000", '"' * 5000, True),
    ("quote-storm-1k", '"' * 1024, True),  # no term: refused before the model
    ("quote-pairs", '"a" "' * 200, False),
    ("minus-10k", "-" * 10_000, True),
    ("minus-1000", "-" * 1000, True),
    ("lone-minus-groups", "- " * 500, True),
    ("exclusion-storm", "setup " + "-x " * 300, False),
]
SURROGATE_IDS = {"lone-surrogate", "lone-low-surrogate"}
LIMITS_REFUSED = [0, -1, 10**9]

# Paths into and out of the hostile KB (build_hostile_kb): a symlink and a hard link to a
# secret outside the KB, escapes, and malformed names.
BAD_PATHS = ["../outside/secret.md", "%2e%2e%2foutside%2fsecret.md", "%2E%2E/outside/secret.md",
             "guides/../../outside/secret.md", "/etc/passwd", "OUTSIDE_ABS", "notes/\x00.md",
             "notes/link.md", "notes/hard.md", "", "   ", "x" * 5000, "notes/\ud800.md"]


def _no_traceback(*texts: str) -> None:
    for text in texts:
        assert "Traceback" not in text and 'File "' not in text, text[:500]
        assert SECRET not in text, text[:500]


@pytest.fixture(scope="module")
def kb_root(tmp_path_factory) -> ServerKB:
    return build_hostile_kb(tmp_path_factory.mktemp("badinput"))


@pytest.fixture(scope="module")
def server(kb_root) -> Iterator[RunningServer]:
    running = start_http_server(kb_root.config, kb_root.root, "--no-watch")
    yield running
    stop_server(running)


def _bad_paths(kb_root) -> list[str]:
    return [str(kb_root.outside / "secret.md") if p == "OUTSIDE_ABS" else p for p in BAD_PATHS]


def _text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def _tool_then_good_search(url: str, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """Each bad call, followed on the same session by a good search that must succeed."""
    out = []
    async with Client(url) as client:
        for tool, args in calls:
            result = await client.call_tool(tool, args)
            good = await client.call_tool("search", GOOD_QUERY)
            assert not good.is_error and good.structured_content["results"], (tool, args, _text(good))
            out.append(result)
    return out


# --- (a) the CLI ---------------------------------------------------------------------------------

def _cli(*args: str):
    return CliRunner(env={"GROOVE_LOG": "warning"}).invoke(cli, list(args))


def _assert_cli_refused(result, named: str) -> None:
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and named in lines[0], result.stderr
    _no_traceback(result.stderr, result.output)


@pytest.mark.parametrize(("query", "refused"), [(q, r) for _, q, r in QUERIES],
                         ids=[i for i, _, _ in QUERIES])
def test_cli_search_query(server, kb_root, query, refused):
    result = _cli("search", "--config", str(kb_root.config), "--", query)
    if refused:
        _assert_cli_refused(result, "query")
    else:
        assert result.exit_code == 0, result.stderr
        assert isinstance(json.loads(result.stdout)["results"], list)
        _no_traceback(result.stderr)


@pytest.mark.parametrize("limit", LIMITS_REFUSED)
def test_cli_search_absurd_limits(server, kb_root, limit):
    _assert_cli_refused(_cli("search", "--config", str(kb_root.config), "--limit", str(limit),
                             "setup"), "limit")


@pytest.mark.parametrize("limit", ["true", "5.5", "1e9", ""])
def test_cli_search_non_integer_limit_is_a_usage_error(server, kb_root, limit):
    result = _cli("search", "--config", str(kb_root.config), "--limit", limit, "setup")
    assert result.exit_code == 2 and result.stdout == ""
    assert "--limit" in result.stderr
    _no_traceback(result.stderr)



@pytest.mark.parametrize("bad", [
    *[pytest.param(b, id=f"path{i}") for i, b in enumerate(BAD_PATHS) if "\ud800" not in b],
    pytest.param("notes/\ud800.md", id="lone-surrogate"),
    pytest.param("notes/\udcff.md", id="argv-undecodable-byte"),
])
def test_cli_graph_start_paths(server, kb_root, bad):
    bad = str(kb_root.outside / "secret.md") if bad == "OUTSIDE_ABS" else bad
    result = _cli("graph", "--config", str(kb_root.config), "--start", bad)
    assert result.exit_code == 2, (result.output, result.exception)
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    _no_traceback(result.stderr)


def test_cli_search_subprocess_never_prints_a_traceback(server, kb_root):
    """The real entry point, not only click's runner: exit 2, one `error:` line."""
    import subprocess

    from _helpers import groove_cmd

    for query in ("x" * 2000, " ", "-" * 10_000):
        proc = subprocess.run(groove_cmd("search", "--config", str(kb_root.config), "--", query),
                              capture_output=True, text=True, timeout=120,
                              env={**os.environ, "GROOVE_LOG": "warning"})
        assert proc.returncode == 2 and proc.stdout == "", proc.stderr
        assert proc.stderr.strip().splitlines() == [proc.stderr.strip()]
        assert proc.stderr.startswith("error: query"), proc.stderr
        _no_traceback(proc.stderr)


# --- (b) MCP tools and resources over HTTP ---------------------------------------------------------

def test_mcp_search_bad_queries(server):
    calls = [("search", {"query": q, "limit": 3}) for i, q, _ in QUERIES if i not in SURROGATE_IDS]
    expected = [r for i, _, r in QUERIES if i not in SURROGATE_IDS]
    results = asyncio.run(_tool_then_good_search(server.mcp_url, calls))
    for (_, args), refused, result in zip(calls, expected, results, strict=True):
        text = _text(result)
        _no_traceback(text)
        if refused:
            assert result.is_error and "query" in text, (args["query"][:40], text)
        else:
            assert not result.is_error, (args["query"][:40], text)
            assert isinstance(result.structured_content["results"], list)
    assert server.alive()


def test_mcp_search_absurd_limits(server):
    calls = [("search", {"query": "setup", "limit": limit}) for limit in [*LIMITS_REFUSED, "5", True,
                                                                          1.5, None, [3]]]
    results = asyncio.run(_tool_then_good_search(server.mcp_url, calls))
    for (_, args), result in zip(calls, results, strict=True):
        text = _text(result)
        _no_traceback(text)
        limit = args["limit"]
        if not isinstance(limit, bool | str):  # 0, -1, 10**9, 1.5, null, [3]
            assert result.is_error and "limit" in text, (limit, text)
        elif not result.is_error:  # a lax "5" / true is coerced; the bound still holds
            assert len(result.structured_content["results"]) <= int(limit), limit


def test_mcp_path_tools_refuse_bad_paths(server, kb_root):
    calls: list[tuple[str, dict[str, Any]]] = []
    for bad in _bad_paths(kb_root):
        if "\ud800" in bad:
            continue  # the SDK cannot serialise it; see test_lone_surrogates_over_json_rpc
        calls += [("get_document", {"path": bad}), ("get_connection_graph", {"start": bad}),
                  ("get_connection_graph", {"start": "guides/setup.md", "exclude_paths": [bad]}),
                  ("get_best_practice", {"target": bad.removesuffix(".md")}),
                  ("multi_get", {"paths": [bad, f"{bad}:2"]})]
    results = asyncio.run(_tool_then_good_search(server.mcp_url, calls))
    for (tool, args), result in zip(calls, results, strict=True):
        text = _text(result)
        _no_traceback(text)
        if tool == "multi_get":  # refused as a request, or each entry reported, nothing read
            answer = result.structured_content
            assert result.is_error or (answer["documents"] == [] and len(answer["errors"]) == 2), (
                args, text[:300])
            continue
        lexical = tool == "get_connection_graph" and "exclude_paths" in args
        if lexical and args["exclude_paths"][0] in ("notes/link.md", "notes/hard.md"):
            continue  # an exclusion is a filter: it names nothing to read, so only the lexical gate
        assert result.is_error, (tool, args, text[:300])
        assert "internal error" not in text, (tool, args, text)
    assert server.alive()


def test_best_practice_overlong_target_is_a_clear_refusal(server):
    result = asyncio.run(_tool_then_good_search(
        server.mcp_url, [("get_best_practice", {"target": "x" * 5000})]))[0]
    text = _text(result)
    assert result.is_error
    _no_traceback(text)
    assert "internal error" not in text and "target" in text, text


def test_mcp_graph_absurd_numbers(server):
    calls = [("get_connection_graph", {"start": "guides/setup.md", key: value})
             for key, value in [("depth", 10**9), ("depth", -1), ("fan_out", 10**9),
                                ("min_similarity", -5.0), ("max_nodes", 0), ("max_seed_chunks", 10**9),
                                ("seed_strategy", "x" * 2000), ("exclude_paths", ["a.md"] * 65)]]
    for (_, args), result in zip(calls, asyncio.run(_tool_then_good_search(server.mcp_url, calls)),
                                 strict=True):
        assert result.is_error, args
        _no_traceback(_text(result))


def test_kb_doc_uris_refuse_bad_paths(server, kb_root):
    from urllib.parse import quote

    uris = [f"kb://doc/{quote(p, safe='/%')}" for p in _bad_paths(kb_root) if "\ud800" not in p]
    uris += ["kb://doc/..%2f..%2fetc%2fpasswd", "kb://doc/%00", "kb://doc/notes%2Flink.md",
             "kb://doc/" + "a/" * 600 + "x.md"]

    async def go() -> list[tuple[str, str | None]]:
        out = []
        async with Client(server.mcp_url) as client:
            for uri in uris:
                try:
                    result = await client.read_resource(uri)
                    out.append((uri, None, result.contents[0].text))
                except MCPError as exc:
                    out.append((uri, str(exc), None))
                good = await client.call_tool("search", GOOD_QUERY)
                assert not good.is_error, uri
        return out

    for uri, error, text in asyncio.run(go()):
        assert error is not None, f"{uri[:80]} was served: {text[:200]}"
        _no_traceback(error)
    assert server.alive()


# --- raw JSON-RPC: what an SDK client cannot even send ---------------------------------------------

MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "raw-bad-input", "version": "1"}}}


class RawSession:
    """A hand-driven Streamable HTTP session, for bodies the SDK would not serialise."""

    def __init__(self, server: RunningServer) -> None:
        self.url = server.mcp_url
        opened = httpx.post(self.url, json=INIT, headers=MCP_HEADERS, timeout=30)
        assert opened.status_code == 200, opened.text
        self.headers = {**MCP_HEADERS, "mcp-session-id": opened.headers["mcp-session-id"],
                        "mcp-protocol-version": "2025-11-25"}
        self.post('{"jsonrpc": "2.0", "method": "notifications/initialized"}')

    def post(self, body: str | bytes, **headers: str) -> httpx.Response:
        return httpx.post(self.url, content=body, headers={**self.headers, **headers}, timeout=30)

    def close(self) -> None:
        httpx.delete(self.url, headers=self.headers, timeout=10)


def _message(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC message in a JSON or single-event SSE response."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        return json.loads(data[-1])
    return response.json()


def _tool_call_body(name: str, escaped_args: str) -> str:
    return ('{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": '
            + json.dumps(name) + ', "arguments": ' + escaped_args + "}}")


@pytest.mark.parametrize(("tool", "args"), [
    ("search", '{"query": "\\ud800"}'),
    ("search", '{"query": "setup \\udc80 script", "limit": 2}'),
    ("search", '{"query": "setup", "category": "\\udbff"}'),
    ("get_document", '{"path": "notes/\\ud800.md"}'),
    ("get_connection_graph", '{"start": "\\ud800"}'),
    ("get_best_practice", '{"target": "\\ud800"}'),
])
def test_lone_surrogates_over_json_rpc(server, tool, args):
    session = RawSession(server)
    try:
        response = session.post(_tool_call_body(tool, args))
        _no_traceback(response.text)
        assert response.status_code in (200, 400), response.text
        if response.status_code == 200:
            message = _message(response)
            assert "error" in message or message["result"]["isError"] is True, message
        good = _message(session.post(_tool_call_body("search", json.dumps(GOOD_QUERY))))
        assert good["result"].get("isError") is not True and good["result"]["structuredContent"][
            "results"], good
    finally:
        session.close()


def test_lone_surrogate_in_a_resource_uri_over_json_rpc(server):
    session = RawSession(server)
    try:
        response = session.post('{"jsonrpc": "2.0", "id": 9, "method": "resources/read", '
                                '"params": {"uri": "kb://doc/notes/\\ud800.md"}}')
        _no_traceback(response.text)
        assert response.status_code in (200, 400), response.text
        if response.status_code == 200:
            assert "error" in _message(response)
    finally:
        session.close()
    assert server.alive()


# --- (c) the HTTP endpoints ------------------------------------------------------------------------

@pytest.mark.parametrize(("body", "headers", "statuses"), [
    (b'{"jsonrpc": "2.0", "id": 1, "method": ', {}, {400}),
    (b"\xff\xfe not json at all", {}, {400}),
    (b"[]", {}, {400}),
    (b'{"jsonrpc": "2.0"}', {}, {400}),
    (json.dumps(INIT).encode(), {"Content-Type": "text/plain"}, {400, 415}),
    (json.dumps(INIT).encode(), {"Content-Type": "application/x-www-form-urlencoded"}, {400, 415}),
    (b"x" * (2 * 1024 * 1024), {}, {413}),
], ids=["truncated-json", "binary", "empty-batch", "no-method", "text-plain", "form", "2MiB"])
def test_malformed_http_bodies_are_refused_and_the_server_keeps_serving(server, body, headers,
                                                                        statuses):
    response = httpx.post(server.mcp_url, content=body, headers={**MCP_HEADERS, **headers},
                          timeout=30)
    assert response.status_code in statuses, (response.status_code, response.text[:300])
    _no_traceback(response.text)
    assert httpx.get(server.base + "/healthz", timeout=10).json() == {"status": "ok"}
    good = asyncio.run(_tool_then_good_search(server.mcp_url, []))
    assert good == []


def test_malformed_bodies_inside_a_live_session(server):
    session = RawSession(server)
    try:
        for body in (b'{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {',
                     b'{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": 5}',
                     b'{"jsonrpc": "2.0", "id": 5, "method": "tools/call", '
                     b'"params": {"name": "search", "arguments": "not an object"}}',
                     b'{"jsonrpc": "2.0", "id": 6, "method": "tools/call", '
                     b'"params": {"name": "no_such_tool", "arguments": {}}}'):
            response = session.post(body)
            _no_traceback(response.text)
            assert response.status_code in (200, 400), response.text
            if response.status_code == 200:
                message = _message(response)
                assert "error" in message or message["result"]["isError"] is True, message
        good = _message(session.post(_tool_call_body("search", json.dumps(GOOD_QUERY))))
        assert good["result"]["structuredContent"]["results"], good
    finally:
        session.close()
    assert server.alive()

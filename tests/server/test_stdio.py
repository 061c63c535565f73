"""MCP over stdio: the SDK's stdio client spawning `python -m groove serve`."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import queue
import subprocess
import threading
import time
from typing import Any

from _helpers import SECRET, groove_cmd
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError


def params(server_kb, *extra: str) -> StdioServerParameters:
    cmd = groove_cmd("serve", "--config", str(server_kb.config), "--no-watch", *extra)
    # The SDK passes the server only a safe subset of the environment; PYTHONPATH
    # must reach it so the server runs the groove under test.
    return StdioServerParameters(command=cmd[0], args=cmd[1:], env=dict(os.environ))


def text_of(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def test_every_tool_prompt_and_resource_over_stdio(server_kb):
    async def go() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with Client(params(server_kb)) as client:
            out["tools"] = {t.name for t in (await client.list_tools()).tools}
            out["prompts"] = {p.name for p in (await client.list_prompts()).prompts}
            out["resources"] = {str(r.uri) for r in (await client.list_resources()).resources}
            calls = {
                "search": {"query": "self-test workbench"},
                "get_document": {"path": "guides/rust/async.md"},
                "list_topics": {},
                "get_connection_graph": {"start": "guides/rust/async.md", "depth": 1},
                "get_best_practice": {"target": "logging", "category": "Destinations"},
                "rebuild_index": {},
            }
            out["calls"] = {name: await client.call_tool(name, args) for name, args in calls.items()}
            out["prompt_texts"] = [
                (await client.get_prompt(name, args)).messages[0].content.text
                for name, args in (("summarize_topic", {"topic": "setup"}),
                                   ("deep_dive", {"question": "q"}), ("whats_new", {}),
                                   ("find_gaps", {"topic": "rust"}))]
            out["topic"] = (await client.read_resource("kb://topic/guides/rust")).contents[0].text
            out["doc"] = (await client.read_resource("kb://doc/README.md")).contents[0].text
            out["bad_tool"] = await client.call_tool("get_document", {"path": "../outside/secret.md"})
            try:
                await client.read_resource("kb://doc/%2e%2e%2foutside%2fsecret.md")
                out["bad_uri"] = None
            except MCPError as exc:
                out["bad_uri"] = str(exc)
            out["after"] = await client.call_tool("list_topics", {})
        return out

    out = asyncio.run(go())
    assert len(out["tools"]) == 7 and len(out["prompts"]) == 4
    assert "kb://topic/guides/rust" in out["resources"]
    for name, result in out["calls"].items():
        assert not result.is_error, (name, text_of(result))
    hits = out["calls"]["search"].structured_content["results"]
    assert hits[0]["path"] == "guides/setup.md" and hits[0]["uri"] == "kb://doc/guides/setup.md"
    assert "Tokio" in out["calls"]["get_document"].structured_content["text"]
    assert out["calls"]["get_best_practice"].structured_content["text"].startswith("## Destinations")
    assert all("cite" in t for t in out["prompt_texts"])
    assert "kb://doc/guides/rust/async.md" in out["topic"]
    assert "Top-level overview" in out["doc"]
    assert out["bad_tool"].is_error and SECRET not in text_of(out["bad_tool"])
    envelope = json.loads(text_of(out["bad_tool"]))  # GrooveSeek's {"error": ...} body
    assert envelope == out["bad_tool"].structured_content and "climbs out" in envelope["error"]
    assert out["bad_uri"] and SECRET not in out["bad_uri"]
    assert not out["after"].is_error, "still serving after bad requests"


def test_stdout_carries_only_mcp_frames(server_kb):
    """Raw pipe: every stdout line is a JSON-RPC message; logs went to stderr."""
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "search", "arguments": {"query": "executor"}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "get_document", "arguments": {"path": "/etc/passwd"}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
         "params": {"name": "rebuild_index", "arguments": {"force": False}}},
    ]
    proc = subprocess.Popen(groove_cmd("serve", "--config", str(server_kb.config)),  # watcher on
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "GROOVE_LOG": "debug"})
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(ln) for ln in proc.stdout], daemon=True).start()
    err_lines: list[str] = []
    threading.Thread(target=lambda: err_lines.extend(proc.stderr), daemon=True).start()
    for message in messages:
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
    frames, deadline = [], time.monotonic() + 60
    try:
        while {f.get("id") for f in frames} < {1, 2, 3, 4} and time.monotonic() < deadline:
            try:
                line = lines.get(timeout=0.5)
            except queue.Empty:
                continue
            if line.strip():
                frames.append(json.loads(line))  # raises if anything else was printed
    finally:
        proc.stdin.close()
        proc.wait(30)
    while not lines.empty():
        line = lines.get()
        if line.strip():
            frames.append(json.loads(line))
    assert all(f.get("jsonrpc") == "2.0" for f in frames)
    by_id = {f["id"]: f for f in frames if "id" in f}
    assert set(by_id) >= {1, 2, 3, 4}
    assert by_id[2]["result"]["isError"] is False
    assert by_id[3]["result"]["isError"] is True
    assert "".join(err_lines).strip(), "logs belong on stderr"


def test_every_request_with_an_id_is_answered_even_when_malformed(server_kb):
    """A lone surrogate, a batch, a bad shape and truncated JSON each get an error for their id;
    garbage and `[` × 3000 (no id) are logged and answered with a -32700 parse error whose id
    is null; the session keeps answering afterwards."""
    lines_in = [
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                    "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                               "clientInfo": {"name": "raw", "version": "1"}}}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_document",'
        '"arguments":{"path":"\\ud800.md"}}}',
        "this is not json",
        '[{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","id":"b","method":"ping"}]',
        "[" * 3000,
        '{"jsonrpc":"2.0","id":4,"method":5}',
        '{"jsonrpc":"2.0","id":5,"method":"ping"',
        '{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}',  # ids nobody can answer: logged
        '{"jsonrpc":"2.0","id":1e400,"method":"ping"}',
        "bell\x07 clear\x1b[2J",  # control characters: escaped in the log
        json.dumps({"jsonrpc": "2.0", "id": 6, "method": "ping"}),
    ]
    proc = subprocess.Popen(groove_cmd("serve", "--config", str(server_kb.config), "--no-watch"),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(ln) for ln in proc.stdout], daemon=True).start()
    err_lines: list[str] = []
    threading.Thread(target=lambda: err_lines.extend(proc.stderr), daemon=True).start()
    for line in lines_in:
        proc.stdin.write(line + "\n")
        proc.stdin.flush()
    wanted = {1, 2, 3, "b", 4, 5, 6}
    by_id: dict[Any, dict] = {}
    null_ids: list[dict] = []
    deadline = time.monotonic() + 60
    try:
        while (set(by_id) < wanted or len(null_ids) < 3) and time.monotonic() < deadline:
            try:
                frame = json.loads(lines.get(timeout=0.5))
            except queue.Empty:
                continue
            if frame.get("id") is None:
                null_ids.append(frame)
            else:
                by_id[frame["id"]] = frame
    finally:
        proc.stdin.close()
        proc.wait(30)
    assert set(by_id) >= wanted, f"unanswered: {wanted - set(by_id)}"
    assert by_id[2]["error"]["code"] == -32602 and "surrogate" in by_id[2]["error"]["message"]
    assert by_id[3]["error"]["code"] == by_id["b"]["error"]["code"] == -32600
    assert "batch" in by_id[3]["error"]["message"]
    assert by_id[4]["error"]["code"] == -32600 and "method" in by_id[4]["error"]["message"]
    assert by_id[5]["error"]["code"] == -32700
    assert by_id[6]["result"] == {}
    # "this is not json", "[" × 3000 and the control characters: a parse error each, id null
    assert [f["error"]["code"] for f in null_ids] == [-32700] * 3
    assert all("id" in f and "not valid JSON" in f["error"]["message"] for f in null_ids)
    logged = "".join(err_lines)
    assert "this is not json" in logged and "RecursionError" in logged
    assert 'request id {"a": 1} is neither an integer nor a string' in logged
    assert "request id inf is neither" in logged
    assert "bell\\x07 clear\\x1b[2J" in logged and "\x1b" not in logged and "\x07" not in logged


def test_a_client_that_goes_away_ends_the_server_quietly(server_kb):
    """The client closes its end of our stdout, then stdin: no BrokenPipeError traceback."""
    proc = subprocess.Popen(groove_cmd("serve", "--config", str(server_kb.config), "--no-watch"),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    for request_id in range(1, 4):
        proc.stdin.write((json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "initialize",
                                      "params": {"protocolVersion": "2025-11-25",
                                                 "capabilities": {},
                                                 "clientInfo": {"name": "gone", "version": "1"}}})
                          + "\n").encode())
        proc.stdin.flush()
    with contextlib.suppress(BrokenPipeError):
        proc.stdin.close()
    err = proc.stderr.read().decode()
    assert proc.wait(60) == 0, err
    assert "Traceback" not in err and "BrokenPipeError" not in err, err


def test_exclusions_empty_filters_and_document_spellings_over_stdio(server_kb):
    """GrooveSeek v1.1 / v1.12 over a real client: excluded_terms echoed, a query of
    exclusions only refused, a filter that can match nothing noted, a field with no value
    refused, and a document path in a second spelling refused naming the canonical one."""
    async def go() -> dict[str, Any]:
        async with Client(params(server_kb)) as client:
            calls = {
                "excluded": ("search", {"query": "runtime -tokio -\"thread pool\""}),
                "only_excluded": ("search", {"query": "-tokio"}),
                "undeclared": ("search", {"query": "runtime", "fields": {"nosuch": ["x"]}}),
                "no_value": ("search", {"query": "runtime", "fields": {"status": []}}),
                "dot_slash": ("get_document", {"path": "./guides/rust/async.md"}),
                "double_slash": ("get_document", {"path": "guides//rust/async.md"}),
                "canonical": ("get_document", {"path": "guides/rust/async.md"}),
            }
            out = {key: await client.call_tool(name, args) for key, (name, args) in calls.items()}
            try:
                await client.read_resource("kb://doc/guides//setup.md")
                out["uri"] = None
            except MCPError as exc:
                out["uri"] = str(exc)
            return out

    out = asyncio.run(go())
    excluded = out["excluded"].structured_content
    assert not out["excluded"].is_error
    assert excluded["filter_applied"]["excluded_terms"] == ["tokio", "thread pool"]
    refused = out["only_excluded"]
    assert refused.is_error and "holds only exclusions" in refused.structured_content["error"]
    undeclared = out["undeclared"].structured_content
    assert undeclared["results"] == [] and undeclared["notes"] == [
        "fields: 'nosuch' is not a declared field (no groove-schema.toml declares any field), "
        "so no document can match it"]
    assert out["no_value"].is_error and "'status' lists no value" in text_of(out["no_value"])
    for key in ("dot_slash", "double_slash"):
        assert out[key].is_error, key
        assert "write 'guides/rust/async.md'" in out[key].structured_content["error"], key
    assert not out["canonical"].is_error
    assert out["uri"] and "write 'guides/setup.md'" in out["uri"]


def test_refused_paths_are_invalid_params_and_bounds_are_named(server_kb):
    """A path that escapes the KB is the caller's mistake (-32602, not -32603), and an
    integer below its bound says the bound, not "must be an integer"."""
    from mcp_types import INVALID_PARAMS

    async def go() -> tuple[list[tuple[int, str]], Any]:
        codes = []
        async with Client(params(server_kb)) as client:
            for uri in ("kb://doc/%2e%2e%2foutside%2fsecret.md", "kb://doc/a%00b.md",
                        "kb://topic/..%2F..%2Fetc"):
                try:
                    await client.read_resource(uri)
                    codes.append((0, "read"))
                except MCPError as exc:
                    codes.append((exc.error.code, exc.error.message))
            zero = await client.call_tool("get_document", {"path": "README.md", "line_start": 0})
        return codes, zero

    codes, zero = asyncio.run(go())
    assert [code for code, _ in codes] == [INVALID_PARAMS] * 3, codes
    assert all("escapes kb_path" in message and SECRET not in message for _, message in codes)
    assert zero.is_error
    assert "line_start must be an integer greater than or equal to 1, got 0" in text_of(zero)


def test_requests_in_flight_when_stdin_ends_are_all_answered(server_kb):
    """16 requests written at once, then EOF: searches still running when the input ends
    are answered before the server exits (they used to be cancelled without a reply)."""
    messages = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                            "clientInfo": {"name": "raw", "version": "1"}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    for request_id in range(2, 17):
        messages.append({"jsonrpc": "2.0", "id": request_id, "method": "ping"} if request_id % 2
                        else {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                              "params": {"name": "search",
                                         "arguments": {"query": f"executor {request_id}"}}})
    done = subprocess.run(groove_cmd("serve", "--config", str(server_kb.config), "--no-watch"),
                          input="".join(json.dumps(m) + "\n" for m in messages),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    frames = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert sorted(f["id"] for f in frames) == list(range(1, 17))
    searches = [f for f in frames if f["id"] % 2 == 0 and f["id"] > 1]
    assert all(f["result"]["isError"] is False for f in searches)

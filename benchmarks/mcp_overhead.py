"""Where one MCP ``search`` call over Streamable HTTP spends its time.

    python benchmarks/mcp_overhead.py [--size 1k] [--calls 100] [--profile DIR]

One run, one KB (the cached benchmark KB of ``--size``), one query
(``measure.HTTP_QUERY``), three p50s measured alternately so that machine
noise hits them alike:

* ``inprocess_ms``: ``KnowledgeBase.search`` in this process;
* ``tool_inprocess_ms``: the MCP ``search`` tool through ``MCPServer.call_tool``
  in this process (argument validation, the worker-thread hop, result
  conversion), with no transport;
* ``http_ms``: the same tool through the official ``mcp.Client`` against
  ``groove serve --transport http`` (a subprocess), one session.

``overhead_ms = http_ms - inprocess_ms`` is what docs/deployment.md's target
(<= 5 ms) is about. On a busy machine that difference is mostly waiting for a
core, so ``cpu_overhead_ms`` also reports the CPU the transport costs per call
(server process CPU minus the in-process search's, plus the client's). ``--profile DIR`` also runs the server under cProfile and
writes ``DIR/server.txt`` (its event-loop thread) and ``DIR/client.txt``.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import logging
import os
import pstats
import signal
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from kbcache import (  # noqa: E402
    SIZES,  # noqa: E402
    ensure_kb,
    load_bench_config,
)
from measure import HTTP_QUERY  # noqa: E402
from serving import free_port, groove_cmd, wait_healthy  # noqa: E402

SIZES_BY_LABEL = {label: (n, source) for label, n, source in SIZES}


def _p50(times: list[float]) -> float:
    return round(statistics.median(times) * 1000, 3)


def _pstats_text(profile: cProfile.Profile | str, top: int = 45) -> str:
    out = io.StringIO()
    stats = pstats.Stats(profile, stream=out)
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)
    return out.getvalue()


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _measure(kb_dir: Path, url: str, calls: int, client_profile: cProfile.Profile | None,
                   server_pid: int) -> dict[str, Any]:
    import anyio.to_thread
    from mcp import Client

    from groove.kb import KnowledgeBase
    from groove.search.request import SearchRequest
    from groove.server.mcp import build_mcp_server

    kb = KnowledgeBase(load_bench_config(kb_dir))
    server = build_mcp_server(kb)
    # Building an MCPServer installs the SDK's log handler, which would print (and
    # time) a line per client request here; run.py's client process has none.
    for name in ("httpx", "httpx2"):
        logging.getLogger(name).setLevel(logging.WARNING)
    request = SearchRequest(query=HTTP_QUERY)
    args = {"query": HTTP_QUERY}
    times: dict[str, list[float]] = {"inprocess": [], "tool": [], "http": []}
    cpu = {"inprocess": 0.0, "client": 0.0, "server": 0.0}
    try:
        async with Client(url) as client:
            for _ in range(3):  # warm every path (model, caches, connection)
                kb.search(request)
                await server.call_tool("search", args)
                await client.call_tool("search", args)
            server_cpu0 = _cpu_s(server_pid)
            for _ in range(calls):
                c0 = time.process_time()
                t0 = time.perf_counter()
                await anyio.to_thread.run_sync(kb.search, request)
                times["inprocess"].append(time.perf_counter() - t0)
                cpu["inprocess"] += time.process_time() - c0
                t0 = time.perf_counter()
                await server.call_tool("search", args)
                times["tool"].append(time.perf_counter() - t0)
                if client_profile:
                    client_profile.enable()
                c0 = time.process_time()
                t0 = time.perf_counter()
                result = await client.call_tool("search", args)
                times["http"].append(time.perf_counter() - t0)
                cpu["client"] += time.process_time() - c0
                if client_profile:
                    client_profile.disable()
                if result.is_error:
                    raise RuntimeError(f"search tool failed: {result.content}")
            cpu["server"] = _cpu_s(server_pid) - server_cpu0
    finally:
        kb.close()
    inprocess, tool, http = (_p50(times[k]) for k in ("inprocess", "tool", "http"))
    return {"inprocess_ms": inprocess, "tool_inprocess_ms": tool, "http_ms": http,
            "overhead_ms": round(http - inprocess, 3),
            "transport_ms": round(http - tool, 3),
            "ratio": round(http / inprocess, 3),
            "min_ms": {k: round(min(v) * 1000, 3) for k, v in times.items()},
            # CPU per call does not depend on how busy the machine is: the server's
            # (search included) minus the in-process search's, plus the client's.
            "cpu_ms_per_call": {k: round(v / calls * 1000, 3) for k, v in cpu.items()},
            "cpu_overhead_ms": round((cpu["server"] - cpu["inprocess"] + cpu["client"])
                                     / calls * 1000, 3),
            "calls": calls, "query": HTTP_QUERY}


def measure_overhead(kb_dir: Path, calls: int, profile: Path | None = None) -> dict[str, Any]:
    """Start ``groove serve --transport http`` on ``kb_dir`` and measure (see the module doc)."""
    import subprocess

    import anyio

    port = free_port()
    serve = ["serve", "--transport", "http", "--port", str(port), "--kb-path", str(kb_dir),
             "--no-watch"]
    raw = profile / "server.prof" if profile else None
    if profile:
        profile.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "cProfile", "-o", str(raw), "-m", "groove", *serve]
    else:
        cmd = [*groove_cmd(), *serve]
    proc = subprocess.Popen(cmd, cwd=kb_dir, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    client_profile = cProfile.Profile() if profile else None
    try:
        error = wait_healthy(proc, port)
        if error:
            raise RuntimeError(error)
        result = anyio.run(_measure, kb_dir, f"http://127.0.0.1:{port}/mcp", calls,
                           client_profile, proc.pid)
    finally:
        # SIGINT, not SIGTERM: uvicorn re-raises the signal after shutting down,
        # and only SIGINT (KeyboardInterrupt) lets cProfile write its file first.
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
    if profile and client_profile and raw:
        (profile / "server.txt").write_text(_pstats_text(str(raw)), encoding="utf-8")
        (profile / "client.txt").write_text(_pstats_text(client_profile), encoding="utf-8")
        result["profiles"] = str(profile)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="1k", choices=sorted(SIZES_BY_LABEL))
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--profile", type=Path, default=None, help="write cProfile reports here")
    args = parser.parse_args()
    n_chunks, source = SIZES_BY_LABEL[args.size]
    kb = ensure_kb(args.size, n_chunks, source, lambda m: print(m, file=sys.stderr))
    print(json.dumps(measure_overhead(kb.path, args.calls, args.profile), indent=2))


if __name__ == "__main__":
    main()

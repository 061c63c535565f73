"""Documents by path over MCP: line windows on get_document, and multi_get, through a
real client talking to `groove serve` over stdio."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from _helpers import SECRET
from mcp import Client
from test_stdio import params, text_of


def test_line_windows_and_multi_get_over_stdio(server_kb):
    async def go() -> dict[str, Any]:
        async with Client(params(server_kb)) as client:
            calls = {
                "colon": ("get_document", {"path": "guides/setup.md:10"}),
                "range": ("get_document", {"path": "guides/setup.md:10-12"}),
                "max_lines": ("get_document", {"path": "guides/setup.md", "line_start": 10,
                                               "max_lines": 2}),
                "past": ("get_document", {"path": "guides/setup.md:99"}),
                "both": ("get_document", {"path": "guides/setup.md:3", "line_start": 3}),
                "glob": ("multi_get", {"paths": ["guides/**/*.md"], "max_bytes": 200}),
                "mixed": ("multi_get", {"paths": ["README.md:1", "notes/link.md",
                                                  "../outside/secret.md", "guides/setup.md"],
                                        "max_total_bytes": 100}),
                "typed": ("multi_get", {"paths": "README.md"}),
                "bound": ("multi_get", {"paths": ["README.md"], "max_bytes": 0}),
            }
            return {name: await client.call_tool(tool, args)
                    for name, (tool, args) in calls.items()}

    out = asyncio.run(go())
    lines = (server_kb.kb / "guides/setup.md").read_text(encoding="utf-8").split("\n")
    colon = out["colon"].structured_content
    assert colon["text"] == "\n".join(lines[9:17]) and colon["line_start"] == 10
    assert (colon["line_end"], colon["lines"]) == (17, 17)
    assert out["range"].structured_content["text"] == "\n".join(lines[9:12])
    assert out["max_lines"].structured_content["text"] == "\n".join(lines[9:11])
    assert out["past"].is_error and json.loads(text_of(out["past"])) == {
        "error": "line_start: 99 is past the end of 'guides/setup.md' (17 lines); accepted: 1..17"}
    assert out["both"].is_error and "one of the two" in text_of(out["both"])

    glob = out["glob"].structured_content
    assert [d["path"] for d in glob["documents"]] == ["guides/rust/async.md", "guides/setup.md"]
    assert all(d["bytes"] <= 200 for d in glob["documents"])
    assert all("cut at 200 bytes (max_bytes)" in d["cut"] for d in glob["documents"])
    assert glob["note"] == "2 of 2 document(s) cut at max_bytes (200 bytes each)"

    mixed = out["mixed"].structured_content
    assert not out["mixed"].is_error and SECRET not in text_of(out["mixed"])
    assert [d["path"] for d in mixed["documents"]] == ["README.md", "guides/setup.md"]
    assert mixed["bytes"] <= 100 and "max_total_bytes" in mixed["documents"][1]["cut"]
    errors = {e["entry"]: e["error"] for e in mixed["errors"]}
    assert set(errors) == {"notes/link.md", "../outside/secret.md"}
    assert "climbs out" in errors["../outside/secret.md"]
    assert out["typed"].is_error and "paths: expected" in text_of(out["typed"])
    assert out["bound"].is_error and "max_bytes: 0 is out of range" in text_of(out["bound"])

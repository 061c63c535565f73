"""Declared frontmatter fields (docs/search.md 'Fields'): the schema names a key, the index
stores it, ``--field`` / ``--field-not`` and MCP ``fields`` / ``fields_not`` filter on it."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from mcp import Client, StdioServerParameters

NOTES = {
    "active.md": "---\nstatus: active\nteam: [infra, data]\n---\n# Rollout plan\n\n"
                 "The rollout plan for the storage cluster moves one rack a week.\n",
    "deprecated.md": "---\nstatus: deprecated\nteam: infra\n---\n# Old rollout plan\n\n"
                     "The old rollout plan for the storage cluster moved everything at once.\n",
    "plain.md": "# Rollout notes\n\nRollout notes for the storage cluster without any status.\n",
    "nested.md": "---\nstatus: {phase: one}\n---\n# Nested rollout\n\n"
                 "A rollout plan whose status is a mapping, which holds no value.\n",
}
SCHEMA = '[fields.status]\n\n[fields.team]\n'


def search(run, kb_dir, *flags: str) -> dict[str, Any]:
    result = run("search", "rollout plan storage cluster", "--kb-path", str(kb_dir),
                 "--format", "json", "--limit", "10", *flags)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def paths(answer: dict[str, Any]) -> set[str]:
    return {hit["path"] for hit in answer["results"]}


def test_field_filters_from_the_command_line(kb_dir, run):
    (kb_dir / "groove-schema.toml").write_text(SCHEMA)
    assert run("index", "--kb-path", str(kb_dir), "-q").exit_code == 0
    active = search(run, kb_dir, "--field", "status=active")
    assert paths(active) == {"active.md"}
    assert active["filter_applied"]["fields"] == {"status": ["active"]}
    # one of the values, per key; every key given must match
    assert paths(search(run, kb_dir, "--field", "status=active", "--field",
                        "status=deprecated")) == {"active.md", "deprecated.md"}
    assert paths(search(run, kb_dir, "--field", "team=data")) == {"active.md"}
    assert paths(search(run, kb_dir, "--field", "team=infra", "--field", "status=deprecated")) \
        == {"deprecated.md"}
    # exclusion keeps documents without the key
    kept = search(run, kb_dir, "--field-not", "status=deprecated")
    assert paths(kept) == {"active.md", "plain.md", "nested.md"}
    assert kept["filter_applied"]["fields_not"] == {"status": ["deprecated"]}
    # an undeclared key matches nothing; it is not an error
    assert paths(search(run, kb_dir, "--field", "owner=me")) == set()
    bad = run("search", "rollout", "--kb-path", str(kb_dir), "--field", "status")
    assert bad.exit_code == 2 and "--field: 'status' is not key=value" in bad.stderr


def test_a_schema_change_rewrites_the_fields_without_re_embedding(kb_dir, run):
    (kb_dir / "groove-schema.toml").write_text("[fields.team]\n")
    assert run("index", "--kb-path", str(kb_dir), "-q").exit_code == 0
    assert paths(search(run, kb_dir, "--field", "status=active")) == set()
    status = json.loads(run("status", "--kb-path", str(kb_dir), "--format", "json").stdout)
    assert status["declared_fields"] == ["team"] and status["declared_field_values"] == 3

    (kb_dir / "groove-schema.toml").write_text(SCHEMA)
    doctor = json.loads(run("doctor", "--kb-path", str(kb_dir), "--format", "json").stdout)
    [finding] = doctor["findings"]
    assert finding["check"] == "fields" and "declared-fields-stale" in finding["message"]

    indexed = run("index", "--kb-path", str(kb_dir), "--json")
    summary = json.loads(indexed.stdout)
    assert summary["chunks_embedded"] == 0 and summary["unchanged"] == 4
    assert paths(search(run, kb_dir, "--field", "status=active")) == {"active.md"}
    assert run("doctor", "--kb-path", str(kb_dir)).exit_code == 0
    text = run("status", "--kb-path", str(kb_dir)).stdout
    assert "Declared fields: status, team (5 values)" in text


def test_a_schema_that_does_not_load_stops_the_index_before_it_writes(kb_dir, run):
    (kb_dir / "groove-schema.toml").write_text("[fields.status]\nrequired = 'yes'\n")
    result = run("index", "--kb-path", str(kb_dir), "-q")
    assert result.exit_code == 2 and "required" in result.stderr
    assert not (kb_dir / ".groove.db").exists()


def test_validate_strict_and_allow_unknown_fields_report_undeclared_keys(kb_dir, run):
    (kb_dir / "groove-schema.toml").write_text("[fields.status]\n")
    plain = run("validate", "--kb-path", str(kb_dir), "--format", "json")
    assert plain.exit_code == 0
    strict = run("validate", "--kb-path", str(kb_dir), "--format", "json", "--strict")
    found = json.loads(strict.stdout)["violations"]
    assert strict.exit_code == 1
    assert {(v["path"], v["field"], v["kind"], v["line"]) for v in found} == {
        ("active.md", "team", "undeclared_field", 3),
        ("deprecated.md", "team", "undeclared_field", 3)}
    (kb_dir / "groove-schema.toml").write_text(
        "[fields.status]\n\n[options]\nallow_unknown_fields = false\n")
    by_option = run("validate", "--kb-path", str(kb_dir), "--format", "json")
    assert by_option.exit_code == 1 and json.loads(by_option.stdout)["violations"] == found
    (kb_dir / "groove-schema.toml").write_text("[options]\nstrict = true\n")
    refused = run("validate", "--kb-path", str(kb_dir))
    assert refused.exit_code == 2 and "allow_unknown_fields" in refused.stderr


def test_mcp_search_takes_fields_and_fields_not(kb_dir, run):
    (kb_dir / "groove-schema.toml").write_text(SCHEMA)
    assert run("index", "--kb-path", str(kb_dir), "-q").exit_code == 0
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "groove", "serve", "--kb-path", str(kb_dir),
                                      "--no-watch"], env=dict(os.environ))

    async def go() -> tuple[Any, ...]:
        async with Client(server) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            schema = tools["search"].input_schema["properties"]
            only = await client.call_tool("search", {
                "query": "rollout plan storage cluster", "limit": 10,
                "fields": {"status": ["active", "deprecated"]},
                "fields_not": {"team": ["data"]}})
            bad = await client.call_tool("search", {"query": "rollout", "fields": ["status"]})
            return schema, only, bad

    schema, only, bad = asyncio.run(go())
    assert schema["fields"]["type"] == "object"
    assert schema["fields"]["additionalProperties"]["type"] == "array"
    answer = only.structured_content
    assert {hit["path"] for hit in answer["results"]} == {"deprecated.md"}
    assert answer["filter_applied"]["fields"] == {"status": ["active", "deprecated"]}
    assert answer["filter_applied"]["fields_not"] == {"team": ["data"]}
    assert bad.is_error and "fields" in bad.content[0].text


FORGING_KEY = "zz\nDocuments: 999999\nIndex state: complete"


def test_a_schema_key_with_a_newline_is_refused_and_never_forges_status_lines(kb_dir, run):
    (kb_dir / "groove-schema.toml").write_text(f'[fields.{json.dumps(FORGING_KEY)}]\n')
    refused = run("index", "--kb-path", str(kb_dir), "-q")
    assert refused.exit_code == 2
    assert "field name 'zz\\nDocuments: 999999\\nIndex state: complete' is refused" \
        in refused.stderr and "accepted: a frontmatter key of printable characters" \
        in refused.stderr
    validated = run("validate", "--kb-path", str(kb_dir))
    assert validated.exit_code == 2 and "is refused" in validated.stderr


def test_status_prints_a_recorded_key_with_control_characters_on_one_line(kb_dir, run):
    """An index written before the refusal may hold such a key: status escapes it."""
    from groove.config import load_config
    from groove.kb import KnowledgeBase

    assert run("index", "--kb-path", str(kb_dir), "-q").exit_code == 0
    knowledge = KnowledgeBase(load_config(kb_path=kb_dir))
    try:
        knowledge.store.set_meta(declared_fields=[FORGING_KEY])
    finally:
        knowledge.close()
    out = run("status", "--kb-path", str(kb_dir)).stdout
    assert "Declared fields: zz\\nDocuments: 999999\\nIndex state: complete" in out
    assert [line for line in out.splitlines() if line.startswith("Documents:")] == \
        ["Documents: 4"]

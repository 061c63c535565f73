"""GrooveSeek golden and schema files load, with one note per GrooveSeek-only spelling."""

from __future__ import annotations

import logging

from groove.config.schema import load_schema
from groove.evaluation.golden import parse_golden


def _notes(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "GrooveSeek" in r.getMessage()]


def test_reserved_golden_keys_are_ignored_with_a_note(caplog):
    caplog.set_level(logging.WARNING, "groove")
    queries = parse_golden({
        "defaults": {"k": 5},
        "queries": [
            {"id": "a", "query": "pool", "tags": ["smoke"], "expected": [{"path": "a.md"}]},
            {"id": "b", "query": "queue", "expected": [{"path": "b.md"}]},
        ],
    }, source="old.yml")
    assert [q.id for q in queries] == ["a", "b"]
    notes = _notes(caplog)
    assert len(notes) == 2
    assert "old.yml: top-level `defaults`" in notes[0] and "(id 'a'): `tags`" in notes[1]


def test_schema_type_array_is_list(tmp_path, caplog):
    caplog.set_level(logging.WARNING, "groove")
    schema = tmp_path / "groove-schema.toml"
    schema.write_text('[fields.tags]\ntype = "array"\nmin_length = 1\n', encoding="utf-8")
    [rule] = load_schema(schema).rules
    assert rule.type == "list" and rule.min_length == 1
    assert len(_notes(caplog)) == 1 and "type = 'array'" in _notes(caplog)[0]

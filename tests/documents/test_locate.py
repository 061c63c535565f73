"""The line a search hit starts at, for ``path:line`` links."""

from __future__ import annotations

from groove.documents.locate import hit_line
from groove.models import Hit

TEXT = """---
title: Notes
---
# Notes

Intro line.

## Setup

Install it.
Then run it.

## Usage

Install it.
"""


def _hit(content: str, heading: str | None, line_start: int | None = None) -> Hit:
    return Hit(chunk_id=1, score=1.0, path="a.md", title="Notes", heading=heading, level=2,
               category=None, topic=None, date=None, tags=[], content=content,
               line_start=line_start)


def test_a_prose_hit_starts_at_its_first_line_after_its_heading():
    assert hit_line(TEXT, _hit("Install it.\nThen run it.", "Setup")) == 10
    assert hit_line(TEXT, _hit("Install it.", "Usage")) == 15  # the same text, under its own heading
    assert hit_line(TEXT, _hit("Intro line.", "Notes")) == 6


def test_a_code_hit_keeps_its_own_line_and_a_changed_file_gives_none():
    assert hit_line(TEXT, _hit("anything", None, line_start=42)) == 42
    assert hit_line(TEXT, _hit("text that is no longer there", None)) is None
    assert hit_line(TEXT, _hit("gone from its section", "Setup")) == 8  # at least the heading

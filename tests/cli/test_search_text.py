"""``groove search --format text`` highlighting for a terminal."""

from __future__ import annotations

from groove.cli.search_cmd import MARK_OFF, MARK_ON, highlighted
from groove.search.spans import match_spans


def test_spans_are_marked_in_reverse_video_on_codepoint_boundaries() -> None:
    content = "台風のときは避泊地へ。Typhoon plan"
    spans = match_spans("避泊地 typhoon", content, all_languages=True)
    assert highlighted(content, spans) == (
        f"台風のときは{MARK_ON}避泊地{MARK_OFF}へ。{MARK_ON}Typhoon{MARK_OFF} plan")


def test_no_spans_leave_the_text_alone() -> None:
    assert highlighted("plain", None) == "plain"
    assert highlighted("plain", []) == "plain"

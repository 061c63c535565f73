"""Prompt arguments through a real client: refusals name the argument; whats_new dates."""

from __future__ import annotations

import datetime

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp import Client
from mcp.shared.exceptions import MCPError

from groove.errors import InvalidArgument
from groove.server.prompts import WHATS_NEW_DEFAULT_DAYS, since_date


async def _prompt(url: str, name: str, args: dict) -> str:
    """The prompt's text, or ``"refused: <message>"``."""
    async with Client(url) as client:
        try:
            result = await client.get_prompt(name, args)
        except MCPError as exc:
            return f"refused: {exc}"
    return result.messages[0].content.text


@pytest.mark.parametrize("name, args, message", [
    ("summarize_topic", {}, "prompt 'summarize_topic' needs the argument 'topic' (accepted: topic)"),
    ("deep_dive", {"question": ""}, "needs the argument 'question'"),
    ("summarize_topic", {"topic": "x", "colour": "red"}, "does not take colour; accepted arguments: topic"),
    ("no_such_prompt", {}, "unknown prompt 'no_such_prompt'; available: deep_dive, find_gaps"),
    ("whats_new", {"since": "last week"}, "since 'last week' is not an ISO date; accepted: YYYY-MM-DD"),
])
def test_bad_prompt_arguments_are_refused_by_name(http_server, name, args, message):
    answer = anyio.run(_prompt, http_server.mcp_url, name, args)
    assert answer.startswith("refused: ") and message in answer


def test_whats_new_defaults_to_the_last_30_days(http_server):
    text = anyio.run(_prompt, http_server.mcp_url, "whats_new", {})
    start = (datetime.date.today() - datetime.timedelta(days=30)).isoformat()
    assert f'date_from: "{start}"' in text


def test_find_gaps_cautions_that_no_gap_is_not_coverage(http_server):
    text = anyio.run(_prompt, http_server.mcp_url, "find_gaps", {"topic": "rust"})
    assert "not proof of coverage" in text


@given(st.dates())
def test_since_accepts_every_iso_date(day):
    assert since_date(day.isoformat()) == day.isoformat()


@given(st.text().filter(lambda t: t.strip() != ""))
def test_since_is_an_iso_date_or_refused(text):
    try:
        parsed = since_date(text)
    except InvalidArgument as exc:
        assert "since" in str(exc) and "YYYY-MM-DD" in str(exc)
    else:
        assert datetime.date.fromisoformat(parsed).isoformat() == parsed


def test_since_default_is_relative_to_today():
    assert since_date("", today=datetime.date(2026, 3, 1)) == (
        datetime.date(2026, 3, 1) - datetime.timedelta(days=WHATS_NEW_DEFAULT_DAYS)).isoformat()

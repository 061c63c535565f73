"""The four fixed MCP prompts (docs/mcp.md, 'Prompts'). Not configurable, on purpose.

Every prompt tells the model the same three rules: cite paths, pass on
``low_confidence``, and say plainly when the knowledge base has nothing.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

from groove.errors import InvalidArgument

#: ``whats_new`` without ``since`` looks this many days back.
WHATS_NEW_DEFAULT_DAYS = 30

RULES = (
    "Rules: cite the `path` of every document you rely on (e.g. `notes/setup.md`). "
    "If a search response has `low_confidence: true`, say that the matches are weak "
    "instead of presenting them as answers. If the knowledge base has nothing relevant, "
    "say so plainly: \"The knowledge base does not cover this.\" Do not fill gaps from "
    "general knowledge without labelling it as such."
)


def summarize_topic(topic: str) -> str:
    """Summarise what the knowledge base says about one topic."""
    return (
        f"Summarise what the knowledge base says about: {topic}\n\n"
        "Use the `search` tool (try the topic name and two or three rephrasings; "
        "`list_topics` shows the exact topic and category names you can filter on), "
        "then read the most relevant documents with `get_document`. Give a short "
        "structured summary grouped by sub-theme.\n\n" + RULES
    )


def deep_dive(question: str) -> str:
    """Answer one question thoroughly from the knowledge base."""
    return (
        f"Answer this question from the knowledge base, thoroughly: {question}\n\n"
        "Search several phrasings with `search`, open the best hits with `get_document`, "
        "and use `get_connection_graph` on the most relevant document to find related "
        "notes. Quote the key passages, then answer.\n\n" + RULES
    )


def whats_new(since: str = "") -> str:
    """What changed or was added in the knowledge base since a date (default: 30 days ago)."""
    start = since_date(since)
    return (
        f"Report what is new in the knowledge base since {start} (pass "
        f"`date_from: \"{start}\"` to `search`). Search broad terms from `list_topics`, and "
        "list the new or updated documents with one line each on what they add. Documents "
        "without a date cannot be placed in time and are left out by `date_from`: say so, "
        "and run one search without it if undated documents may matter.\n\n" + RULES
    )


def since_date(since: str, today: datetime.date | None = None) -> str:
    """``since`` as an ISO date (YYYY-MM-DD); empty means 30 days before ``today``.

    Anything else is refused: a date the search cannot compare would silently
    filter every document away.
    """
    today = today or datetime.date.today()
    text = since.strip()
    if not text:
        return (today - datetime.timedelta(days=WHATS_NEW_DEFAULT_DAYS)).isoformat()
    try:
        return datetime.date.fromisoformat(text).isoformat()
    except ValueError:
        raise InvalidArgument(
            f"since {since!r} is not an ISO date; accepted: YYYY-MM-DD (e.g. "
            f"{today.isoformat()}), or leave it out for the last {WHATS_NEW_DEFAULT_DAYS} days"
        ) from None


def find_gaps(topic: str = "") -> str:
    """Find what the knowledge base is missing or inconsistent about."""
    scope = f"about {topic}" if topic else "across its topics (start from `list_topics`)"
    return (
        f"Find gaps in the knowledge base {scope}: questions a reader would ask that "
        "no document answers, documents that contradict each other, and stale material. "
        "Use `search` to probe each candidate gap; a `low_confidence` response or no "
        "results is evidence of a gap. List each gap with the searches that showed it. "
        "Finding no gap is not proof of coverage: say which areas you probed and that "
        "others may still be missing.\n\n" + RULES
    )


PROMPTS: list[Callable[..., Any]] = [summarize_topic, deep_dive, whats_new, find_gaps]

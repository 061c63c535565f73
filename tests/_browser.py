"""The one headless-browser set-up shared by the browser tests (Debian chromium via Playwright)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]

#: Mark a browser test module with ``pytestmark = needs_chromium``.
needs_chromium = pytest.mark.skipif(not os.access(CHROMIUM, os.X_OK),
                                    reason=f"{CHROMIUM} is not installed (apt-get install chromium)")


def launch_browser() -> Iterator[Any]:
    """Yield a headless chromium; the body of each module's ``browser`` fixture."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield browser
        browser.close()


def wait_for_answer(page: Any, query: str | None = None, timeout: float = 30_000) -> None:
    """Wait until the page has shown the answer to ``query`` (to any search when None).

    A selector wait, not ``wait_for_function``: the page's CSP (``script-src 'self'``) may refuse
    the evaluated predicate, and the page sets ``data-query`` and ``data-state`` together, so one
    selector sees both at once.
    """
    selector = '#results[data-state="done"]'
    if query is not None:
        selector += f"[data-query={json.dumps(query, ensure_ascii=False)}]"
    page.wait_for_selector(selector, state="attached", timeout=timeout)

"""The /ui page in headless Chromium: status band, search through /mcp, safe rendering."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from _browser import launch_browser, needs_chromium, wait_for_answer

pytestmark = needs_chromium


@pytest.fixture(scope="module")
def browser() -> Iterator:
    yield from launch_browser()


@pytest.fixture
def page(browser, http_server) -> Iterator:
    context = browser.new_context()
    page = context.new_page()
    page.external_requests = []  # type: ignore[attr-defined]
    page.console_errors = []  # type: ignore[attr-defined]
    page.on("request", lambda r: None if r.url.startswith(http_server.base)
            else page.external_requests.append(r.url))
    page.on("console", lambda m: page.console_errors.append(m.text) if m.type == "error" else None)
    page.goto(http_server.base + "/ui")
    yield page
    context.close()


def search(page, query: str) -> None:
    page.fill("#q", query)
    page.click("button[type=submit]")
    wait_for_answer(page, query)


def shown_path(hit) -> str:
    """The path a hit shows, its ``:line`` (every text hit names the line it starts at) checked
    and dropped."""
    path, colon, line = (hit.locator(".hit-path").text_content() or "").rpartition(":")
    assert colon and line.isdigit() and int(line) >= 1, line
    return path


def test_status_band_shows_the_server(page):
    page.wait_for_selector("#st-documents:text-is('6')", state="attached", timeout=10_000)
    for field in ("version", "chunks", "model", "watcher", "last-indexed", "uptime", "pid"):
        text = page.text_content(f"#st-{field}")
        assert text and text not in ("…", "—"), field
    assert page.text_content("#st-version") == "0.1.0"
    assert page.text_content("#st-watcher").startswith(("watching", "off"))


def test_search_shows_hits_with_highlighted_spans(page, server_kb):
    search(page, "bootstrap script")
    assert page.locator("#results .hit").count() >= 1
    first = page.locator("#results .hit").first
    assert shown_path(first) == "guides/setup.md"
    line = int(first.locator(".hit-path").text_content().rpartition(":")[2])
    lines = (server_kb.kb / "guides" / "setup.md").read_text(encoding="utf-8").split("\n")
    shown = first.locator(".hit-content").text_content() or ""
    assert shown.strip().split("\n")[0].strip() in lines[line - 1]  # the line its text starts at
    assert first.locator(".hit-score").text_content()
    tags = first.locator(".tag").all_text_contents()
    assert tags == ["install", "onboarding"]
    marks = first.locator("mark").all_text_contents()
    assert marks and all(m.lower() in ("bootstrap", "script", "bootstrap script") for m in marks)
    assert page.external_requests == []


def test_multibyte_content_highlights_by_byte_offsets(page):
    search(page, "quetzalcoatlite")
    hit = page.locator("#results .hit").first
    assert shown_path(hit) == "notes/unicode.md"
    assert hit.locator("mark").all_text_contents() == ["quetzalcoatlite"]
    assert "東京 precede the quetzalcoatlite mineral" in hit.locator(".hit-content").text_content()


def test_document_markup_renders_as_text(page):
    search(page, "zanzibarite")
    content = page.locator("#results .hit .hit-content").first.text_content()
    assert "<script>window.__grooveXss = 1</script>" in content
    assert '<img src=x onerror="window.__grooveXss = 2">' in content
    assert page.evaluate("window.__grooveXss") is None
    assert page.locator("#results script, #results img").count() == 0


def test_session_survives_many_searches(page):
    for query in ("executor", "cancellation drop", "logging levels"):
        search(page, query)
    assert "results" in page.text_content("#message")
    assert page.console_errors == []


def test_a_linked_search_runs_on_load_with_its_filters(page, http_server):
    page.goto(http_server.base + "/ui?q=bootstrap+script&tags_any=install&limit=3")
    wait_for_answer(page, "bootstrap script")
    assert page.input_value("#q") == "bootstrap script"
    assert page.input_value("#limit") == "3"
    assert page.input_value("#f-tags_any") == "install"
    assert page.evaluate("document.getElementById('filters').open")
    assert shown_path(page.locator("#results .hit").first) == "guides/setup.md"
    for hit in page.locator("#results .hit").all():
        assert "install" in hit.locator(".tag").all_text_contents()
    page.goto(http_server.base + "/ui?q=bootstrap+script&path_globs=notes/**")
    wait_for_answer(page, "bootstrap script")  # the address's filter is applied, not ignored
    paths = page.locator("#results .hit .hit-path").all_text_contents()
    assert all(p.startswith("notes/") for p in paths), paths


def test_a_search_is_kept_in_the_address_for_reload_and_back(page, http_server):
    page.fill("#q", "bootstrap script")
    page.click("#filters summary")
    page.fill("#f-tags_any", "install, onboarding")
    page.click("button[type=submit]")
    wait_for_answer(page, "bootstrap script")
    assert page.url == (http_server.base
                        + "/ui?q=bootstrap+script&tags_any=install&tags_any=onboarding")
    page.fill("#f-tags_any", "")
    search(page, "quetzalcoatlite")
    assert page.url == http_server.base + "/ui?q=quetzalcoatlite"
    page.reload()  # a bookmark or a shared link lands here
    wait_for_answer(page, "quetzalcoatlite")
    assert shown_path(page.locator("#results .hit").first) == "notes/unicode.md"
    page.go_back()
    wait_for_answer(page, "bootstrap script")
    assert page.input_value("#q") == "bootstrap script"
    assert page.input_value("#f-tags_any") == "install, onboarding"
    assert shown_path(page.locator("#results .hit").first) == "guides/setup.md"


def test_a_code_hit_shows_path_line_and_its_definition(browser, server_factory, tmp_path,
                                                       embedder):
    from _helpers import write_config

    from groove.config import load_config
    from groove.kb import KnowledgeBase

    kb = tmp_path / "code"
    (kb / "pkg").mkdir(parents=True)
    (kb / "pkg" / "tools.py").write_text(
        "import os\n\n\nclass Kitchen:\n    def sharpen_knife(self, blade):\n"
        '        """Sharpen the kitchen knife blade on the whetstone."""\n'
        '        return blade.strip() + " sharpened on the whetstone" + os.sep\n', encoding="utf-8")
    config = write_config(tmp_path / "groove.toml", kb,
                          extra='\n[parsers]\nenabled = ["md", "python"]\n')
    knowledge = KnowledgeBase(load_config(config_path=config), embedder=embedder)
    try:
        knowledge.index()
    finally:
        knowledge.close()
    server = server_factory(config)
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(server.base + "/ui")
        search(page, "sharpen the knife on the whetstone")
        first = page.locator("#results .hit").first
        assert first.locator(".hit-path").text_content() == "pkg/tools.py:4"
        assert first.locator(".hit-heading").text_content() == "class Kitchen"
    finally:
        context.close()

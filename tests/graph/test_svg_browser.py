"""The graph SVG rendered by the real browser (headless Debian chromium, as tests/server/test_ui.py):
no two node boxes overlap, the drawing stays bounded, and the legend is there."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from _browser import launch_browser, needs_chromium
from groove.graph import render_svg
from groove.graph.render import ROWS_PER_COLUMN

pytestmark = needs_chromium


@pytest.fixture(scope="module")
def browser() -> Iterator:
    yield from launch_browser()


def fifty_document_graph() -> dict:
    """A start document, 7 neighbours, 42 at depth 2: a 50-document folder at default fan-out."""
    nodes = [{"id": "doc:start.md", "parent_id": None, "depth": 0, "score": 1.0,
              "path": "start.md", "heading": None, "snippet": "start"}]
    for i in range(7):
        nodes.append({"id": f"chunk:{i}", "parent_id": "doc:start.md", "depth": 1, "score": 0.6,
                      "path": f"notes/n{i}.md", "heading": f"Heading {i}", "snippet": ""})
    for j in range(42):
        nodes.append({"id": f"chunk:{100 + j}", "parent_id": f"chunk:{j % 7}", "depth": 2,
                      "score": 0.4, "path": f"notes/deep/m{j}.md", "heading": "Section",
                      "snippet": ""})
    return {"start": "start.md", "seed_strategy": "all_chunks", "nodes": nodes,
            "stats": {"seeds_used": 1, "knn_queries": 8, "total_nodes": 50}, "truncated": False}


def test_nodes_do_not_overlap_and_the_drawing_is_bounded(browser) -> None:
    page = browser.new_page()
    try:
        page.set_content(render_svg(fifty_document_graph()))
        boxes = page.eval_on_selector_all(
            "g.node rect", "els => els.map(e => { const r = e.getBoundingClientRect();"
                           " return [r.left, r.top, r.right, r.bottom]; })")
        size = page.eval_on_selector("svg", "s => [s.getBoundingClientRect().width,"
                                            " s.getBoundingClientRect().height]")
        legend = page.eval_on_selector_all("g.legend text", "els => els.map(e => e.textContent)")
    finally:
        page.close()
    assert len(boxes) == 50
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            apart = a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]
            assert apart, (a, b)
    tallest_band = ROWS_PER_COLUMN * 58 + 200  # rows × (box + gap) + title, labels, legend
    assert size[1] <= tallest_band  # was one box per row: 42 rows deep
    assert legend == ["start document", "depth 1", "depth 2"]

"""The §5 pipeline end to end: filters before the cut, exclusions on both legs,
the response shape, and real-model retrieval in English and Japanese."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from searchkit import Corpus, Sec, unit

from groove.search.request import SearchRequest

# --- limit under restrictive filters -----------------------------------------------


@pytest.fixture
def crowded(fixed: Corpus) -> Corpus:
    """60 chunks that match strongly on both legs (outside the filter), 7 weak ones inside.

    Deterministic vectors: this is about the cut, not about the model.
    """
    for d in range(6):
        fixed.add(f"baking/b{d}.md", [
            Sec(f"Sourdough bread baking: starter, kneading and oven temperature, tip {d}-{j}.",
                vector=unit((0, 1.0), (1, 0.01 * (d * 10 + j))))
            for j in range(10)], category="baking", tags=("bread",))
    fixed.add("target/t.md", [Sec(f"Bicycle chain maintenance checklist, item {j}.",
                                  vector=unit((0, 0.1), (2 + j, 1.0))) for j in range(7)],
              category="target", tags=("bike",), date="2026-05-01")
    return fixed


def test_restrictive_filter_still_fills_the_limit(crowded: Corpus) -> None:
    unfiltered = crowded.search("how to bake sourdough bread", limit=7)
    assert set(crowded.paths(unfiltered)) <= {f"baking/b{d}.md" for d in range(6)}
    for filters in ({"category": "target"}, {"tags_any": ["bike"]}, {"path_globs": ["target/**"]},
                    {"date_from": "2026-01-01"}, {"path_globs": ["**", "!baking/**"]}):
        response = crowded.search("how to bake sourdough bread", limit=7, **filters)
        assert crowded.paths(response) == ["target/t.md"] * 7, filters
        assert len({h.chunk_id for h in response.results}) == 7


def test_limit_larger_than_what_passes_returns_all_that_pass(crowded: Corpus) -> None:
    response = crowded.search("sourdough bread", limit=20, category="target")
    assert len(response.results) == 7


def test_exclusions_are_applied_before_the_cut_too(fixed: Corpus) -> None:
    for d in range(6):
        fixed.add(f"spam{d}.md", [Sec(f"widget spam offer {d}-{j} buy now", vector=unit((0, 1.0), (1, 0.01 * j)))
                                  for j in range(10)])
    fixed.add("keep.md", [Sec(f"widget notes {j}, a quiet entry", vector=unit((0, 1.0), (2, 3.0)))
                          for j in range(7)])
    response = fixed.search("widget -spam", limit=7)
    assert fixed.paths(response) == ["keep.md"] * 7


# --- exclusions on both legs ---------------------------------------------------------


@pytest.fixture
def excl(fixed: Corpus) -> Corpus:
    q = (0, 1.0)
    # Found ONLY by the vector leg (identical to the query vector, no query word in it).
    fixed.add("vector_only.md", [Sec("Gardening with Tomatoes in small pots on a balcony.", vector=unit(q))])
    fixed.add("fts.md", [Sec("python scripts that count tomatoes", vector=unit((5, 1.0)))])
    fixed.add("keep.md", [Sec("python packaging guide for beginners", vector=unit(q, (1, 0.5)))])
    fixed.add("phrase.md", [Sec("python notes: two words together here", vector=unit(q, (2, 0.5)))])
    fixed.add("apart.md", [Sec("python words and then two, apart", vector=unit(q, (3, 0.5)))])
    fixed.add("jp_tokyo.md", [Sec("サーバー設定の手順（東京リージョン）について説明します。", vector=unit(q, (4, 0.2)))])
    fixed.add("jp_osaka.md", [Sec("サーバー設定の手順（大阪リージョン）について説明します。", vector=unit(q, (6, 0.2)))])
    fixed.add("jp_vec.md", [Sec("東京の天気は晴れです。", vector=unit(q, (7, 0.1)))])
    return fixed


def found(corpus: Corpus, query: str) -> set[str]:
    return set(corpus.paths(corpus.search(query, limit=20)))


def test_term_exclusion_removes_hits_from_both_legs(excl: Corpus) -> None:
    before = found(excl, "python")
    assert {"vector_only.md", "fts.md", "keep.md"} <= before
    for query in ("python -tomatoes", "python -TOMATOES", "-Tomatoes python"):
        after = found(excl, query)
        assert "vector_only.md" not in after and "fts.md" not in after, query
        assert "keep.md" in after


def test_exclusion_also_matches_the_heading(excl: Corpus) -> None:
    excl.add("heading.md", [Sec("python notes for the weekend", heading="Tomato season",
                                vector=unit((0, 1.0), (8, 0.1)))])
    assert "heading.md" in found(excl, "python")
    assert "heading.md" not in found(excl, "python -tomato")


def test_phrase_exclusion_needs_the_words_together(excl: Corpus) -> None:
    after = found(excl, 'python -"two words"')
    assert "phrase.md" not in after
    assert "apart.md" in after and "keep.md" in after


def test_two_character_japanese_exclusion_uses_substring_on_both_legs(excl: Corpus) -> None:
    before = found(excl, "サーバー設定")
    assert {"jp_tokyo.md", "jp_osaka.md", "jp_vec.md"} <= before
    after = found(excl, "サーバー設定 -東京")
    assert "jp_tokyo.md" not in after  # FTS and vector would both find it
    assert "jp_vec.md" not in after  # only the vector leg would find it
    assert "jp_osaka.md" in after


def test_a_hyphen_inside_a_word_is_not_an_exclusion(excl: Corpus) -> None:
    assert "vector_only.md" in found(excl, "python e-mail")


# --- response shape ------------------------------------------------------------------


def test_response_json_shape(excl: Corpus) -> None:
    body = excl.search("python packaging", limit=3, category=None, tags_any=["x"]).to_json()
    assert set(body) == {"results", "low_confidence", "filter_applied"}
    assert body["results"] == [] and body["filter_applied"] == {"tags_any": ["x"]}
    body = excl.search("python packaging", limit=3).to_json()
    assert isinstance(body["low_confidence"], bool)
    hit = body["results"][0]
    assert set(hit) == {"score", "path", "title", "heading", "level", "category", "topic", "date",
                        "tags", "content", "match_spans"}
    assert hit["path"] == "keep.md" and isinstance(hit["score"], float)
    data = hit["content"].encode()
    assert [data[s["start"]:s["end"]] for s in hit["match_spans"]] == [b"python", b"packaging"]


def test_match_spans_for_japanese_by_default_and_empty_when_nothing_matches(excl: Corpus) -> None:
    hits = excl.search("サーバー設定", limit=5).to_json()["results"]
    quoted = [h for h in hits if "サーバー設定" in h["content"]]
    assert quoted
    for hit in quoted:  # every language is highlighted by default (docs/citations.md)
        data = hit["content"].encode()
        assert {data[s["start"]:s["end"]].decode() for s in hit["match_spans"]} == {"サーバー設定"}
    # The contract's ASCII-only rule is one key away.
    ascii_only = excl.config(search={"all_language_spans": False})
    for hit in excl.search("サーバー設定", limit=5, config=ascii_only).to_json()["results"]:
        assert "match_spans" not in hit
    by_path = {h.path: h for h in excl.search("python", limit=20).results}
    assert by_path["vector_only.md"].match_spans == []
    assert by_path["vector_only.md"].to_json()["match_spans"] == []
    # A non-ASCII separator does not suppress the spans (citations.md).
    mixed = {h.path: h for h in excl.search("python、packaging", limit=20).results}
    assert mixed["keep.md"].match_spans == [{"start": 0, "end": 6}, {"start": 7, "end": 16}]


def test_excluded_terms_are_not_highlighted(excl: Corpus) -> None:
    hits = {h.path: h for h in excl.search("python -guide", limit=20).results}
    assert "keep.md" not in hits
    spans = hits["apart.md"].match_spans
    assert [hits["apart.md"].content.encode()[s["start"]:s["end"]] for s in spans] == [b"python"]


# --- end to end through the KnowledgeBase ---------------------------------------------

KB_FILES = {
    "security/api-keys.md": """
        ---
        title: Rotating API credentials
        tags: [security]
        ---
        # Rotating API credentials

        Every service key must be regenerated every 90 days.
        Open the admin console, choose Credentials, press Regenerate,
        and deploy the new secret before revoking the old one.
        """,
    "kitchen/sourdough.md": """
        # Sourdough

        Feed the starter with flour and water the night before.
        Bake the loaf in a hot Dutch oven for forty minutes.
        """,
    "garden/tomatoes.md": """
        # Tomatoes

        Plant tomato seedlings after the last frost, in full sun.
        Water deeply twice a week and stake the stems as they grow.
        """,
    "人事/休暇.md": """
        # 有給休暇の申請

        有給休暇を取得する場合は、取得予定日の三日前までに
        勤怠システムから申請し、上長の承認を受けてください。
        """,
    "総務/会議室.md": """
        # 会議室の予約

        会議室はポータルの予約画面から一週間先まで予約できます。
        使い終わったら机と椅子を元の位置に戻してください。
        """,
    "総務/経費.md": """
        # 経費精算

        出張の交通費は領収書を添付して月末までに精算してください。
        宿泊費には上限があるので事前に確認してください。
        """,
}


@pytest.fixture
def bilingual_kb(make_kb, write_files, tmp_path: Path):
    kb = make_kb(write_files(tmp_path / "kb", KB_FILES))
    summary = kb.index()
    assert summary.indexed == len(KB_FILES)
    return kb


QUESTIONS = [  # paraphrases: little or no word overlap with the document
    ("How often do I have to change my access tokens?", "security/api-keys.md"),
    ("what should I do before the frost when growing vegetables outside", "garden/tomatoes.md"),
    ("休みを取りたいときはどうすればいいですか", "人事/休暇.md"),
    ("出張でかかったお金を払い戻してもらう方法", "総務/経費.md"),
]


def test_paraphrased_questions_find_their_document_first(bilingual_kb) -> None:
    """One index for all questions (indexing is the slow part)."""
    top = {q: [h.path for h in bilingual_kb.search(SearchRequest(query=q, limit=3)).results]
           for q, _ in QUESTIONS}
    assert {q: paths[0] for q, paths in top.items()} == dict(QUESTIONS), top


def test_kb_search_filters_and_shape(bilingual_kb) -> None:
    response = bilingual_kb.search(SearchRequest(query="予約", category="総務", limit=5))
    assert {h.path for h in response.results} <= {"総務/会議室.md", "総務/経費.md"}
    assert response.results and response.results[0].path == "総務/会議室.md"
    assert response.filter_applied == {"category": "総務"}
    body = bilingual_kb.search(SearchRequest(query="API credentials", tags_all=["security"])).to_json()
    assert [h["path"] for h in body["results"]] == ["security/api-keys.md"]
    assert body["results"][0]["title"] == "Rotating API credentials"
    assert body["results"][0]["match_spans"]


# --- scores in rank order ------------------------------------------------------------


def _hits(scores: list[float]) -> list:
    from groove.models import Hit

    return [Hit(chunk_id=i, score=s, path=f"d{i}.md", title="t", heading=None, level=None,
                category=None, topic=None, date=None, tags=[], content="x")
            for i, s in enumerate(scores)]


@given(st.lists(st.floats(min_value=-10, max_value=10, allow_nan=False), max_size=30))
def test_shown_scores_never_increase_down_the_list(scores: list[float]) -> None:
    from groove.search.pipeline import scores_in_rank_order

    hits = _hits(scores)
    scores_in_rank_order(hits)
    assert [h.chunk_id for h in hits] == list(range(len(scores)))  # the order is the answer
    shown = [h.score for h in hits]
    assert shown == sorted(shown, reverse=True)
    for hit, original in zip(hits, scores, strict=True):
        # a capped hit keeps its stage's score beside the shown one; the others are untouched
        assert (hit.raw_score == original) if hit.raw_score is not None else hit.score == original
        assert hit.score <= original


def test_reordered_scores_are_capped_in_the_json() -> None:
    from groove.search.pipeline import scores_in_rank_order

    hits = _hits([0.8, 0.41, 0.49])
    scores_in_rank_order(hits)
    assert [h.to_json()["score"] for h in hits] == [0.8, 0.41, 0.41]
    assert "raw_score" not in hits[1].to_json() and hits[2].to_json()["raw_score"] == 0.49

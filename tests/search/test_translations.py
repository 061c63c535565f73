"""Translations of a result: translated files by path, translated sections by mutual
nearest neighbours, and the translation ranked right behind the section it translates."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from searchkit import Corpus, FixedQueryEmbedder, Sec, unit

from groove.search.translations import (
    mutual_nearest,
    neutral_path,
    raise_translations,
    translated_documents,
    translation_finder,
)

# --- translated files --------------------------------------------------------------------


def test_a_language_tag_before_the_extension_is_what_tells_versions_apart() -> None:
    assert neutral_path("ops/refunds.ja.md") == "ops/refunds.md"
    assert neutral_path("ops/refunds.md") == "ops/refunds.md"
    assert neutral_path("guide.pt-BR.md") == "guide.md"
    assert neutral_path("guide.zh_Hant.md") == "guide.md"
    # A folder named like a language is a folder; a version number is no tag.
    assert neutral_path("it/vpn.md") == "it/vpn.md"
    assert neutral_path("notes/release.v2.md") == "notes/release.v2.md"
    assert neutral_path("archive.tar.gz") == "archive.tar.gz"
    assert neutral_path(".ja.md") == ".ja.md"


_SEGMENT = st.from_regex(r"[a-z0-9_-]{1,8}", fullmatch=True)
_TAG = st.sampled_from(["ja", "en", "de", "pt-BR", "zh_Hant", "fr"])


@given(folders=st.lists(_SEGMENT, max_size=3), stem=_SEGMENT, tag=_TAG,
       ext=st.sampled_from(["md", "txt", "rst"]))
def test_every_tagged_version_maps_to_the_untagged_path(folders, stem, tag, ext) -> None:
    plain = "/".join([*folders, f"{stem}.{ext}"])
    tagged = "/".join([*folders, f"{stem}.{tag}.{ext}"])
    assert neutral_path(tagged) == neutral_path(plain) == plain


@given(st.lists(st.sampled_from(["a.md", "a.ja.md", "a.en.md", "b.md", "it/a.md", "b.fr.md"]),
                unique=True))
def test_translated_documents_are_symmetric_and_never_the_document_itself(paths) -> None:
    found = translated_documents(paths)
    for i, others in found.items():
        assert i not in others
        for j in others:
            assert i in found[j]
            assert neutral_path(paths[i]) == neutral_path(paths[j])
    # Every pair sharing a neutral path is found.
    for i, a in enumerate(paths):
        for j, b in enumerate(paths):
            if i != j and neutral_path(a) == neutral_path(b):
                assert j in found[i]


# --- translated sections -----------------------------------------------------------------


def _rows(draw_values: list[list[float]]) -> np.ndarray:
    m = np.asarray(draw_values, dtype=np.float64).reshape(-1, 4)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.where(norms == 0, 1.0, norms)


_MATRIX = st.integers(0, 6).flatmap(lambda n: st.lists(
    st.lists(st.floats(-1, 1, allow_nan=False), min_size=4, max_size=4), min_size=n, max_size=n))


@given(_MATRIX, _MATRIX)
def test_mutual_nearest_pairs_are_one_to_one_and_each_the_others_best(left, right) -> None:
    a, b = _rows(left), _rows(right)
    pairs = mutual_nearest(a, b)
    assert len({i for i, _ in pairs}) == len(pairs) == len({j for _, j in pairs})
    if pairs:
        sims = a @ b.T
        for i, j in pairs:
            assert sims[i, j] == sims[i].max() == sims[:, j].max()


def test_a_section_one_version_lacks_is_paired_with_nothing() -> None:
    english = _rows([[1, 0, 0, 0], [0, 1, 0, 0]])
    # The Japanese version has the two sections plus one of its own, nearer to the first.
    japanese = _rows([[0.95, 0.05, 0, 0], [0, 1, 0.1, 0], [0.8, 0, 0.6, 0]])
    assert mutual_nearest(english, japanese) == [(0, 0), (1, 1)]


# --- raising the translation ---------------------------------------------------------------

_RANKED = st.lists(st.tuples(st.integers(0, 30), st.floats(0, 1, allow_nan=False)),
                   unique_by=lambda t: t[0], max_size=12).map(
    lambda r: sorted(r, key=lambda t: (-t[1], t[0])))


#: Chunk ids below 20 are written in the question's script, the others in the other one.
def _asked(chunk_id: int) -> bool:
    return chunk_id < 20


#: Translated sections pair one to one: disjoint pairs of chunk ids, both ways.
_PAIRS = st.lists(st.integers(0, 40), unique=True, max_size=16).map(
    lambda ids: {a: b for x, y in zip(ids[::2], ids[1::2], strict=False) for a, b in ((x, y), (y, x))})


@given(ranked=_RANKED, twin_of=_PAIRS, ratio=st.floats(0, 1, allow_nan=False),
       depth=st.integers(0, 12))
def test_translations_move_up_and_nothing_is_lost(ranked, twin_of, ratio, depth) -> None:
    """The rules' guarantees (docs/search.md, "Translations"), for any ranking and pairing."""
    def twins(c):
        return (twin_of[c],) if c in twin_of else ()

    out = raise_translations(ranked, twins, ratio, depth, _asked)
    before, after = dict(ranked), dict(out)
    assert len(after) == len(out)  # no chunk twice
    assert set(before) <= set(after)  # nothing lost
    assert out == sorted(out, key=lambda t: (-t[1], t[0]))
    if ratio <= 0:
        assert out == ranked
        return
    # Only the first results and their translations move.
    touched = {c for c, _ in ranked[:depth]} | {twin_of[c] for c, _ in ranked[:depth]
                                                  if c in twin_of}
    assert all(after[c] == score for c, score in before.items() if c not in touched)
    # Of a first result in the other script and its translation in the question's own
    # script, the asker's version never scores below the other.
    for c, _ in ranked[:depth]:
        twin = twin_of.get(c)
        if twin is not None and not _asked(c) and _asked(twin):
            assert after.get(twin, 0.0) >= after[c], (c, twin)
    # Every other-script translation of the final first results is close behind them.
    for c, score in out[:depth]:
        twin = twin_of.get(c)
        if twin is not None and not _asked(twin):
            assert after[twin] >= ratio * score


def test_the_askers_version_takes_the_better_place_and_the_other_follows() -> None:
    ranked = [(25, 0.9), (1, 0.8), (2, 0.7), (3, 0.1)]  # 25 (other script) translates 3
    out = raise_translations(ranked, lambda c: {25: (3,), 3: (25,)}.get(c, ()), 0.85, 3, _asked)
    assert [c for c, _ in out] == [3, 1, 25, 2]
    assert dict(out) == {3: 0.9, 1: 0.8, 25: pytest.approx(0.85 * 0.9), 2: 0.7}


# --- end to end -----------------------------------------------------------------------------


@pytest.fixture
def bilingual(corpus_factory) -> Corpus:
    """An English note and its Japanese version, plus two other English notes in between.

    The English question finds ``refunds.md # Fees`` first; the Japanese version of that
    section is the vector leg's last (other language, no full-text match).
    """
    corpus = corpus_factory(FixedQueryEmbedder(unit((0, 1.0))))
    fees, days = unit((0, 1.0), (1, 0.3)), unit((2, 1.0), (0, 0.2))
    corpus.add("refunds.md", [Sec("Refund fees for cancelled tickets are listed here.",
                                  heading="Fees", vector=fees),
                              Sec("Refunds take five working days.", heading="Timing", vector=days)],
               title="Refunds")
    for i in range(2):
        corpus.add(f"other{i}.md", [Sec(f"Ticket refunds policy note {i} for passengers.",
                                        vector=unit((0, 1.0), (4 + i, 0.55)))], title=f"Other {i}")
    corpus.add("refunds.ja.md", [Sec("払い戻し手数料の一覧です。", heading="手数料",
                                     vector=unit((0, 0.6), (1, 0.3), (6, 0.6))),
                                 Sec("払い戻しには五営業日かかります。", heading="日数",
                                     vector=unit((2, 1.0), (0, 0.15), (7, 0.3)))],
               title="払い戻し")
    return corpus


def _order(corpus: Corpus, query: str, **search: object) -> list[tuple[str, str | None]]:
    config = corpus.config(search={"document_margin": 0, **search})
    return [(h.path, h.heading) for h in corpus.search(query, config=config, limit=4).results]


def test_the_translation_of_the_best_section_ranks_right_behind_it(bilingual: Corpus) -> None:
    question = "what are the refund fees for a cancelled ticket"
    off = _order(bilingual, question, fusion={"translation_ratio": 0.0})
    assert off[0] == ("refunds.md", "Fees")
    assert ("refunds.ja.md", "手数料") not in off[:3]
    on = _order(bilingual, question)  # the default ratio
    assert on[:2] == [("refunds.md", "Fees"), ("refunds.ja.md", "手数料")]


def test_a_question_in_the_other_language_gets_its_own_version_first(bilingual: Corpus) -> None:
    # A Japanese question: the English section the legs put first (the fixed cross-language
    # offset and imputed score of earlier versions lift it here) gives its place to its
    # Japanese version, and follows it.
    question = "払い戻しの手数料はいくらですか"
    lifted = {"cross_language_offset": 0.04, "cross_language_imputation": 0.5}
    off = _order(bilingual, question, fusion={"translation_ratio": 0.0, **lifted})
    on = _order(bilingual, question, fusion=lifted)
    assert off.index(("refunds.md", "Fees")) < off.index(("refunds.ja.md", "手数料"))
    assert on[0] == ("refunds.ja.md", "手数料")
    assert ("refunds.md", "Fees") in on  # kept among the first results, behind it


def test_a_filtered_out_translation_is_not_added(bilingual: Corpus) -> None:
    question = "what are the refund fees for a cancelled ticket"
    config = bilingual.config(search={"document_margin": 0})
    response = bilingual.search(question, config=config, limit=4, path_globs=["*", "!*.ja.md"])
    assert all(not h.path.endswith(".ja.md") for h in response.results)
    response = bilingual.search(question + " -手数料", config=config, limit=4)
    assert all(h.heading != "手数料" for h in response.results)


@pytest.mark.slow
def test_with_the_real_model_translated_sections_pair_up_and_score_together(real: Corpus) -> None:
    english = real.add("it/vpn.md", [
        Sec("Install the Harbor VPN client from the software portal and sign in with your "
            "staff account.", heading="Client configuration"),
        Sec("If the handshake does not complete on hotel Wi-Fi, switch the client to TCP "
            "port 443 and try again.", heading="Troubleshooting"),
        Sec("Access is revoked on your last working day; return the laptop to IT.",
            heading="Revoking access")], title="Staff VPN")
    japanese = real.add("it/vpn.ja.md", [
        Sec("ソフトウェアポータルから Harbor VPN クライアントをインストールし、社員アカウントで"
            "サインインします。", heading="クライアント設定"),
        Sec("ホテルの Wi-Fi でハンドシェイクが完了しない場合は、クライアントを TCP の 443 番ポート"
            "に切り替えて再試行してください。", heading="トラブルシューティング"),
        Sec("最終出勤日にアクセスは停止されます。ノートPCは情報システム課に返却してください。",
            heading="利用停止")], title="社員用VPN")
    real.add("it/travel.md", [
        Sec("When travelling, connect to the hotel wifi first, open the captive portal, then "
            "start the VPN.", heading="Connecting from a hotel"),
        Sec("A VPN handshake that never completes is usually a blocked port or a wrong clock "
            "on the laptop.", heading="VPN handshake problems")], title="Working while travelling")
    question = "the VPN handshake never completes when I am on hotel wifi, what should I try"
    results = real.search(question, limit=5).results
    score = {(h.path, h.heading): h.score for h in results}
    # Every section finds its own translation (an English question: the Japanese ones).
    twins = translation_finder(real.store, real._vectors)
    assert [twins(c) for c in english] == [(c,) for c in japanese]
    assert [twins(c) for c in japanese] == [(c,) for c in english]
    # The Japanese version scores at least the default ratio of the English section's score.
    assert score[("it/vpn.ja.md", "トラブルシューティング")] >= 0.85 * score[
        ("it/vpn.md", "Troubleshooting")]


def test_without_translated_files_the_stage_looks_nothing_up(corpus_factory,
                                                             monkeypatch) -> None:
    """No file has another-language version: the ranking passes through as it is, and no
    result is asked for its translations (the stage costs nothing)."""
    import groove.search.pipeline as pipeline

    corpus = corpus_factory(FixedQueryEmbedder(unit((0, 1.0))))
    for i in range(3):
        corpus.add(f"refunds{i}.md", [Sec(f"Refund fees note {i} for cancelled tickets.",
                                          vector=unit((0, 1.0), (1 + i, 0.3)))])
    question = "refund fees for a cancelled ticket"
    off = _order(corpus, question, fusion={"translation_ratio": 0.0})

    def no_lookups(*args: object, **kwargs: object) -> object:
        raise AssertionError("looked for translations in an index without any")

    monkeypatch.setattr(pipeline, "translation_finder", no_lookups)
    assert _order(corpus, question) == off

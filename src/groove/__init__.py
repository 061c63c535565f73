"""groove: local knowledge-base search over MCP, a CLI and a small web page.

The public API is re-exported here; implementation lives in the submodules.
Names are resolved lazily (PEP 562) so ``import groove`` stays cheap: the
one-shot CLI should not pay for numpy, SQLite or a model it does not use.

    from groove import KnowledgeBase, SearchRequest, load_config
    kb = KnowledgeBase(load_config(kb_path="notes"))
    kb.index()
    print(kb.search(SearchRequest(query="reciprocal rank fusion")).to_json())
"""

from __future__ import annotations

from groove._lazy import resolver
from groove._version import __version__ as __version__

_EXPORTS = {
    "Config": "groove.config",
    "load_config": "groove.config",
    "ConfigError": "groove.errors",
    "GrooveError": "groove.errors",
    "IndexMismatchError": "groove.errors",
    "InvalidArgument": "groove.errors",
    "ModelLoadError": "groove.errors",
    "NoIndexError": "groove.errors",
    "NotFound": "groove.errors",
    "PathRefused": "groove.errors",
    "IndexSummary": "groove.indexing.indexer",
    "KnowledgeBase": "groove.kb",
    "Hit": "groove.models",
    "SearchResponse": "groove.models",
    "SearchRequest": "groove.search.request",
}

__all__ = sorted([*_EXPORTS, "__version__"])


__getattr__ = resolver(__name__, _EXPORTS, globals())


def __dir__() -> list[str]:
    return __all__

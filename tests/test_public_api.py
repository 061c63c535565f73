"""The public API of ``import groove``: exactly these names, each resolved lazily.

Changing this list is an API change: the test is meant to fail until the
change is deliberate (and noted in the README / docs).
"""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import groove

PUBLIC = {
    "Config": "groove.config",
    "ConfigError": "groove.errors",
    "GrooveError": "groove.errors",
    "Hit": "groove.models",
    "IndexMismatchError": "groove.errors",
    "IndexSummary": "groove.indexing.indexer",
    "InvalidArgument": "groove.errors",
    "KnowledgeBase": "groove.kb",
    "ModelLoadError": "groove.errors",
    "NoIndexError": "groove.errors",
    "NotFound": "groove.errors",
    "PathRefused": "groove.errors",
    "SearchRequest": "groove.search.request",
    "SearchResponse": "groove.models",
    "load_config": "groove.config",
}


def test_all_lists_exactly_the_public_names() -> None:
    assert groove.__all__ == sorted([*PUBLIC, "__version__"])
    assert dir(groove) == groove.__all__


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_each_export_is_the_object_its_module_defines(name: str) -> None:
    assert getattr(groove, name) is getattr(importlib.import_module(PUBLIC[name]), name)


def test_version_is_a_string() -> None:
    assert isinstance(groove.__version__, str) and groove.__version__


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        groove.Nope  # noqa: B018


def test_importing_groove_loads_no_engine() -> None:
    """``import groove`` stays cheap: the exports load on first use, not at import."""
    code = ("import sys, groove; heavy = ('numpy', 'pydantic', 'sqlite3', 'groove.kb', "
            "'groove.config', 'groove.search'); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy or m in heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    lazy = ("import groove, sys; groove.KnowledgeBase; print('groove.kb' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", lazy], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"

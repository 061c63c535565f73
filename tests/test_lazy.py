"""Lazy re-exports: a name is imported on first use, kept, and an unknown one is an AttributeError."""

from __future__ import annotations

import subprocess
import sys

import pytest

from groove._lazy import resolver


def test_a_name_is_imported_on_first_use_and_kept():
    namespace: dict[str, object] = {}
    getattr_ = resolver("pkg", {"sqrt": "math"}, namespace)
    import math

    assert getattr_("sqrt") is math.sqrt
    assert namespace == {"sqrt": math.sqrt}  # the next read does not come back here
    with pytest.raises(AttributeError, match="module 'pkg' has no attribute 'cos'"):
        getattr_("cos")


def test_the_request_model_does_not_load_the_search_pipeline():
    """`groove status` imports the shared CLI options, which need only the request model."""
    code = ("import sys, groove.search.request, groove.search as s; "
            "print('groove.search.pipeline' in sys.modules); s.run_search; "
            "print('groove.search.pipeline' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]

"""Package re-exports resolved on first use (PEP 562).

A package lists where each public name lives; the name is imported the first
time someone reads it and then kept, so importing the package costs nothing
for what the caller does not use (the one-shot CLI must not pay for numpy, the
engines or a model it does not touch).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def resolver(package: str, homes: Mapping[str, str],
             namespace: dict[str, Any]) -> Callable[[str], Any]:
    """A module ``__getattr__``: ``name`` comes from the module ``homes[name]``, then stays in ``namespace``."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        namespace[name] = value
        return value

    return __getattr__

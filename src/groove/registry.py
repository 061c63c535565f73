"""One registry shape for everything pluggable: an id maps to ``"module:Class"``.

Parsers, embedders and rerankers each keep one :class:`Registry`; it is the
only list of their ids, so configuration validation, CLI help and error
messages all read the same table (docs/architecture.md). Adding an
implementation is one line in that table plus one module.

An id ending in ``:*`` is a family: ``"openai:*"`` accepts every
``openai:<name>`` with a non-empty name (remote models are named by the server).

Modules are imported on first use, so an optional dependency (pypdf,
fastembed, ...) is only needed when its id is actually used, and reading the
list of ids costs no import at all. Instances are cached per key, one per
process; a constructor that raises is not cached, so a later call retries.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Hashable, Mapping
from typing import Any, Generic, TypeVar

from groove.errors import GrooveError

F = TypeVar("F")
R = TypeVar("R")


class Registry(Generic[F]):
    """``id -> "module:Class"`` for one kind of implementation.

    ``F`` is what a target is used as (``type[Parser]``, or a factory protocol);
    ``kind`` names the thing in messages (``"parser id"``, ``"embedding model"``)
    and ``error`` is the exception an unknown id raises.
    """

    def __init__(self, kind: str, targets: Mapping[str, str],
                 error: type[GrooveError] = GrooveError) -> None:
        self.kind = kind
        self._targets = dict(targets)
        self._error = error
        self._lock = threading.Lock()
        self._instances: dict[Hashable, Any] = {}

    @property
    def ids(self) -> tuple[str, ...]:
        """Every accepted id, in table order; a family shows as ``openai:<name>``."""
        return tuple(i[:-1] + "<name>" if i.endswith(":*") else i for i in self._targets)

    def accepted(self) -> str:
        """The ids as a comma-separated list, for help texts and messages."""
        return ", ".join(self.ids)

    def _target(self, item_id: object) -> str | None:
        if not isinstance(item_id, str):
            return None
        if item_id in self._targets:
            return self._targets[item_id]
        family, sep, name = item_id.partition(":")
        return self._targets.get(f"{family}:*") if sep and name.strip() else None

    def __contains__(self, item_id: object) -> bool:
        return self._target(item_id) is not None

    def check(self, item_id: str) -> str:
        """``item_id`` if it is known; otherwise the registry's error naming every accepted id."""
        if self._target(item_id) is None:
            raise self._error(f"unknown {self.kind} {item_id!r}; accepted: {self.accepted()}")
        return item_id

    def load(self, item_id: str) -> F:
        """The implementing class (its module imported now if it was not yet)."""
        module_name, class_name = str(self._target(self.check(item_id))).split(":")
        cls: F = getattr(importlib.import_module(module_name), class_name)
        return cls

    def instance(self, key: Hashable, make: Callable[[], R]) -> R:
        """The instance cached under ``key``, made by ``make()`` the first time.

        Made under a lock so two threads never load the same model twice; a
        ``make`` that raises leaves nothing behind.
        """
        with self._lock:
            if key not in self._instances:
                self._instances[key] = make()
            made: R = self._instances[key]
            return made

"""Which module defines each ``groove`` command, imported only when that command is asked for.

A command module registers itself (``@cli.command``) when imported. ``groove
status`` imports the status command alone, not the indexer's progress display,
the server or the evaluation harness: a one-shot command pays for its own
imports only. Help and completion list every command, so they import them all.
"""

from __future__ import annotations

from importlib import import_module

#: Command name → the module under ``groove.cli`` that registers it.
MODULES = {
    "index": "index_cmd",
    "search": "search_cmd",
    "serve": "serve_cmd",
    "status": "status_cmd",
    "eval": "eval_cmd",
    "tune": "tune_cmd",
    "graph": "graph_cmd",
    "links": "links_cmd",
    "doctor": "doctor_cmd",
    "validate": "validate_cmd",
    "service": "service_cmd",
    "get": "get_cmd",
    "ls": "ls_cmd",
}


def load(name: str) -> None:
    """Import the module of command ``name`` (a no-op for a name groove does not have)."""
    module = MODULES.get(name)
    if module is not None:
        import_module(f"groove.cli.{module}")


def load_all() -> None:
    """Import every command module."""
    for name in MODULES:
        load(name)

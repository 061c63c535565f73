"""``[collections.NAME]`` tables: several knowledge bases named in one groove.toml.

Each table takes the keys a single knowledge base's groove.toml takes
(``kb_path`` required); the file's top-level keys are every collection's
defaults, so a table holds only what differs (docs/collections.md). What the
server has once (``[transport]``) stays at the top level, and so do a top-level
folder and index file: a file that names collections keeps each folder in its
table.

Trust: a discovered (untrusted) file may only name folders inside its own
folder, so a ``groove.toml`` found in a cloned repository cannot make the server
read and serve ``~/.ssh`` or another project (docs/configuration.md, "Trust").
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from groove.config._util import _absolute, _deep_merge
from groove.errors import ConfigError

#: A collection name: what a URI, a flag and a tool argument can carry without quoting.
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
NAME_ACCEPTED = ("lowercase letters, digits, '-' and '_', starting with a letter or digit, "
                 "at most 64 characters")
#: Top-level keys a collection does not inherit: each collection has its own folder and index.
NOT_INHERITED = ("kb_path", "db_path")
#: Keys that belong to the one server, never to a collection.
SERVER_KEYS = ("transport",)


def check_name(name: str, where: str) -> str:
    """``name`` when it is a valid collection name; else a one-line ConfigError."""
    if not NAME_RE.match(name):
        raise ConfigError(f"{where}: collection name {name!r} is refused; accepted: {NAME_ACCEPTED}")
    return name


def split_collections(raw: dict[str, Any], where: str) -> dict[str, dict[str, Any]] | None:
    """Take the ``collections`` table out of ``raw``; None when the file names none.

    Every name is checked, every table must be a table holding ``kb_path`` and no
    server-wide key, and a file with collections may not set a top-level
    ``kb_path`` or ``db_path`` (which folder would they be?).
    """
    if "collections" not in raw:
        return None
    tables = raw.pop("collections")
    if not isinstance(tables, dict) or not tables:
        raise ConfigError(f"{where}: collections must hold at least one [collections.NAME] "
                          "table, e.g. [collections.notes] with kb_path = \"notes\"")
    for name, table in tables.items():
        check_name(name, where)
        if not isinstance(table, dict):
            raise ConfigError(f"{where}: collections.{name} is not a table; accepted: a "
                              f"[collections.{name}] table with kb_path and any groove.toml key")
        if table.get("kb_path") is None:
            raise ConfigError(f"{where}: [collections.{name}] has no kb_path; accepted: a path "
                              "to an existing folder")
        for key in (*SERVER_KEYS, "collections"):
            if key in table:
                raise ConfigError(f"{where}: [collections.{name}] sets {key}, which belongs to "
                                  "the whole file; accepted: set it at the top level")
    for key in NOT_INHERITED:
        if raw.get(key) is not None:
            raise ConfigError(f"{where}: {key} at the top level and [collections] in the same "
                              f"file; accepted: {key} inside each [collections.NAME] table "
                              "(or --kb-path to read one folder)")
    return tables


def collection_layer(raw: Mapping[str, Any], table: Mapping[str, Any]) -> dict[str, Any]:
    """One collection's file layer: the top-level keys, then its own table over them."""
    layer = copy.deepcopy(dict(raw))
    golden = layer.get("eval")
    if isinstance(golden, dict):  # one golden file per folder: never shared
        golden.pop("golden", None)
    return _deep_merge(layer, table)


def check_collection_inside(name: str, kb_path: Any, base: Path, source: Path) -> None:
    """Refuse a discovered file's collection whose folder is outside the file's own folder."""
    if not isinstance(kb_path, str):
        return  # the model refuses the type, with its own message
    folder = _absolute(Path(kb_path), base)
    home = base.resolve()
    if folder != home and home not in folder.parents:
        raise ConfigError(f"{source} is untrusted (found by discovery): [collections.{name}] "
                          f"kb_path {folder} is outside the file's folder {home}; accepted: a "
                          "folder inside it, or pass --config to trust the file")

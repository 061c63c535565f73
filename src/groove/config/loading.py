"""Config discovery and loading: defaults, then the file, then CLI values.

Layers, lowest first: built-in defaults, the config file, CLI values
(``load_config(kb_path=..., db_path=..., overrides=...)``).
"""

from __future__ import annotations

import copy
import logging
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeAlias

from groove.config._util import _absolute, _check_kb_dir, _deep_merge, _exists, _get, _is_file
from groove.config.collections import (
    check_collection_inside,
    collection_layer,
    split_collections,
)
from groove.config.compat import upgrade_settings
from groove.config.messages import _show, _validate
from groove.config.model import _PATH_KEYS, CONFIG_FILENAME, MAX_GIT_PARENTS, Config, _Settings
from groove.config.trust import _apply_trust
from groove.errors import ConfigError

#: A path as a caller may give it: a string or a path object.
StrPath: TypeAlias = str | os.PathLike[str]

log = logging.getLogger("groove.config")





def discover_config(cwd: Path, config_path: Path | None = None,
                    kb_path: Path | None = None) -> tuple[Path | None, bool]:
    """Find the config file: return ``(file or None, trusted)``; first hit wins.

    The order and trust rules are in docs/configuration.md.

    ``--config`` (trusted; missing is an error) → ``<cwd>/groove.toml`` →
    ``<kb_path>/groove.toml`` (``kb_path`` as given on the command line, so a
    client that runs groove from elsewhere still finds the file kept with the
    notes) → ``groove.toml`` beside the nearest ``.git`` within cwd and 19
    parents (only the nearest: a nearer repository without a groove.toml hides
    farther ones) → ``groove.toml`` beside the installed ``groove`` program
    (:func:`program_dir`; GrooveSeek's personal set-up keeps it there) → none.
    A ``.git`` *file* (worktree, submodule) counts as a repository. Every
    discovered file is untrusted except the one beside the program, which only
    whoever installed groove can write (checked: see :func:`_private_to_installer`).
    """
    cwd = _absolute(cwd, Path.cwd())
    if config_path is not None:
        path = _absolute(config_path, cwd)
        if not _is_file(path):
            what = "is not a file" if _exists(path) else "does not exist"
            raise ConfigError(f"--config {config_path}: {path} {what}; accepted: an existing groove.toml file")
        return path, True
    local = cwd / CONFIG_FILENAME
    if _is_file(local):
        return local, False
    if kb_path is not None:
        beside_notes = _absolute(kb_path, cwd) / CONFIG_FILENAME
        if _is_file(beside_notes):
            return beside_notes, False
    for folder in [cwd, *cwd.parents][: MAX_GIT_PARENTS + 1]:
        if _exists(folder / ".git"):
            candidate = folder / CONFIG_FILENAME
            if _is_file(candidate):
                return candidate, False
            break
    beside_program = program_dir() / CONFIG_FILENAME
    if _is_file(beside_program):
        return beside_program, _private_to_installer(beside_program)
    return None, True


def program_dir() -> Path:
    """The folder the ``groove`` program is installed in (the environment's scripts folder)."""
    import sysconfig

    return Path(sysconfig.get_path("scripts"))


def _private_to_installer(path: Path) -> bool:
    """True when only the file's owner (this user or root) can change it or its folder.

    A program folder is normally writable only by whoever installed groove, so
    a file there is as trusted as ``--config``; a shared, group- or
    world-writable one is treated like any discovered file.
    """
    import os

    if not hasattr(os, "getuid"):  # pragma: no cover - Windows: the folder's ACL decides
        return True
    try:
        stats = [path.stat(), path.parent.stat()]
    except OSError:
        return False
    return all(s.st_uid in (0, os.getuid()) and not s.st_mode & 0o022 for s in stats)


#: Deepest nesting of tables and arrays accepted. groove's own settings are at
#: most four levels deep; anything far deeper is refused before the recursive
#: merge and validation could hit Python's recursion limit.
MAX_TOML_DEPTH = 32


#: Longest file whose unclosed value is looked for line by line (each try is one parse).
_UNCLOSED_SEARCH_LINES = 2000


def _unclosed_at(text: str, error: str) -> str:
    """Where a value the parser reached the end of the file in began (the parser names no line).

    The statement is the last one after which the lines before it still parse:
    ``; the value starting at line 3 (parsers = ["md",) is never closed``.
    """
    lines = text.split("\n")
    if "end of document" not in error or len(lines) > _UNCLOSED_SEARCH_LINES:
        return ""
    for start in range(len(lines) - 1, -1, -1):
        if not lines[start].strip() or lines[start].lstrip().startswith("#"):
            continue
        try:
            tomllib.loads("\n".join(lines[:start]))
        except tomllib.TOMLDecodeError:
            continue
        shown = lines[start].strip()
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        return f"; the value starting at line {start + 1} ({shown}) is never closed"
    return ""


def _parse_toml(text: str, where: str) -> dict[str, Any]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}: malformed TOML: {exc}{_unclosed_at(text, str(exc))}"
                          ) from None
    except RecursionError:
        raise ConfigError(f"{where}: {_deep_key(text)} is nested too deeply to parse (tables and "
                          f"arrays inside each other); accepted: at most {MAX_TOML_DEPTH} "
                          "levels") from None
    _check_depth(data, where)
    return data


def _deep_key(text: str) -> str:
    """Best guess at the key whose value broke the parser: the last ``key =`` before the pile-up."""
    key = "a value"
    for line in text.splitlines():
        found = re.match(r"\s*([A-Za-z0-9_.\-\"']+)\s*=", line)
        if found:
            key = found.group(1).strip("\"'")
        if line.count("[") + line.count("{") > MAX_TOML_DEPTH:
            return key
    return key


def _check_depth(data: dict[str, Any], where: str) -> None:
    """Refuse values nested deeper than :data:`MAX_TOML_DEPTH`, naming the key (no recursion)."""
    stack: list[tuple[Any, str, int]] = [(data, "", 0)]
    while stack:
        value, key, depth = stack.pop()
        if depth > MAX_TOML_DEPTH:
            raise ConfigError(f"{where}: {key} is nested {MAX_TOML_DEPTH}+ levels deep (tables "
                              f"and arrays inside each other); accepted: at most {MAX_TOML_DEPTH}")
        if isinstance(value, dict):
            stack += [(v, f"{key}.{k}" if key else str(k), depth + 1) for k, v in value.items()]
        elif isinstance(value, list):
            stack += [(v, key, depth + 1) for v in value]


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config file: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start}); TOML files must be UTF-8") from None
    return _parse_toml(text, str(path))


# --------------------------------------------------------------------------- layering






def _resolve_paths(raw: dict[str, Any], validated: _Settings, base: Path) -> None:
    """Replace every path the layer set with its absolute form, relative to ``base``."""
    for keys in _PATH_KEYS:
        if _get(raw, keys) is None:
            continue
        value: Any = validated
        for key in keys:
            value = getattr(value, key)
        parent = _get(raw, keys[:-1]) if len(keys) > 1 else raw
        parent[keys[-1]] = _absolute(value, base)


def _plain(value: Any) -> Any:
    """Overrides as TOML would give them: dicts and lists; None means 'not given'."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _build(raw: dict[str, Any], *, source: Path | None, trusted: bool, where: str,
           kb_path: Path | None, db_path: Path | None, cwd: Path,
           overrides: Mapping[str, Any] | None) -> Config:
    file_layer = upgrade_settings(copy.deepcopy(raw), where)
    validated = _validate(_Settings, file_layer, where)
    _resolve_paths(file_layer, validated, source.parent if source else cwd)
    ignored = None
    if source is not None and not trusted:
        ignored = _apply_trust(file_layer, validated, source)

    if overrides is not None and not isinstance(overrides, Mapping):
        raise ConfigError(f"command-line options: overrides must be a mapping, got {_show(overrides)}")
    cli_layer = upgrade_settings(_plain(overrides or {}), "command-line options")
    if kb_path is not None:
        cli_layer["kb_path"] = kb_path
    if db_path is not None:
        cli_layer["db_path"] = db_path
    cli_where = "command-line options"
    _resolve_paths(cli_layer, _validate(_Settings, cli_layer, cli_where), cwd)

    merged = _deep_merge(file_layer, cli_layer)
    if merged.get("kb_path") is None:
        hint = f" ({ignored})" if ignored else ""
        raise ConfigError(f"no kb_path: pass --kb-path or set kb_path in groove.toml{hint}")
    _check_kb_dir(merged["kb_path"], "--kb-path" if "kb_path" in cli_layer else where)
    db = merged.get("db_path")
    if db is not None and _exists(db) and db.is_dir():
        origin = "--db-path" if "db_path" in cli_layer else where
        raise ConfigError(f"{origin}: db_path {db} is a folder; accepted: a file path")

    config: Config = _validate(Config, merged, where)
    config._source = source
    config._trusted = trusted
    return config


# --------------------------------------------------------------------------- public entry points


def load_config(*, config_path: StrPath | None = None, kb_path: StrPath | None = None,
                db_path: StrPath | None = None, cwd: StrPath | None = None,
                overrides: Mapping[str, Any] | None = None) -> Config:
    """Discover, read, trust-check and validate the configuration (CLI > file > default).

    ``kb_path``/``db_path``/``overrides`` are CLI values: relative paths resolve
    against ``cwd``, paths in the file against the file's folder; each path may
    be a string or a path object. ``overrides`` is a nested dict in TOML shape
    (``{"watch": {"enabled": False}}``); a None value in it means "not given".
    Raises ConfigError for every refusal; a file naming collections needs
    ``kb_path`` here (one folder), :func:`load_settings` reads its collections.
    """
    loaded = load_settings(config_path=config_path, kb_path=kb_path, db_path=db_path, cwd=cwd,
                           overrides=overrides)
    if isinstance(loaded, Config):
        return loaded
    raise ConfigError(f"{next(iter(loaded.values())).source}: names collections "
                      f"({', '.join(loaded)}) and this reads one folder; accepted: --kb-path "
                      "FOLDER (the file's settings without its collections)")


def load_settings(*, config_path: StrPath | None = None, kb_path: StrPath | None = None,
                  db_path: StrPath | None = None, cwd: StrPath | None = None,
                  overrides: Mapping[str, Any] | None = None) -> Config | dict[str, Config]:
    """:func:`load_config`, or one Config per collection when the file names collections.

    A file with ``[collections.NAME]`` tables gives ``{name: Config}`` in the
    file's order (docs/collections.md); with ``kb_path`` given (``--kb-path``)
    the collections are set aside and the one folder is read as always.
    """
    config_path, kb_path, db_path = (None if p is None else Path(p)
                                     for p in (config_path, kb_path, db_path))
    cwd = _absolute(Path(cwd) if cwd is not None else Path.cwd(), Path.cwd())
    source, trusted = discover_config(cwd, config_path, kb_path)
    if source is None:
        log.info("no %s found from %s; using built-in defaults", CONFIG_FILENAME, cwd)
        raw: dict[str, Any] = {}
    else:
        level = ("trusted (--config)" if config_path is not None else
                 "trusted (beside the groove program)" if trusted else
                 "untrusted (found by discovery)")
        log.info("using config %s, %s", source, level)
        raw = _read_toml(source)
    return _build_all(raw, source=source, trusted=trusted, where=str(source or "defaults"),
                      kb_path=kb_path, db_path=db_path, cwd=cwd, overrides=overrides)


def _build_all(raw: dict[str, Any], *, source: Path | None, trusted: bool, where: str,
               kb_path: Path | None, db_path: Path | None, cwd: Path,
               overrides: Mapping[str, Any] | None) -> Config | dict[str, Config]:
    """One Config, or one per collection when ``raw`` names collections and no ``kb_path``
    was given."""
    tables = split_collections(raw, where)
    if tables is None or kb_path is not None:
        return _build(raw, source=source, trusted=trusted, where=where, kb_path=kb_path,
                      db_path=db_path, cwd=cwd, overrides=overrides)
    if db_path is not None:
        raise ConfigError(f"--db-path: {where} names collections, each with its own index "
                          "file; accepted: db_path in a [collections.NAME] table, or --kb-path "
                          "with --db-path for one folder")
    base = source.parent if source is not None else cwd
    out: dict[str, Config] = {}
    for name, table in tables.items():
        if source is not None and not trusted:
            check_collection_inside(name, table["kb_path"], base, source)
        out[name] = _build(collection_layer(raw, table), source=source, trusted=trusted,
                           where=f"{where} [collections.{name}]", kb_path=None, db_path=None,
                           cwd=cwd, overrides=overrides)
    return out


def config_from_toml_text(text: str, *, source: Path | None = None, trusted: bool = True,
                          kb_path: Path | None = None, db_path: Path | None = None,
                          cwd: Path | None = None,
                          overrides: Mapping[str, Any] | None = None) -> Config:
    """Like :func:`load_config` for TOML already in hand (tests, embedding groove).

    ``source`` (if given) is where the text claims to come from: it names the
    file in errors and is the base for relative paths; otherwise ``cwd`` is.
    """
    cwd = _absolute(cwd or Path.cwd(), Path.cwd())
    where = str(source) if source is not None else "<groove.toml text>"
    raw = _parse_toml(text, where)
    loaded = _build_all(raw, source=source, trusted=trusted, where=where,
                        kb_path=kb_path, db_path=db_path, cwd=cwd, overrides=overrides)
    if isinstance(loaded, Config):
        return loaded
    raise ConfigError(f"{where}: names collections ({', '.join(loaded)}) and this reads one "
                      "folder; accepted: kb_path (the settings without the collections)")

"""Configuration: the ``groove.toml`` model tree, discovery, trust and validation.

Attribute paths mirror the TOML keys (``cfg.search.fusion.rrf_k``); the one
exception is ``[search.mmr] lambda``, which is ``cfg.search.mmr.lambda_`` because
``lambda`` is a Python keyword.

Every model forbids unknown keys, refuses non-finite floats and validates
strictly (``threshold = "0.3"`` or ``enabled = 1`` is a mistake worth reporting,
not something to coerce). Every refusal is a :class:`~groove.errors.ConfigError`
naming the dotted key, the bad value, what is accepted and where it came from.

Layers, lowest first: built-in defaults, the config file, CLI values
(``load_config(kb_path=..., db_path=..., overrides=...)``). A file found by
discovery is *untrusted*: it may shape search and indexing but cannot widen the
HTTP exposure, pick the model cache or point ``kb_path`` at the home directory
(SPEC §2 trust rules (a)(b)(c)). ``--config PATH`` makes a file trusted.
"""

from __future__ import annotations

import copy
import ipaddress
import json
import logging
import math
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo

from groove.errors import ConfigError

log = logging.getLogger("groove.config")

CONFIG_FILENAME = "groove.toml"
DB_FILENAME = ".groove.db"
GOLDEN_FILENAME = ".groove-eval.yml"
#: Discovery looks for a ``.git`` in cwd plus at most this many parents.
MAX_GIT_PARENTS = 19

ALWAYS_EXCLUDED_DIRS = (".git", ".svn", "node_modules")
DEFAULT_EXCLUDE_DIRS = (".obsidian", ".git", "node_modules", "target", ".vscode", ".idea")
DEFAULT_BIND = "127.0.0.1:3100"

ModelId = Literal["multilingual-e5-small", "bge-small-en-v1.5", "bge-m3", "multilingual-e5-large"]
RerankerId = Literal["bge-reranker-base", "jina-reranker-v2-ml", "bge-reranker-v2-m3"]
MODEL_IDS: tuple[str, ...] = get_args(ModelId)
RERANKER_IDS: tuple[str, ...] = get_args(RerankerId)
PARSER_IDS = ("md", "txt", "pdf", "docx", "xlsx", "pptx")
LEGACY_PARSER_IDS = ("xls", "doc", "ppt")

MAX_TOKENS = 1_000_000
MAX_K = 100  # a search returns at most 100 hits (SPEC §5), so recall@k beyond is meaningless

_PATH_KEYS = (("kb_path",), ("db_path",), ("model_cache_dir",), ("eval", "golden"))
_HTTP_TRUSTED_ONLY = ("allowed_hosts", "allowed_origins", "max_sessions")
_ORIGIN_RE = re.compile(r"^https?://[^\s/]+$")
_HOSTNAME_RE = re.compile(r"^[A-Za-z0-9.-]+$")


# --------------------------------------------------------------------------- helpers


def parse_bind(bind: str) -> tuple[str, int]:
    """Split ``"host:port"`` (IPv6 as ``"[::1]:3100"``) into ``(host, port)``.

    The host comes back without brackets, ready for a socket call. Raises
    ValueError saying what is wrong.
    """
    host, sep, port_text = bind.rpartition(":")
    if not sep or not host:
        raise ValueError('expected "host:port", e.g. "127.0.0.1:3100"')
    if host.startswith("["):
        inner = host[1:-1] if host.endswith("]") else ""
        try:
            ipaddress.IPv6Address(inner)
        except ValueError:
            raise ValueError(f"{host} is not a bracketed IPv6 address") from None
        host = inner
    elif ":" in host:
        raise ValueError('an IPv6 address needs brackets, e.g. "[::1]:3100"')
    elif not _HOSTNAME_RE.match(host):
        raise ValueError(f"{host!r} is not a host name or IP address")
    if not (port_text.isascii() and port_text.isdigit()):
        raise ValueError(f"port {port_text!r} is not a number")
    port = int(port_text)
    if not 1 <= port <= 65535:
        raise ValueError(f"port {port} is outside 1..65535")
    return host, port


def is_loopback_host(host: str) -> bool:
    """True for ``localhost`` and loopback IPs (127.0.0.0/8, ::1), brackets allowed."""
    host = host.strip("[]")
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _unique(items: list[Any]) -> list[Any]:
    return list(dict.fromkeys(items))


# --------------------------------------------------------------------------- model tree


class _Section(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        allow_inf_nan=False,
        populate_by_name=True,
        protected_namespaces=(),
    )


class QualityFilterConfig(_Section):
    enabled: bool = Field(True, description="true or false")
    threshold: float = Field(0.3, ge=0.0, le=1.0, description="a number in [0, 1]")


class ParsersConfig(_Section):
    enabled: list[str] = Field(
        default_factory=lambda: ["md"],
        description=f"a non-empty list of parser ids from: {', '.join(PARSER_IDS)}",
    )

    @field_validator("enabled")
    @classmethod
    def _known_ids(cls, ids: list[str]) -> list[str]:
        if not ids:
            raise ValueError("an empty list would index nothing")
        for pid in ids:
            if pid in LEGACY_PARSER_IDS:
                raise ValueError(f"{pid!r} is a legacy format, convert to xlsx/docx/pptx")
            if pid not in PARSER_IDS:
                raise ValueError(f"{pid!r} is not a parser id")
        return _unique(ids)


class WatchConfig(_Section):
    enabled: bool = Field(True, description="true or false")
    debounce_ms: int = Field(500, ge=0, le=60_000, description="an integer in 0..60000")


class HttpTransportConfig(_Section):
    bind: str = Field(
        DEFAULT_BIND, description='"host:port" with port 1..65535 (IPv6 as "[::1]:3100")'
    )
    allowed_hosts: list[str] | None = Field(
        None, description='a list of Host values such as "notes.lan:3100" (unset: loopback + bind)'
    )
    allowed_origins: list[str] | None = Field(
        None, description='a list of origins such as "http://notes.lan:3100" (unset: loopback)'
    )
    healthz_public: bool = Field(True, description="true or false")
    max_sessions: int = Field(256, ge=1, le=100_000, description="an integer in 1..100000")

    @field_validator("bind")
    @classmethod
    def _valid_bind(cls, bind: str) -> str:
        parse_bind(bind)
        return bind

    @field_validator("allowed_hosts")
    @classmethod
    def _valid_hosts(cls, hosts: list[str] | None) -> list[str] | None:
        for host in hosts or []:
            if not host or any(c.isspace() for c in host) or "/" in host:
                raise ValueError(f"{host!r} is not a Host value (no scheme, path or spaces)")
        return hosts

    @field_validator("allowed_origins")
    @classmethod
    def _valid_origins(cls, origins: list[str] | None) -> list[str] | None:
        for origin in origins or []:
            if not _ORIGIN_RE.match(origin):
                raise ValueError(f"{origin!r} is not an origin like http://host:port")
        return origins

    @property
    def host(self) -> str:
        """The bind host, IPv6 without brackets."""
        return parse_bind(self.bind)[0]

    @property
    def port(self) -> int:
        return parse_bind(self.bind)[1]


class TransportConfig(_Section):
    kind: Literal["stdio", "http"] = Field("stdio", description='"stdio" or "http"')
    http: HttpTransportConfig = Field(
        default_factory=HttpTransportConfig, description="a [transport.http] table"
    )


class FusionConfig(_Section):
    rrf_k: float = Field(60.0, gt=0.0, description="a number > 0")
    bm25_heading_weight: float = Field(2.0, ge=0.0, description="a number >= 0")
    bm25_context_weight: float = Field(1.0, ge=0.0, description="a number >= 0")
    bm25_content_weight: float = Field(1.0, ge=0.0, description="a number >= 0")


class MmrConfig(_Section):
    enabled: bool = Field(False, description="true or false")
    lambda_: float = Field(0.7, alias="lambda", ge=0.0, le=1.0, description="a number in [0, 1]")
    same_doc_penalty: float = Field(0.0, ge=0.0, description="a number >= 0")


class ParentRetrieverConfig(_Section):
    enabled: bool = Field(False, description="true or false")
    whole_doc_threshold_tokens: int = Field(
        100, ge=1, le=MAX_TOKENS, description=f"an integer in 1..{MAX_TOKENS}"
    )
    max_expanded_tokens: int = Field(
        2000, ge=1, le=MAX_TOKENS, description=f"an integer in 1..{MAX_TOKENS}"
    )


class SearchConfig(_Section):
    min_confidence_ratio: float = Field(1.5, ge=0.0, description="a number >= 0 (0 disables)")
    fusion: FusionConfig = Field(default_factory=FusionConfig, description="a [search.fusion] table")
    mmr: MmrConfig = Field(default_factory=MmrConfig, description="a [search.mmr] table")
    parent_retriever: ParentRetrieverConfig = Field(
        default_factory=ParentRetrieverConfig, description="a [search.parent_retriever] table"
    )


class ContextualConfig(_Section):
    enabled: bool = Field(False, description="true or false")


class BestPracticeConfig(_Section):
    path_templates: list[str] = Field(
        default_factory=list,
        description='a list of relative paths containing "{target}", e.g. "guides/{target}.md"',
    )

    @field_validator("path_templates")
    @classmethod
    def _templates(cls, templates: list[str]) -> list[str]:
        for template in templates:
            if "{target}" not in template:
                raise ValueError(f"{template!r} does not contain {{target}}")
            if template.startswith(("/", "\\")) or Path(template).is_absolute():
                raise ValueError(f"{template!r} is absolute; templates are relative to kb_path")
        return templates


class EvalConfig(_Section):
    golden: Path | None = Field(
        None, strict=False, description=f"a path to a golden YAML file (default <kb_path>/{GOLDEN_FILENAME})"
    )
    history_size: int = Field(10, ge=1, le=1000, description="an integer in 1..1000")
    k_values: list[int] = Field(
        default_factory=lambda: [1, 5, 10],
        min_length=1,
        description=f"a non-empty list of integers in 1..{MAX_K}",
    )
    regression_threshold: float = Field(0.05, ge=0.0, le=1.0, description="a number in [0, 1]")

    @field_validator("k_values")
    @classmethod
    def _k_range(cls, ks: list[int]) -> list[int]:
        for k in ks:
            if not 1 <= k <= MAX_K:
                raise ValueError(f"k = {k} is outside 1..{MAX_K}")
        return sorted(set(ks))


class _Settings(_Section):
    """Everything a groove.toml may hold; every key optional (the file layer)."""

    kb_path: Path | None = Field(None, strict=False, description="a path to an existing folder")
    db_path: Path | None = Field(None, strict=False, description=f"a file path (default <kb_path>/{DB_FILENAME})")
    model: ModelId = Field("multilingual-e5-small", description=f"one of: {', '.join(MODEL_IDS)}")
    reranker: RerankerId | None = Field(
        None, description=f"one of: {', '.join(RERANKER_IDS)} (or leave unset)"
    )
    rerank_by_default: bool = Field(False, description="true or false")
    model_cache_dir: Path | None = Field(None, strict=False, description="a folder path")
    exclude_headings: list[str] = Field(
        default_factory=list, description="a list of non-empty heading substrings"
    )
    exclude_dirs: list[str] = Field(
        default_factory=lambda: list(DEFAULT_EXCLUDE_DIRS),
        description="a list of directory base names (no '/'); replaces the default list",
    )
    quality_filter: QualityFilterConfig = Field(
        default_factory=QualityFilterConfig, description="a [quality_filter] table"
    )
    parsers: ParsersConfig = Field(default_factory=ParsersConfig, description="a [parsers] table")
    watch: WatchConfig = Field(default_factory=WatchConfig, description="a [watch] table")
    transport: TransportConfig = Field(
        default_factory=TransportConfig, description="a [transport] table"
    )
    search: SearchConfig = Field(default_factory=SearchConfig, description="a [search] table")
    contextual: ContextualConfig = Field(
        default_factory=ContextualConfig, description="a [contextual] table"
    )
    best_practice: BestPracticeConfig = Field(
        default_factory=BestPracticeConfig, description="a [best_practice] table"
    )
    eval: EvalConfig = Field(default_factory=EvalConfig, description="an [eval] table")

    @field_validator("exclude_headings")
    @classmethod
    def _headings(cls, headings: list[str]) -> list[str]:
        if any(not h for h in headings):
            raise ValueError("an empty substring would exclude every section")
        return headings

    @field_validator("exclude_dirs")
    @classmethod
    def _dir_names(cls, names: list[str]) -> list[str]:
        for name in names:
            if not name or name in (".", "..") or "/" in name or "\\" in name:
                raise ValueError(
                    f"{name!r} is not a directory base name (use .grooveignore for paths)"
                )
        return _unique(names)


class Config(_Settings):
    """The resolved configuration every module receives.

    ``kb_path`` and ``db_path`` are absolute after :func:`load_config` or
    :meth:`defaults_for`; ``db_path`` defaults to ``<kb_path>/.groove.db`` and
    ``eval.golden`` to ``<kb_path>/.groove-eval.yml``. ``source`` is the file the
    values came from (None: defaults only) and ``trusted`` whether it was given
    with ``--config`` (True when there is no file).
    """

    kb_path: Path = Field(strict=False, description="a path to an existing folder")
    db_path: Path = Field(strict=False, description=f"a file path (default <kb_path>/{DB_FILENAME})")

    _source: Path | None = PrivateAttr(None)
    _trusted: bool = PrivateAttr(True)

    @model_validator(mode="before")
    @classmethod
    def _derived_paths(cls, data: Any) -> Any:
        if not isinstance(data, Mapping) or data.get("kb_path") is None:
            return data
        data = dict(data)
        kb = Path(data["kb_path"])
        if data.get("db_path") is None:
            data["db_path"] = kb / DB_FILENAME
        ev = data.get("eval")
        if ev is None:
            data["eval"] = {"golden": kb / GOLDEN_FILENAME}
        elif isinstance(ev, Mapping) and ev.get("golden") is None:
            data["eval"] = {**ev, "golden": kb / GOLDEN_FILENAME}
        elif isinstance(ev, EvalConfig) and ev.golden is None:
            data["eval"] = ev.model_copy(update={"golden": kb / GOLDEN_FILENAME})
        return data

    @property
    def source(self) -> Path | None:
        return self._source

    @property
    def trusted(self) -> bool:
        return self._trusted

    @classmethod
    def defaults_for(cls, kb_path: Path | str, *, db_path: Path | str | None = None) -> Config:
        """Built-in defaults for ``kb_path`` (resolved; must be an existing folder)."""
        kb = _absolute(Path(kb_path), Path.cwd())
        _check_kb_dir(kb, "kb_path")
        data: dict[str, Any] = {"kb_path": kb}
        if db_path is not None:
            data["db_path"] = _absolute(Path(db_path), Path.cwd())
        return _validate(cls, data, "defaults")


# --------------------------------------------------------------------------- error messages


def _show(value: Any) -> str:
    """Render a value the way the user wrote it in TOML (roughly)."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, float) and not math.isfinite(value):
        text = "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    elif isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
    elif isinstance(value, Path):
        text = json.dumps(str(value), ensure_ascii=False)
    elif isinstance(value, list | tuple):
        text = "[" + ", ".join(_show(v) for v in value) + "]"
    elif isinstance(value, Mapping):
        text = "{" + ", ".join(f"{k} = {_show(v)}" for k, v in value.items()) + "}"
    else:
        text = repr(value)
    return text if len(text) <= 200 else text[:197] + "..."


def _dotted(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _lookup(model: type[BaseModel], key: str) -> FieldInfo | None:
    for name, info in model.model_fields.items():
        if key in (name, info.alias):
            return info
    return None


def _submodel(info: FieldInfo) -> type[BaseModel] | None:
    ann = info.annotation
    return ann if isinstance(ann, type) and issubclass(ann, BaseModel) else None


def _walk(root: type[BaseModel], loc: tuple[Any, ...]) -> tuple[type[BaseModel] | None, FieldInfo | None]:
    """The model owning the last key of ``loc`` and that key's FieldInfo."""
    model: type[BaseModel] | None = root
    owner, info = root, None
    for part in loc:
        if isinstance(part, int):
            continue
        if model is None:
            break
        found = _lookup(model, part)
        if found is None:
            return model, None
        owner, info, model = model, found, _submodel(found)
    return owner, info


def _toml_keys(model: type[BaseModel]) -> list[str]:
    return [info.alias or name for name, info in model.model_fields.items()]


def _describe(err: Mapping[str, Any], where: str, root: type[BaseModel]) -> str:
    loc = tuple(err["loc"])
    key = _dotted(loc)
    if err["type"] == "extra_forbidden":
        owner: type[BaseModel] | None = root
        if loc[:-1]:
            parent = _walk(root, loc[:-1])[1]
            owner = _submodel(parent) if parent is not None else None
        section = f"in [{_dotted(loc[:-1])}]" if loc[:-1] else "at top level"
        keys = ", ".join(_toml_keys(owner)) if owner else "?"
        return f"{where}: unknown key {key} = {_show(err.get('input'))}; accepted {section}: {keys}"
    _, info = _walk(root, loc)
    accepted = info.description if info is not None and info.description else "see groove.toml.example"
    if err["type"] == "finite_number":
        problem = "nan and inf are refused"
    elif err["type"] == "missing":
        return f"{where}: {key} is required; accepted: {accepted}"
    else:
        problem = str(err["msg"]).removeprefix("Value error, ")
    return f"{where}: {key} = {_show(err.get('input'))} is refused ({problem}); accepted: {accepted}"


def _validate(model: type[_Settings], data: Mapping[str, Any], where: str) -> Any:
    """Validate ``data`` as ``model``; every problem becomes one line of a ConfigError."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        lines = [_describe(err, where, model) for err in exc.errors(include_url=False)]
        raise ConfigError("\n".join(lines)) from None


# --------------------------------------------------------------------------- discovery


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:
        return False


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:
        return False


def discover_config(cwd: Path, config_path: Path | None = None) -> tuple[Path | None, bool]:
    """SPEC §2 discovery: return ``(file or None, trusted)``; first hit wins.

    ``--config`` (trusted; missing is an error) → ``<cwd>/groove.toml`` →
    ``groove.toml`` beside the nearest ``.git`` within cwd and 19 parents (only
    the nearest: a nearer repository without a groove.toml hides farther ones)
    → none. A ``.git`` *file* (worktree, submodule) counts as a repository.
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
    for folder in [cwd, *cwd.parents][: MAX_GIT_PARENTS + 1]:
        if _exists(folder / ".git"):
            candidate = folder / CONFIG_FILENAME
            return (candidate, False) if _is_file(candidate) else (None, True)
    return None, True


def _parse_toml(text: str, where: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}: malformed TOML: {exc}") from None


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


def _absolute(path: Path, base: Path) -> Path:
    path = path.expanduser()
    return (path if path.is_absolute() else base / path).resolve()


def _get(data: Mapping[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        if not isinstance(data, Mapping) or key not in data:
            return None
        data = data[key]
    return data


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


def _deep_merge(base: dict[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    for key, value in top.items():
        if isinstance(value, Mapping) and isinstance(base.get(key), dict):
            _deep_merge(base[key], value)
        else:
            base[key] = copy.deepcopy(value)
    return base


def _plain(value: Any) -> Any:
    """Overrides as TOML would give them: dicts and lists; None means 'not given'."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _unsafe_kb_reason(kb: Path, config_dir: Path) -> str | None:
    """Why an untrusted file may not choose ``kb`` (SPEC §2 rule c), or None."""
    if kb.parent == kb:
        return "it is a filesystem root"
    try:
        home = Path.home().resolve()
    except (RuntimeError, KeyError, OSError):
        home = None
    if home is not None and kb == home:
        return "it is the home directory"
    if home is not None and kb in home.parents:
        return "it is an ancestor of the home directory"
    if kb in config_dir.resolve().parents:
        return "it is an ancestor of the config file's folder"
    return None


def _apply_trust(raw: dict[str, Any], validated: _Settings, source: Path) -> str | None:
    """Strip what an untrusted file may not set; return why kb_path was dropped, if it was."""
    http = _get(raw, ("transport", "http"))
    if isinstance(http, dict):
        bind = validated.transport.http
        if "bind" in http and not is_loopback_host(bind.host):
            http["bind"] = f"127.0.0.1:{bind.port}"
            log.warning("%s is untrusted (found by discovery): transport.http.bind %s moved to %s; "
                        "pass --config to trust it", source, bind.bind, http["bind"])
        for key in _HTTP_TRUSTED_ONLY:
            if key in http:
                del http[key]
                log.warning("%s is untrusted (found by discovery): transport.http.%s ignored; "
                            "pass --config to trust it", source, key)
    if "model_cache_dir" in raw:
        del raw["model_cache_dir"]
        log.warning("%s is untrusted (found by discovery): model_cache_dir ignored; "
                    "pass --config to trust it", source)
    reason = None
    if raw.get("kb_path") is not None:
        reason = _unsafe_kb_reason(raw["kb_path"], source.parent)
        if reason:
            log.warning("%s is untrusted (found by discovery): kb_path %s ignored because %s",
                        source, raw["kb_path"], reason)
            reason = f"kb_path {raw.pop('kb_path')} in {source} was ignored because {reason}"
    return reason


def _check_kb_dir(kb: Path, origin: str) -> None:
    if not _exists(kb):
        raise ConfigError(f"{origin}: kb_path {kb} does not exist; accepted: an existing folder")
    try:
        is_dir = kb.is_dir()
    except OSError:
        is_dir = False
    if not is_dir:
        raise ConfigError(f"{origin}: kb_path {kb} is not a folder; accepted: an existing folder")


def _build(raw: dict[str, Any], *, source: Path | None, trusted: bool, where: str,
           kb_path: Path | None, db_path: Path | None, cwd: Path,
           overrides: Mapping[str, Any] | None) -> Config:
    file_layer = copy.deepcopy(raw)
    validated = _validate(_Settings, file_layer, where)
    _resolve_paths(file_layer, validated, source.parent if source else cwd)
    ignored = None
    if source is not None and not trusted:
        ignored = _apply_trust(file_layer, validated, source)

    if overrides is not None and not isinstance(overrides, Mapping):
        raise ConfigError(f"command-line options: overrides must be a mapping, got {_show(overrides)}")
    cli_layer = _plain(overrides or {})
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


def load_config(*, config_path: Path | None = None, kb_path: Path | None = None,
                db_path: Path | None = None, cwd: Path | None = None,
                overrides: Mapping[str, Any] | None = None) -> Config:
    """Discover, read, trust-check and validate the configuration (CLI > file > default).

    ``kb_path``/``db_path``/``overrides`` are CLI values: relative paths resolve
    against ``cwd``, paths in the file against the file's folder. ``overrides``
    is a nested dict in TOML shape (``{"watch": {"enabled": False}}``); a None
    value in it means "not given". Raises ConfigError for every refusal.
    """
    cwd = _absolute(cwd or Path.cwd(), Path.cwd())
    source, trusted = discover_config(cwd, config_path)
    if source is None:
        log.info("no %s found from %s; using built-in defaults", CONFIG_FILENAME, cwd)
        raw: dict[str, Any] = {}
    else:
        level = "trusted (--config)" if trusted else "untrusted (found by discovery)"
        log.info("using config %s, %s", source, level)
        raw = _read_toml(source)
    return _build(raw, source=source, trusted=trusted, where=str(source or "defaults"),
                  kb_path=kb_path, db_path=db_path, cwd=cwd, overrides=overrides)


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
    return _build(raw, source=source, trusted=trusted, where=where,
                  kb_path=kb_path, db_path=db_path, cwd=cwd, overrides=overrides)

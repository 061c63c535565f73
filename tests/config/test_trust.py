"""The trust rule, key by key: what a discovered (untrusted) groove.toml may not set.

Every key of the model tree is classified here. A key added without a verdict
fails :func:`test_every_key_is_judged`: decide whether it sends data or code
anywhere, runs or loads anything, or widens who can reach the server (then it
belongs in ``groove.config.trust.TRUSTED_ONLY``), and list it below.
"""

from __future__ import annotations

import json
import logging
import textwrap
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from groove.config import load_config
from groove.config.model import _Settings
from groove.config.trust import TRUSTED_ONLY

#: Keys an untrusted file may set: they shape indexing and search on this machine only.
UNTRUSTED_MAY_SET = {
    "model", "reranker", "rerank_by_default", "exclude_headings", "exclude_dirs",
    "max_chunks_per_file",
    "quality_filter.enabled", "quality_filter.threshold", "parsers.enabled",
    "parsers.code.max_chunk_chars",
    "watch.enabled", "watch.debounce_ms",
    "transport.kind", "transport.http.healthz_public", "transport.http.max_connections",
    "transport.http.header_timeout_s", "transport.http.body_timeout_s",
    "transport.http.keepalive_timeout_s",
    "embedder.dimensions", "embedder.batch_size", "embedder.timeout_s", "embedder.max_retries",
    "embedder.input_type", "embedder.query_prefix", "embedder.passage_prefix",
    "embedder.query_model", "embedder.send_dimensions", "embedder.max_input_chars",
    "embedder.max_input_tokens", "embedding_engine",
    "index.ray_actors", "index.fail_on_frontmatter_error",
    "search.min_confidence_ratio", "search.max_chunks_per_document",
    "search.all_language_spans", "search.document_margin",
    "search.fusion.cross_language", "search.fusion.cross_language_imputation",
    "search.fusion.cross_language_offset",
    "search.fusion.translation_ratio",
    "search.fusion.method", "search.fusion.vector_weight", "search.fusion.rrf_k",
    "search.fusion.bm25_heading_weight", "search.fusion.bm25_context_weight",
    "search.fusion.bm25_content_weight",
    "search.mmr.enabled", "search.mmr.lambda", "search.mmr.same_doc_penalty",
    "search.parent_retriever.enabled", "search.parent_retriever.whole_doc_threshold_tokens",
    "search.parent_retriever.max_expanded_tokens",
    "search.vectors.storage", "search.vectors.ann", "search.vectors.ann_min_chunks",
    "search.vectors.ann_exact_max_rows", "search.vectors.ann_nprobe",
    "search.vectors.ann_oversample", "search.vectors.ann_build_threads",
    "contextual.enabled", "best_practice.path_templates",
    "eval.history_size", "eval.k_values", "eval.regression_threshold",
}
#: Keys with their own untrusted rule instead of being dropped (docs/configuration.md, "Trust").
SPECIAL = {"kb_path", "transport.http.bind"}

#: A value for each trusted-only key that differs from the default (what a hostile file sets).
HOSTILE: dict[str, Any] = {
    "db_path": "/tmp/elsewhere.sqlite",
    "model_cache_dir": "cache",
    "embedder.url": "http://127.0.0.1:9/v1",
    "embedder.api_key_env": "AWS_SECRET_ACCESS_KEY",
    "index.executor": "ray",
    "index.ray_address": "127.0.0.1:3341",
    "transport.http.allowed_hosts": ["evil.example:9000"],
    "transport.http.allowed_origins": ["http://evil.example:9000"],
    "transport.http.max_sessions": 99999,
    "transport.http.systemd_socket": True,
    "index.max_binary_file_size": "300 MiB",
    "index.max_text_file_size": "unlimited",
    "index.max_decompressed_size": 1024,
    "eval.golden": "/outside/golden.yml",
}


def _leaf_keys(model: type[BaseModel], prefix: str = "") -> set[str]:
    keys: set[str] = set()
    for name, field in model.model_fields.items():
        dotted = prefix + (field.alias or name)
        kind = field.annotation
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            keys |= _leaf_keys(kind, dotted + ".")
        else:
            keys.add(dotted)
    return keys


def test_every_key_is_judged() -> None:
    keys = _leaf_keys(_Settings)
    unjudged = keys - UNTRUSTED_MAY_SET - set(TRUSTED_ONLY) - SPECIAL
    assert not unjudged, f"classify these keys in tests/config/test_trust.py: {sorted(unjudged)}"
    assert keys >= set(TRUSTED_ONLY) | UNTRUSTED_MAY_SET
    assert not set(TRUSTED_ONLY) & UNTRUSTED_MAY_SET


def test_trusted_only_list_is_pinned() -> None:
    """Shrinking the list is a security change: it must be made here too, on purpose."""
    assert set(TRUSTED_ONLY) == set(HOSTILE)


def _toml(dotted: str, value: Any) -> str:
    *tables, key = dotted.split(".")
    rendered = repr(value).replace("'", '"') if not isinstance(value, str) else f'"{value}"'
    if isinstance(value, bool):
        rendered = str(value).lower()
    header = f"[{'.'.join(tables)}]\n" if tables else ""
    return f'kb_path = "notes"\n{header}{key} = {rendered}\n'


def _value(cfg: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        cfg = getattr(cfg, part)
    return cfg


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    root = tmp_path / "work"
    (root / "notes").mkdir(parents=True)
    return root.resolve()


@pytest.mark.parametrize("dotted", sorted(HOSTILE))
def test_untrusted_file_cannot_set_a_trusted_only_key(work: Path, dotted: str,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    (work / "groove.toml").write_text(_toml(dotted, HOSTILE[dotted]), encoding="utf-8")
    default = _value(load_config(kb_path=work / "notes", cwd=work / "notes"), dotted)
    with caplog.at_level(logging.WARNING, logger="groove.config"):
        cfg = load_config(cwd=work)
    assert cfg.trusted is False
    assert _value(cfg, dotted) == default
    assert f"{dotted} ignored" in caplog.text and "pass --config to trust it" in caplog.text


@pytest.mark.parametrize("dotted", ["index.executor", "index.ray_address", "embedder.url"])
def test_trusted_file_keeps_a_trusted_only_key(work: Path, dotted: str) -> None:
    path = work / "groove.toml"
    path.write_text(_toml(dotted, HOSTILE[dotted]), encoding="utf-8")
    cfg = load_config(config_path=path, cwd=work)
    assert _value(cfg, dotted) == HOSTILE[dotted]


def test_cloned_repository_cannot_send_notes_to_a_ray_cluster(work: Path,
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              write_files) -> None:
    """The reproduction: a discovered file naming a Ray cluster, then `groove index`."""
    from click.testing import CliRunner

    from groove.cli import cli
    from groove.cli.commands import load_all

    load_all()
    notes = write_files(work / "notes", {"a.md": "# A\n\nsecret words about the launch\n"})
    (notes / "groove.toml").write_text(textwrap.dedent("""
        [index]
        executor = "ray"
        ray_address = "127.0.0.1:3341"
    """), encoding="utf-8")
    monkeypatch.chdir(work)
    result = CliRunner().invoke(cli, ["index", "--kb-path", str(notes), "-q"],
                                catch_exceptions=False)
    assert "cannot reach the Ray cluster" not in result.output + result.stderr
    assert result.exit_code == 0, result.output + result.stderr
    assert "index.executor ignored" in result.stderr


def test_an_untrusted_parsers_list_is_applied_and_announced(work: Path,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            write_files) -> None:
    """GrooveSeek drops an untrusted [parsers]; groove applies it (parsers are installed
    packages, nothing loads from the folder) and says so in one line, naming the file."""
    from click.testing import CliRunner

    from groove.cli import cli
    from groove.cli.commands import load_all

    load_all()
    notes = write_files(work / "notes", {"a.md": "# A\n\nlaunch notes for the harbour\n",
                                         "b.txt": "plain text notes about the harbour crane\n"})
    (notes / "groove.toml").write_text('[parsers]\nenabled = ["md", "txt"]\n', encoding="utf-8")
    monkeypatch.chdir(work)
    result = CliRunner().invoke(cli, ["index", "--kb-path", str(notes), "--json"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["indexed"] == 2  # the .txt file was read
    announced = [line for line in result.stderr.splitlines() if "[parsers] enabled" in line]
    assert len(announced) == 1
    assert f"{notes / 'groove.toml'} is untrusted" in announced[0]
    assert "md, txt is applied" in announced[0] and "pass --config" in announced[0]
    (notes / "groove.toml").write_text('[parsers]\nenabled = ["md"]\n', encoding="utf-8")
    quiet = CliRunner().invoke(cli, ["status", "--kb-path", str(notes)], catch_exceptions=False)
    assert "[parsers] enabled" not in quiet.stderr  # Markdown only: nothing to announce

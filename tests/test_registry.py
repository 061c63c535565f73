"""One registry shape for parsers, embedders and rerankers (groove/registry.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from groove.embedders import EMBEDDERS, MODEL_IDS
from groove.errors import ConfigError, GrooveError, ModelLoadError
from groove.parsers import PARSER_IDS, PARSERS
from groove.registry import Registry
from groove.rerankers import RERANKER_IDS, RERANKERS

REGISTRIES = [(PARSERS, ConfigError), (EMBEDDERS, GrooveError), (RERANKERS, ModelLoadError)]


def test_every_existing_id_is_kept() -> None:
    """Ids may be added; none of these may disappear (indexes and configs record them)."""
    assert {"md", "txt", "pdf", "docx", "xlsx", "pptx"} <= set(PARSER_IDS)
    assert {"multilingual-e5-small", "bge-small-en-v1.5", "bge-m3",
            "multilingual-e5-large"} <= set(MODEL_IDS)
    assert {"bge-reranker-base", "jina-reranker-v2-ml", "bge-reranker-v2-m3"} <= set(RERANKER_IDS)


@pytest.mark.parametrize(("registry", "error"), REGISTRIES)
@given(st.text(max_size=30))
def test_an_unknown_id_is_refused_naming_every_accepted_one(registry: Registry, error, item: str) -> None:
    if item in registry:
        assert registry.check(item) == item
        return
    with pytest.raises(error) as info:
        registry.check(item)
    message = str(info.value)
    assert repr(item) in message and all(i in message for i in registry.ids)


@pytest.mark.parametrize("registry", [PARSERS, EMBEDDERS, RERANKERS])
def test_every_target_names_an_importable_class(registry: Registry) -> None:
    for item in registry.ids:
        assert isinstance(registry.load(item), type)


def test_instances_are_made_once_per_key_and_failures_are_not_kept() -> None:
    registry: Registry[type] = Registry("widget", {"w": "collections:OrderedDict"})
    calls: list[int] = []

    def failing() -> object:
        calls.append(1)
        raise RuntimeError("load failed")

    with pytest.raises(RuntimeError):
        registry.instance("k", failing)
    made = registry.instance("k", dict)
    assert registry.instance("k", failing) is made and calls == [1]


def test_config_and_cli_help_read_the_registries(tmp_path) -> None:
    from click.testing import CliRunner

    from groove.cli import cli
    from groove.cli.commands import load_all
    from groove.config import config_from_toml_text

    (tmp_path / "notes").mkdir()
    with pytest.raises(ConfigError) as info:
        config_from_toml_text('model = "nope"\n', kb_path=tmp_path / "notes")
    assert EMBEDDERS.accepted() in str(info.value)
    load_all()
    runner = CliRunner()
    index_help = " ".join(runner.invoke(cli, ["index", "--help"], terminal_width=400).stdout.split())
    search_help = " ".join(runner.invoke(cli, ["search", "--help"], terminal_width=400).stdout.split())
    assert EMBEDDERS.accepted() in index_help and RERANKERS.accepted() in search_help

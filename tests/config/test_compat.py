"""GrooveSeek configuration keys and values load under groove's names, one note each."""

from __future__ import annotations

import logging

import pytest

from groove.config import config_from_toml_text, load_config
from groove.config.compat import RERANKER_ALIASES
from groove.errors import ConfigError


def _notes(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "GrooveSeek" in r.getMessage()]


@pytest.mark.parametrize("short, full", sorted(RERANKER_ALIASES.items()))
def test_short_reranker_names_load_with_one_note(tmp_path, caplog, short, full):
    caplog.set_level(logging.WARNING, "groove")
    config = config_from_toml_text(f'kb_path = "{tmp_path.as_posix()}"\nreranker = "{short}"\n')
    assert config.reranker == full
    notes = _notes(caplog)
    assert len(notes) == 1 and f"reranker = {short!r}" in notes[0] and full in notes[0]


def test_fastembed_cache_dir_is_model_cache_dir(tmp_path, caplog):
    caplog.set_level(logging.WARNING, "groove")
    (tmp_path / "cache").mkdir()
    config = config_from_toml_text(f'kb_path = "{tmp_path.as_posix()}"\n'
                                   f'fastembed_cache_dir = "{(tmp_path / "cache").as_posix()}"\n')
    assert config.model_cache_dir == tmp_path / "cache"
    assert len(_notes(caplog)) == 1 and "`model_cache_dir`" in _notes(caplog)[0]


def test_old_and_new_key_with_different_values_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="both fastembed_cache_dir .* and model_cache_dir"):
        config_from_toml_text(f'kb_path = "{tmp_path.as_posix()}"\n'
                              'fastembed_cache_dir = "/a"\nmodel_cache_dir = "/b"\n')


def test_cli_reranker_override_takes_the_short_name_too(tmp_path, caplog):
    caplog.set_level(logging.WARNING, "groove")
    config = load_config(kb_path=tmp_path, cwd=tmp_path, overrides={"reranker": "bge-base"})
    assert config.reranker == "bge-reranker-base" and len(_notes(caplog)) == 1


def test_groove_names_give_no_note(tmp_path, caplog):
    caplog.set_level(logging.WARNING, "groove")
    config_from_toml_text(f'kb_path = "{tmp_path.as_posix()}"\nreranker = "bge-reranker-base"\n')
    assert _notes(caplog) == []


def test_short_parser_ids_load_with_one_note_each(tmp_path, caplog):
    caplog.set_level(logging.WARNING, "groove")
    config = config_from_toml_text(f'kb_path = "{tmp_path.as_posix()}"\n[parsers]\n'
                                   'enabled = ["md", "py", "rs", "py"]\n')
    assert config.parsers.enabled == ["md", "python", "rust"]
    notes = _notes(caplog)
    assert len(notes) == 2
    assert "parser id 'py' is GrooveSeek's spelling, read as 'python'" in notes[0]
    assert "parser id 'rs' is GrooveSeek's spelling, read as 'rust'" in notes[1]

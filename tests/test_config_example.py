"""groove.toml.example says what the program does: every key, default, bound and rule.

The example is what most people copy first, so it is read here against the
config model (keys, defaults, the bounds each comment states), the trust rules
and the constants its header quotes, the way tests/test_docs.py reads docs/.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import annotated_types
import pytest
from pydantic import BaseModel

from groove.config.model import MAX_GIT_PARENTS, _Settings

EXAMPLE = Path(__file__).resolve().parents[1] / "groove.toml.example"
_TABLE = re.compile(r"^\[([a-z_.]+)\]\s*$")
_ACTIVE = re.compile(r"^([a-z0-9_]+) = (.+)$")
_COMMENTED = re.compile(r"^# ([a-z0-9_]+) = (.+)$")
#: Bounds as comments state them: 1..100000, [0, 1], (0, 3600], >= 0.
_RANGE = re.compile(r"(?<![\w.])(-?\d+)\.\.(\d+)\b|([\[(])(-?[\d.]+), (-?[\d.]+)\]|>= (-?[\d.]+)")


def _leaves(model: type[BaseModel], section: str = "") -> dict[tuple[str, str], Any]:
    """``(section, key) -> FieldInfo`` for every leaf key of the model tree."""
    out: dict[tuple[str, str], Any] = {}
    for name, field in model.model_fields.items():
        key = field.alias or name
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            out |= _leaves(annotation, f"{section}.{key}" if section else key)
        else:
            out[(section, key)] = field
    return out


def _lines() -> list[tuple[str, str, str, list[str]]]:
    """``(section, key, kind, comment lines above it)`` for every key line, active or commented."""
    section, comment, out = "", [], []
    for raw in EXAMPLE.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if table := _TABLE.match(line):
            section, comment = table.group(1), []
        elif active := _ACTIVE.match(line):
            out.append((section, active.group(1), "active", comment))
        elif commented := _COMMENTED.match(line):
            out.append((section, commented.group(1), "commented", comment))
        elif line.startswith("#"):
            if out and out[-1][3] is comment and out[-1][0] == section:
                comment = []  # a comment after a key starts the next key's block
            comment = [*comment, line[1:].strip()]
        elif not line:
            comment = []
    return out


def _default(field: Any) -> Any:
    return field.get_default(call_default_factory=True)


def _table(data: dict[str, Any], section: str) -> dict[str, Any]:
    for part in filter(None, section.split(".")):
        data = data[part]
    return data


def test_every_key_of_the_model_is_in_the_example_in_its_table():
    leaves = _leaves(_Settings)
    shown = {(section, key) for section, key, _, _ in _lines()}
    assert not sorted(set(leaves) - shown), "groove.toml.example omits these keys"
    assert not sorted(shown - set(leaves)), "groove.toml.example shows keys groove refuses"


def test_every_active_value_is_the_default_and_only_unset_keys_are_commented_out():
    """Values are compared after groove reads them (``"50 MiB"`` is the byte count)."""
    data = tomllib.loads(EXAMPLE.read_text(encoding="utf-8"))
    read = _Settings.model_validate(data).model_dump(by_alias=True)
    defaults = _Settings().model_dump(by_alias=True)
    leaves = _leaves(_Settings)
    active = {(s, k) for s, k, kind, _ in _lines() if kind == "active"}
    for section, key, kind, _ in _lines():
        if kind == "active":
            value, default = _table(read, section)[key], _table(defaults, section)[key]
            assert value == default, f"{section}.{key} reads as {value!r}; the default is {default!r}"
        else:  # "Keys that default to unset are commented out" (or an example beside the default)
            default = _default(leaves[(section, key)])
            assert default is None or (section, key) in active, f"{section}.{key} is commented out"


def _bounds(field: Any) -> tuple[tuple[str, float] | None, float | None]:
    low, high = None, None
    for rule in field.metadata:
        if isinstance(rule, annotated_types.Ge):
            low = ("ge", float(rule.ge))
        elif isinstance(rule, annotated_types.Gt):
            low = ("gt", float(rule.gt))
        elif isinstance(rule, annotated_types.Le):
            high = float(rule.le)
    return low, high


def _stated(comment: str) -> list[tuple[tuple[str, float], float | None]]:
    out = []
    for m in _RANGE.finditer(comment):
        if m.group(1) is not None:
            out.append((("ge", float(m.group(1))), float(m.group(2))))
        elif m.group(3) is not None:
            out.append((("ge" if m.group(3) == "[" else "gt", float(m.group(4))),
                        float(m.group(5))))
        else:
            out.append((("ge", float(m.group(6))), None))
    return out


def test_every_bound_a_comment_states_is_the_one_groove_enforces():
    leaves = _leaves(_Settings)
    checked = 0
    for section, key, _, comment in _lines():
        low, high = _bounds(leaves[(section, key)])
        if low is None and high is None:
            continue  # e.g. bind's "port 1..65535" is about the text, checked by its parser
        for stated in _stated(" ".join(comment)):
            assert stated == (low, high), \
                f"the comment of {section}.{key} states {stated}, groove enforces {(low, high)}"
            checked += 1
    assert checked > 20


def _header() -> str:
    text = EXAMPLE.read_text(encoding="utf-8")
    return text[:text.index("\n\n#", text.index("Unknown keys"))]


def test_the_untrusted_list_names_every_key_an_untrusted_file_may_not_set():
    from groove.config.trust import TRUSTED_ONLY

    header = _header()
    rules = " ".join(header[header.index("An UNTRUSTED file"):header.index("Pass --config")].split())
    missing = [key for key in TRUSTED_ONLY if key not in rules]
    assert not missing, f"groove.toml.example does not say an untrusted file may not set {missing}"


def test_the_discovery_list_and_the_numbers_in_the_header_match_the_program():
    from groove.server.http_limits import ACCEPT_BURST, RESERVED_FDS

    header = " ".join(_header().split())
    assert "<kb_path>/groove.toml" in header and "--kb-path" in header
    assert f"up to {MAX_GIT_PARENTS} parents" in header
    reserve = RESERVED_FDS + 2 * ACCEPT_BURST
    below = re.search(r"stay (\d+) below the open-file limit", " ".join(
        EXAMPLE.read_text(encoding="utf-8").split()))
    assert below is not None and int(below.group(1)) == reserve


@pytest.mark.parametrize("comment", ["integer in 1..100000", "a number in [0, 1]",
                                     "a number in (0, 3600]", "numbers >= 0"])
def test_the_bound_reader_understands_each_form_the_example_uses(comment):
    assert len(_stated(comment)) == 1


def test_the_chunk_bound_comment_says_what_groove_does_with_a_long_file(tmp_path, monkeypatch):
    """The example once said a file over ``max_chunks_per_file`` has "the first ones
    indexed"; nothing is dropped: the last section of such a file is found by ``search``."""
    from click.testing import CliRunner

    from groove.cli import cli
    from groove.cli.commands import load_all

    [comment] = [" ".join(c) for s, k, _, c in _lines() if (s, k) == ("", "max_chunks_per_file")]
    assert "nothing is dropped" in comment and "first ones" not in comment
    load_all()
    kb = tmp_path / "kb"
    kb.mkdir()
    parts = [f"## Part {i}\n\nRoutine entry {i} of the harbour log.\n\n" for i in range(11)]
    parts.append("## Part 11\n\nThe lighthouse keeper retired in the winter storm.\n")
    (kb / "log.md").write_text("".join(parts), encoding="utf-8")
    config = tmp_path / "groove.toml"
    config.write_text(f'kb_path = "{kb.as_posix()}"\nmax_chunks_per_file = 3\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    built = CliRunner().invoke(cli, ["index", "--config", str(config), "--json"])
    assert built.exit_code == 0, built.stderr
    found = CliRunner().invoke(cli, ["search", "--config", str(config), "--format", "json",
                                     "lighthouse keeper retired"])
    assert found.exit_code == 0, found.stderr
    [hit] = [h for h in json.loads(found.stdout)["results"] if "lighthouse" in h["content"]]
    assert hit["path"] == "log.md"

"""Collections: the ``[collections.NAME]`` tables, the merge of their answers, the CLI.

The MCP server over collections is tested in tests/server/test_collections_server.py.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from groove.cli import cli
from groove.cli.commands import load_all
from groove.collections import (
    COSINE_SHARPNESS,
    Collections,
    EmbedderPool,
    SharedModel,
    collection_weights,
    merge_answers,
    merge_hits,
)
from groove.config import load_config, load_settings
from groove.errors import ConfigError, InvalidArgument
from groove.models import Hit, SearchResponse
from groove.search.request import SearchRequest

load_all()

FIXTURES = Path(__file__).parent / "fixtures" / "collections"

THREE = """
exclude_headings = ["Compost"]

[collections.notes-en]
kb_path = "notes-en"

[collections.notes-ja]
kb_path = "notes-ja"

[collections.code]
kb_path = "code"
parsers.enabled = ["python"]
"""


@pytest.fixture
def three(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The three fixture folders and a groove.toml naming them; cwd is their folder."""
    for name in ("notes-en", "notes-ja", "code"):
        shutil.copytree(FIXTURES / name, tmp_path / name)
    (tmp_path / "groove.toml").write_text(THREE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


# --------------------------------------------------------------------------- configuration


def test_each_collection_gets_its_folder_index_and_settings(three: Path) -> None:
    configs = load_settings(config_path=three / "groove.toml")
    assert isinstance(configs, dict)
    assert list(configs) == ["notes-en", "notes-ja", "code"]  # the file's order
    for name, config in configs.items():
        assert config.kb_path == (three / name).resolve()
        assert config.db_path == config.kb_path / ".groove.db"  # one index per folder
        assert config.exclude_headings == ["Compost"]  # a top-level key is every one's default
    assert configs["code"].parsers.enabled == ["python"]
    assert configs["notes-en"].parsers.enabled == ["md"]  # one table's key stays in it


@pytest.mark.parametrize("name", ["Notes", "my notes", "-x", "a/b", "é", "x" * 65])
def test_a_bad_name_is_refused_naming_it_and_what_is_accepted(three: Path, name: str) -> None:
    (three / "groove.toml").write_text(f'[collections."{name}"]\nkb_path = "code"\n')
    with pytest.raises(ConfigError) as err:
        load_settings(config_path=three / "groove.toml")
    message = str(err.value)
    assert repr(name) in message and "lowercase letters, digits" in message
    assert "\n" not in message


@pytest.mark.parametrize(("text", "said"), [
    ("[collections.notes]\nparsers.enabled = [\"md\"]\n", "has no kb_path"),
    ("kb_path = \"code\"\n[collections.notes]\nkb_path = \"notes-en\"\n", "kb_path at the top level"),
    ("[collections.notes]\nkb_path = \"notes-en\"\ntransport.kind = \"http\"\n",
     "sets transport, which belongs to the whole file"),
    ("collections = 3\n", "at least one [collections.NAME] table"),
    ("[collections.notes]\nkb_path = \"missing\"\n", "does not exist"),
    ("[collections.notes]\nkb_path = \"notes-en\"\nmax_chunks_per_file = 0\n",
     "[collections.notes]: max_chunks_per_file = 0 is refused"),
])
def test_a_bad_collections_table_is_one_clear_line(three: Path, text: str, said: str) -> None:
    (three / "groove.toml").write_text(text)
    with pytest.raises(ConfigError) as err:
        load_settings(config_path=three / "groove.toml")
    assert said in str(err.value)


def test_a_discovered_file_may_not_name_a_folder_outside_its_own(three: Path,
                                                                 tmp_path_factory) -> None:
    outside = tmp_path_factory.mktemp("elsewhere")
    (three / "groove.toml").write_text(
        f'[collections.notes]\nkb_path = "notes-en"\n[collections.other]\nkb_path = "{outside}"\n')
    with pytest.raises(ConfigError) as err:
        load_settings(cwd=three)  # found by discovery: untrusted
    assert "untrusted" in str(err.value) and "[collections.other]" in str(err.value)
    assert "--config" in str(err.value)
    (three / "groove.toml").write_text('[collections.up]\nkb_path = "notes-en/.."\n'
                                       '[collections.sub]\nkb_path = "notes-en"\n')
    configs = load_settings(cwd=three)  # its own folder and one below it are inside
    assert isinstance(configs, dict) and set(configs) == {"up", "sub"}
    (three / "groove.toml").write_text(f'[collections.other]\nkb_path = "{outside}"\n')
    trusted = load_settings(config_path=three / "groove.toml", cwd=three)
    assert isinstance(trusted, dict) and trusted["other"].kb_path == outside.resolve()


def test_one_folder_commands_and_kb_path_keep_working(three: Path) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(cwd=three)
    assert "names collections (notes-en, notes-ja, code)" in str(err.value)
    assert "--kb-path" in str(err.value)
    single = load_config(cwd=three, kb_path="notes-en")  # --kb-path: the one folder, as always
    assert single.kb_path == (three / "notes-en").resolve()
    assert single.exclude_headings == ["Compost"]  # with the file's other settings


# --------------------------------------------------------------------------- the merge


def _hit(collection: int, rank: int, score: float) -> Hit:
    return Hit(chunk_id=collection * 1000 + rank, score=score, path=f"c{collection}/{rank}.md",
               title="", heading=None, level=None, category=None, topic=None, date=None,
               tags=[], content="")


_scores = st.lists(st.floats(0.0, 1.0), max_size=12).map(lambda xs: sorted(xs, reverse=True))


@settings(max_examples=200, deadline=None)
@given(lists=st.lists(_scores, min_size=1, max_size=4),
       signals=st.lists(st.one_of(st.none(), st.floats(-1.0, 1.0)), min_size=4, max_size=4),
       limit=st.integers(1, 30))
def test_the_merge_keeps_each_collections_order(lists, signals, limit) -> None:
    """Guarantee: whatever the signals, each collection's hits keep their own order, the
    merged scores never rise down the list, and nothing is lost above the limit."""
    parts = [(f"c{i}", [_hit(i, rank, s) for rank, s in enumerate(scores)])
             for i, scores in enumerate(lists)]
    weights = collection_weights({name: signals[i] for i, (name, _) in enumerate(parts)},
                                 COSINE_SHARPNESS)
    merged = merge_hits(parts, weights, limit)
    assert len(merged) == min(limit, sum(len(hits) for _, hits in parts))
    for name, _ in parts:
        ranks = [h.chunk_id % 1000 for h in merged if h.collection == name]
        assert ranks == list(range(len(ranks)))  # a prefix of its own list, in its order
    assert all(a.score >= b.score for a, b in zip(merged, merged[1:], strict=False))
    assert all(0.0 < w <= 1.0 for w in weights.values())
    assert max(weights.values()) == 1.0


@settings(max_examples=100, deadline=None)
@given(scores=_scores, signal=st.one_of(st.none(), st.floats(-1.0, 1.0)),
       limit=st.integers(1, 20))
def test_one_collection_merged_is_its_own_answer(scores, signal, limit) -> None:
    """Guarantee: a collection searched alone gives exactly its own ranking and scores."""
    answer = SearchResponse(results=[_hit(0, r, s) for r, s in enumerate(scores)],
                            low_confidence=False, filter_applied={}, top_cosine=signal)
    merged = merge_answers([("only", answer)], limit)
    assert [(h.chunk_id, h.score) for h in merged.results] == \
        [(r, s) for r, s in enumerate(scores)][:limit]


def test_a_collection_that_matches_worse_is_weighed_down() -> None:
    weights = collection_weights({"a": 0.90, "b": 0.85, "c": None}, COSINE_SHARPNESS)
    assert weights["a"] == 1.0 and weights["c"] == 1.0  # unmeasured: its order stands
    assert weights["b"] == pytest.approx(math.exp(-COSINE_SHARPNESS * 0.05))
    assert weights["b"] < 0.2  # 0.05 of cosine below the best counts for about an eighth


# --------------------------------------------------------------------------- one model, CLI


def test_collections_with_one_model_share_one_loaded_copy(three: Path) -> None:
    configs = load_settings(config_path=three / "groove.toml")
    assert isinstance(configs, dict)
    pool = EmbedderPool()
    kbs = Collections(configs, embedders=pool)
    try:
        models = {id(kb._load_embedder()) for _, kb in kbs}
        assert len(models) == 1 and pool.loaded == 1
    finally:
        kbs.close()


def test_a_search_over_three_collections_embeds_the_question_once(three: Path) -> None:
    configs = load_settings(config_path=three / "groove.toml")
    assert isinstance(configs, dict)
    kbs = Collections(configs)
    try:
        for _, kb in kbs:
            kb.index()
        shared = kbs["notes-en"]._load_embedder()
        assert isinstance(shared, SharedModel)
        asked: list[str] = []
        model_query = shared.model.embed_query

        def counted(text: str) -> np.ndarray:
            asked.append(text)
            return model_query(text)

        shared.model.embed_query = counted  # type: ignore[method-assign]
        first = kbs.search(SearchRequest(query="how warm should the water for green tea be"))
        assert len(asked) == 1 and {hit.collection for hit in first.results} >= {"notes-ja"}
        again = kbs.search(SearchRequest(query="how warm should the water for green tea be"))
        assert len(asked) == 1
        assert [(h.collection, h.path) for h in again.results] == [
            (h.collection, h.path) for h in first.results]
        vector = shared.embed_query("a question")
        vector[:] = 0.0  # a caller changing its copy changes nobody else's
        assert np.linalg.norm(shared.embed_query("a question")) == pytest.approx(1.0, abs=1e-3)
    finally:
        kbs.close()


def test_index_search_and_status_over_three_collections(three: Path) -> None:
    code, out, err = run("index", "-q", "--config", "groove.toml")
    assert code == 0, err
    assert [line.split(":")[0] for line in out.splitlines()] == ["notes-en", "notes-ja", "code"]

    asked = {"notes-en": "how often should a sourdough starter be fed",
             "notes-ja": "緑茶を淹れるお湯は何度がいい",
             "code": "function computing the area of a polygon"}
    expected = {"notes-en": "sourdough.md", "notes-ja": "ryokucha.md", "code": "geometry.py"}
    for name, question in asked.items():
        code, out, err = run("search", question, "--config", "groove.toml")
        assert code == 0, err
        first = json.loads(out)["results"][0]
        assert (first["collection"], first["path"]) == (name, expected[name])
        assert set(json.loads(out)["collections"]) == {"notes-en", "notes-ja", "code"}

    code, out, _ = run("search", asked["code"], "--config", "groove.toml",
                       "--collection", "notes-en", "--format", "text")
    assert code == 0 and "collection: notes-en" in out and "collection: code" not in out

    code, out, _ = run("search", asked["notes-en"], "--config", "groove.toml", "--format", "files")
    first_file = Path(out.splitlines()[0])  # a full path: two collections may share a name
    assert code == 0 and first_file == (three / "notes-en" / "sourdough.md").resolve()

    code, out, err = run("search", "x", "--config", "groove.toml", "--collection", "nope")
    assert code == 2 and "'nope' is not a collection here; accepted: notes-en, notes-ja, code" in err

    code, out, _ = run("status", "--config", "groove.toml", "--format", "json")
    statuses = json.loads(out)["collections"]
    assert code == 0 and {n: s["documents"] for n, s in statuses.items()} == \
        {"notes-en": 3, "notes-ja": 3, "code": 3}
    code, out, _ = run("status", "--config", "groove.toml", "--collection", "code")
    assert code == 0 and "Collection: code" in out and "notes-en" not in out


def test_index_one_collection_and_refuse_an_unknown_one(three: Path) -> None:
    code, out, err = run("index", "-q", "--config", "groove.toml", "--collection", "code")
    assert code == 0, err
    assert out.startswith("code: indexed 3") and "notes-en" not in out
    assert not (three / "notes-en" / ".groove.db").exists()
    code, _, err = run("index", "--config", "groove.toml", "--collection", "docs")
    assert code == 2 and "'docs' is not a collection here; accepted: notes-en, notes-ja, code" in err


def test_one_folder_commands_read_the_collection_named(three: Path) -> None:
    code, _, err = run("index", "-q", "--config", "groove.toml")
    assert code == 0, err
    code, out, err = run("ls", "--config", "groove.toml", "code")
    assert code == 0 and "geometry.py" in out and "sourdough.md" not in out, err
    code, out, _ = run("ls", "--config", "groove.toml", "--collection", "notes-en")
    assert code == 0 and "sourdough.md" in out and "geometry.py" not in out
    code, out, err = run("get", "--config", "groove.toml", "--collection", "notes-ja", "ryokucha.md")
    assert code == 0 and out == (three / "notes-ja" / "ryokucha.md").read_text(encoding="utf-8"), err
    for command in (["ls"], ["get", "sourdough.md"], ["links", "sourdough.md"], ["validate"]):
        code, _, err = run(*command, "--config", "groove.toml")
        assert code == 2 and "--collection NAME with one of notes-en, notes-ja, code" in err
    code, _, err = run("get", "--config", "groove.toml", "--collection", "code",
                       "--collection", "notes-en", "x.md")
    assert code == 2 and "reads one collection, 2 were given" in err


def test_collection_flags_without_collections_are_refused(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    shutil.copytree(FIXTURES / "notes-en", tmp_path / "kb")
    code, _, err = run("index", "--kb-path", "kb", "--collection", "notes")
    assert code == 2 and "no collections are named" in err
    with pytest.raises(InvalidArgument) as refused:
        from groove.kb import KnowledgeBase

        KnowledgeBase(load_config(kb_path=tmp_path / "kb")).search(
            SearchRequest(query="starter", collection=["notes"]))
    assert "reads one folder" in str(refused.value)


GOLDEN = {"notes-en": ("how often should a sourdough starter be fed", "sourdough.md"),
          "notes-ja": ("緑茶を淹れるお湯は何度がいい", "ryokucha.md")}


def test_eval_doctor_and_tune_take_each_collection_alone(three: Path) -> None:
    for name, (question, path) in GOLDEN.items():
        (three / name / ".groove-eval.yml").write_text(
            f"queries:\n  - id: q1\n    query: {question}\n    expected:\n      - path: {path}\n",
            encoding="utf-8")
    assert run("index", "-q", "--config", "groove.toml")[0] == 0
    code, out, err = run("eval", "--config", "groove.toml", "--collection", "notes-en",
                         "--collection", "notes-ja", "--format", "json", "--no-history")
    assert code == 0, err
    reports = json.loads(out)["collections"]
    assert list(reports) == ["notes-en", "notes-ja"]
    assert all(r["metrics"]["recall@1"] == 1.0 for r in reports.values()), reports

    code, out, _ = run("doctor", "--config", "groove.toml", "--format", "json")
    assert code in (0, 1) and list(json.loads(out)["collections"]) == ["notes-en", "notes-ja",
                                                                        "code"]
    code, _, err = run("tune", "--config", "groove.toml")
    assert code == 2 and "tune suggests one collection's settings" in err
    assert "--collection NAME" in err


def test_one_service_serves_every_collection_of_its_file(three: Path, tmp_path: Path) -> None:
    from groove.service.systemd import parse_exec

    env = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "HOME": str(tmp_path / "home"),
           "XDG_RUNTIME_DIR": str(tmp_path / "no-runtime"),
           "DBUS_SESSION_BUS_ADDRESS": f"unix:path={tmp_path}/no-bus"}

    def groove(*args: str) -> tuple[int, str]:
        result = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
        return result.exit_code, result.output

    code, out = groove("service", "install", "--config", "groove.toml", "--port", "3918")
    assert code == 0, out
    unit = tmp_path / "config" / "systemd" / "user" / f"groove-{three.name}.service"
    exec_line = next(line for line in unit.read_text().splitlines()
                     if line.startswith("ExecStart="))
    argv = parse_exec(exec_line.removeprefix("ExecStart="))
    assert argv[argv.index("serve"):] == ["serve", "--transport", "http", "--config",
                                          str(three / "groove.toml"), "--bind", "127.0.0.1:3918"]
    code, out = groove("service", "status", "--config", "groove.toml", "--format", "json")
    info = json.loads(out)  # found again by its file (not installed as running: exit 1 is fine)
    assert info["kb_path"] == str(three) and info["port"] == 3918
    code, out = groove("service", "uninstall", "--config", "groove.toml", "--purge", "--yes")
    assert code == 0 and "removed" in out and "left the index files alone" in out

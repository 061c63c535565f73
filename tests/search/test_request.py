"""SPEC §5 input bounds: every refusal names the argument and what is accepted."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from groove.errors import GrooveError, InvalidArgument
from groove.search.request import SearchRequest, validate_request


def refused(**fields) -> str:
    fields.setdefault("query", "valid query")
    with pytest.raises(InvalidArgument) as info:
        validate_request(SearchRequest(**fields))
    assert isinstance(info.value, GrooveError)
    return str(info.value)


def test_query_of_exactly_1_kib_is_accepted_one_byte_more_is_refused() -> None:
    assert validate_request(SearchRequest(query="a" * 1024)).query == "a" * 1024
    message = refused(query="a" * 1025)
    assert message.startswith("query:") and "1025" in message and "1024" in message


def test_query_bound_counts_utf8_bytes_not_characters() -> None:
    # 342 kana are 342 characters but 1026 bytes.
    message = refused(query="あ" * 342)
    assert "query" in message and "1024" in message
    validate_request(SearchRequest(query="あ" * 341))  # 1023 bytes


@pytest.mark.parametrize("query", ["", "   ", "\t\n  \u3000"])
def test_empty_or_whitespace_query_is_refused(query: str) -> None:
    assert refused(query=query).startswith("query:")


@pytest.mark.parametrize(("query", "word"), [("abc\x00def", "NUL"), ("abc\ud800def", "surrogate")])
def test_nul_and_lone_surrogate_are_refused(query: str, word: str) -> None:
    message = refused(query=query)
    assert message.startswith("query:") and word in message


@pytest.mark.parametrize("limit", [0, -1, 101, True, False, "5", 5.0, None])
def test_limit_outside_1_to_100_or_not_an_integer_is_refused(limit: object) -> None:
    message = refused(limit=limit)
    assert message.startswith("limit:") and "1..100" in message


@pytest.mark.parametrize("limit", [1, 5, 100])
def test_limit_bounds_are_inclusive(limit: int) -> None:
    assert validate_request(SearchRequest(query="q q q", limit=limit)).limit == limit


@pytest.mark.parametrize("name", ["path_globs", "tags_any", "tags_all"])
def test_list_filters_allow_64_entries_of_1_kib(name: str) -> None:
    ok = validate_request(SearchRequest(query="abc", **{name: ["x" * 1024] * 64}))
    assert len(getattr(ok, name)) == 64


@pytest.mark.parametrize("name", ["path_globs", "tags_any", "tags_all"])
def test_list_filter_with_65_entries_is_refused(name: str) -> None:
    message = refused(**{name: ["x"] * 65})
    assert message.startswith(name) and "65" in message and "64" in message


@pytest.mark.parametrize("name", ["path_globs", "tags_any", "tags_all"])
def test_list_filter_entry_over_1_kib_is_refused(name: str) -> None:
    message = refused(**{name: ["ok", "y" * 1025]})
    assert message.startswith(name) and "1024" in message


@pytest.mark.parametrize("name", ["path_globs", "tags_any", "tags_all"])
def test_list_filter_entry_with_nul_or_surrogate_is_refused(name: str) -> None:
    assert refused(**{name: ["a\x00b"]}).startswith(name)
    assert refused(**{name: ["a\udc80b"]}).startswith(name)


def test_a_bare_string_is_not_a_list_filter() -> None:
    assert refused(tags_any="rust").startswith("tags_any")


def test_empty_path_globs_is_refused_with_the_alternatives() -> None:
    message = refused(path_globs=[])
    assert message.startswith("path_globs") and "null" in message and '"!a/**"' in message


def test_empty_tag_lists_are_accepted() -> None:
    ok = validate_request(SearchRequest(query="abc", tags_any=[], tags_all=[]))
    assert ok.tags_any == [] and ok.tags_all == []


@pytest.mark.parametrize("name", ["category", "topic", "date_from", "date_to"])
def test_scalar_filters_are_bounded_too(name: str) -> None:
    assert refused(**{name: "z" * 1025}).startswith(name)
    assert refused(**{name: 7}).startswith(name)


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_non_finite_confidence_ratio_means_server_value(value: float) -> None:
    assert validate_request(SearchRequest(query="abc", min_confidence_ratio=value)).min_confidence_ratio is None


@pytest.mark.parametrize(("value", "expected"), [(-3.0, 0.0), (-0.0, 0.0), (0.0, 0.0), (2.5, 2.5), (2, 2.0)])
def test_negative_confidence_ratio_means_disabled(value: float, expected: float) -> None:
    got = validate_request(SearchRequest(query="abc", min_confidence_ratio=value)).min_confidence_ratio
    assert got == expected


def test_confidence_ratio_must_be_a_number() -> None:
    assert refused(min_confidence_ratio="2").startswith("min_confidence_ratio")


@pytest.mark.parametrize(("name", "value"), [("min_quality", 1.5), ("min_quality", -0.1),
                                              ("mmr_lambda", 2.0), ("mmr_lambda", math.nan),
                                              ("mmr_same_doc_penalty", -1.0)])
def test_numeric_knobs_out_of_range_are_refused(name: str, value: float) -> None:
    assert refused(**{name: value}).startswith(name)


def test_validation_returns_a_copy_and_keeps_the_request() -> None:
    original = SearchRequest(query="abc", tags_any=("a", "b"), min_confidence_ratio=-1)
    assert original.tags_any == ["a", "b"] and original.min_confidence_ratio == 0.0
    ok = validate_request(original)
    assert ok == original and ok is not original
    original.limit = 7
    assert ok.limit == 5


def test_a_request_changed_after_construction_is_checked_again() -> None:
    request = SearchRequest(query="abc")
    request.limit = 0
    with pytest.raises(InvalidArgument, match=r"^limit: .*1\.\.100"):
        validate_request(request)


def test_a_blank_query_is_a_template_until_it_runs() -> None:
    template = SearchRequest(query="", limit=3)
    assert validate_request(template.replace(query="rust")).limit == 3
    with pytest.raises(InvalidArgument, match="^query:"):
        validate_request(template)


def test_unknown_argument_names_every_accepted_one() -> None:
    message = refused(limt=3)
    assert message.startswith("limt: unknown argument") and "limit" in message


@pytest.mark.parametrize("name", ["category", "topic", "date_from", "date_to"])
def test_empty_optional_text_means_unset(name: str) -> None:
    assert getattr(SearchRequest(query="abc", **{name: ""}), name) is None


def test_no_message_carries_pydantic_wording() -> None:
    for fields in ({"limit": "5"}, {"tags_any": [1]}, {"mmr": "yes"}, {"min_quality": math.inf}):
        message = refused(**fields)
        assert "pydantic" not in message and "http" not in message and "Input should" not in message


# --------------------------------------------------------------------------- one model, three surfaces

SURFACE_CASES = [
    ("limit", 0), ("limit", 101), ("min_quality", 1.5), ("mmr_lambda", -0.25),
    ("mmr_same_doc_penalty", -1.0), ("tags_any", ["x"] * 65), ("category", "z" * 1025),
]


def _cli_args(name: str, value: object) -> list[str]:
    from groove.search.request import flag_name

    values = value if isinstance(value, list) else [value]
    return [arg for v in values for arg in (flag_name(name), str(v))]


def test_cli_mcp_and_library_refuse_the_same_values_with_the_same_message(tmp_path, monkeypatch) -> None:
    import asyncio

    from click.testing import CliRunner
    from mcp import Client

    from groove.cli import cli
    from groove.cli.commands import load_all
    from groove.config import Config
    from groove.kb import KnowledgeBase
    from groove.server.mcp import build_mcp_server

    load_all()
    kb_dir = tmp_path / "kb"
    kb_dir.mkdir()
    monkeypatch.chdir(tmp_path)
    expected = [refused(**{name: value}) for name, value in SURFACE_CASES]

    async def over_mcp() -> list[str]:
        kb = KnowledgeBase(Config.defaults_for(kb_dir))
        async with Client(build_mcp_server(kb)) as client:
            out = []
            for name, value in SURFACE_CASES:
                result = await client.call_tool("search", {"query": "q", name: value})
                assert result.is_error
                out.append("".join(c.text for c in result.content))
            return out

    for message, (name, value), mcp_text in zip(expected, SURFACE_CASES, asyncio.run(over_mcp()),
                                                strict=True):
        cli_result = CliRunner().invoke(cli, ["search", "--kb-path", str(kb_dir), "q",
                                              *_cli_args(name, value)])
        assert cli_result.exit_code == 2
        assert message in cli_result.stderr
        assert message in mcp_text


def test_every_field_is_a_cli_flag_and_an_mcp_property_with_the_model_bounds(tmp_path) -> None:
    from click.testing import CliRunner

    from groove.cli import cli
    from groove.cli.commands import load_all
    from groove.search.request import accepted, flag_name
    from groove.server.tools import model_input_schema

    load_all()
    help_text = " ".join(CliRunner().invoke(cli, ["search", "--help"], terminal_width=500).stdout.split())
    schema = model_input_schema(SearchRequest)
    model_schema = SearchRequest.model_json_schema()["properties"]
    assert list(schema["properties"]) == list(SearchRequest.model_fields)
    assert schema["required"] == ["query"]
    for name in SearchRequest.model_fields:
        prop = schema["properties"][name]
        assert "anyOf" not in prop and accepted(name) in prop["description"]
        for bound in ("minimum", "maximum", "maxItems"):
            arms = model_schema[name].get("anyOf", [model_schema[name]])
            assert prop.get(bound) == next((a[bound] for a in arms if bound in a), None)
        if name != "query":
            assert flag_name(name) in help_text and accepted(name) in help_text


@given(st.integers(min_value=-10**6, max_value=10**6))
def test_limit_is_accepted_exactly_in_1_to_100(limit: int) -> None:
    if 1 <= limit <= 100:
        assert SearchRequest(query="q", limit=limit).limit == limit
    else:
        message = refused(limit=limit)
        assert message.startswith("limit:") and "1..100" in message


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_unit_interval_knobs_accept_exactly_0_to_1(value: float) -> None:
    for name in ("min_quality", "mmr_lambda"):
        if math.isfinite(value) and 0.0 <= value <= 1.0:
            assert getattr(SearchRequest(query="q", **{name: value}), name) == value
        else:
            assert refused(**{name: value}).startswith(f"{name}:")


@given(st.one_of(st.floats(), st.integers(min_value=-10**9, max_value=10**9)))
def test_confidence_ratio_is_never_refused_for_a_number(value: float) -> None:
    ratio = SearchRequest(query="q", min_confidence_ratio=value).min_confidence_ratio
    assert ratio is None if not math.isfinite(value) else ratio == max(0.0, float(value))


@pytest.mark.parametrize(("name", "section", "key"), [
    ("min_quality", "QualityFilterConfig", "threshold"),
    ("mmr_lambda", "MmrConfig", "lambda_"),
    ("mmr_same_doc_penalty", "MmrConfig", "same_doc_penalty"),
    ("fusion_vector_weight", "FusionConfig", "vector_weight"),
    ("max_chunks_per_document", "SearchConfig", "max_chunks_per_document"),
])
def test_a_per_call_override_has_the_bounds_of_its_config_key(name: str, section: str,
                                                               key: str) -> None:
    import groove.config.model as config_model

    config_field = getattr(config_model, section).model_fields[key]
    request_field = SearchRequest.model_fields[name]
    assert request_field.metadata == config_field.metadata
    assert request_field.default is None


def test_an_unusable_glob_is_refused_naming_the_argument_and_the_pattern() -> None:
    for glob in ("[z-a]", "!src/[9-0]*.md"):
        message = refused(path_globs=["docs/**", glob])
        assert message.startswith("path_globs: ") and repr(glob) in message
        assert "not a valid glob" in message and "\n" not in message
    assert SearchRequest(query="q", path_globs=["[a-z]*.md", "!drafts/**"]).path_globs


@given(glob=st.text(alphabet="[]{},-!*?/az09\\", max_size=12).filter(lambda g: g.strip()))
def test_every_accepted_glob_compiles(glob: str, tmp_path_factory) -> None:
    """The guarantee: a glob the request accepts never fails later, in the search's filter."""
    from groove.config import Config
    from groove.search.filters import build_filter

    try:
        request = SearchRequest(query="q", path_globs=[glob])
    except InvalidArgument:
        return
    config = Config.defaults_for(tmp_path_factory.getbasetemp())
    build_filter(request, config)._path_passes("docs/a.md")  # compiles, must not raise


def test_the_mcp_tool_refuses_a_wrong_type_in_the_models_words(tmp_path) -> None:
    import asyncio

    from mcp import Client

    from groove.config import Config
    from groove.kb import KnowledgeBase
    from groove.server.mcp import build_mcp_server

    kb = KnowledgeBase(Config.defaults_for(tmp_path))

    async def call(arguments: dict) -> str:
        async with Client(build_mcp_server(kb)) as client:
            result = await client.call_tool("search", arguments)
        assert result.is_error
        return "".join(c.text for c in result.content)

    text = asyncio.run(call({"query": "q", "limit": "abc"}))
    assert "limit: expected an integer" in text and "accepted: an integer 1..100" in text
    assert "pydantic" not in text and "http" not in text
    # Strict, like the library and the CLI: a number sent as text is a mistake to report.
    text = asyncio.run(call({"query": "q", "limit": "5"}))
    assert "limit: expected an integer, got str '5'" in text
    text = asyncio.run(call({"query": "q", "mmr": "true"}))
    assert "mmr: expected true or false" in text or "mmr: expected a boolean" in text
    text = asyncio.run(call({"query": "q", "path_globs": ["[z-a]"]}))
    assert "path_globs: '[z-a]' is not a valid glob" in text and "internal error" not in text


@given(pairs=st.lists(st.tuples(st.text(min_size=1).filter(lambda k: "=" not in k), st.text()),
                      max_size=8))
def test_field_pairs_split_at_the_first_equals_and_collect_values_per_key(pairs):
    from groove.search.request import fields_from_pairs

    parsed = fields_from_pairs("--field", [f"{key}={value}" for key, value in pairs])
    expected: dict[str, list[str]] = {}
    for key, value in pairs:
        expected.setdefault(key, []).append(value)
    assert parsed == expected


@given(st.text(st.characters(whitelist_categories=("Po", "Pi", "Pf", "Ps", "Pe", "Pd", "Zs")),
               min_size=1, max_size=50).filter(str.strip))
def test_a_query_of_punctuation_and_spaces_only_is_refused_before_any_model(query):
    from groove.errors import InvalidArgument
    from groove.search.request import SearchRequest, validate_request

    with pytest.raises(InvalidArgument, match="has no term to search for"):
        validate_request(SearchRequest(query=query))


@given(st.text(min_size=1, max_size=20), st.characters(whitelist_categories=("L", "N", "S")))
def test_one_letter_digit_or_symbol_makes_a_query(noise, term):
    from groove.search.request import has_term

    assert has_term(noise + term)


def test_a_thousand_quotes_are_refused_at_once_through_the_cli(tmp_path):
    import os
    import subprocess
    import sys
    import time

    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "groove", "search", "--kb-path", str(tmp_path),
                           '"' * 1000], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ))
    assert done.returncode == 2 and "query: has no term to search for" in done.stderr
    assert time.monotonic() - started < 30  # no model was loaded (it took 4 s before)

"""Every GrooveSeek 1.0 flag in docs/grooveseek.md's table is accepted: each example runs.

The table is the contract: a row whose "What groove does" starts with "Read as"
must print exactly one ``deprecated:`` line per rewritten flag; every row exits
0 unless it states ``(exit N)``; no row ever prints click's usage block.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from groove.cli import cli
from groove.cli.commands import load_all
from groove.cli.compat import upgrade_argv

load_all()

DOC = Path(__file__).resolve().parents[2] / "docs" / "grooveseek.md"
ROW = re.compile(r"^\| (?P<command>[^|]+) \| (?P<flag>[^|]+) \| `(?P<example>groove [^`]*)` \| "
                 r"(?P<does>.+) \|$")


def table_rows() -> list[dict[str, str]]:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## Command line"):text.index("## Golden file")]
    return [m.groupdict() for line in section.splitlines() if (m := ROW.match(line))]


ROWS = table_rows()

NOTES = {
    "a.md": "---\ncategory: guide\ntopic: rust\ntags: [rust, async]\ndate: 2026-02-01\n---\n"
            "# Alpha\n\nalpha tokio runtime notes about async rust tasks and executors\n",
    "docs/a/b.md": "# Beta\n\nbeta notes about rust ownership and borrowing rules\n",
    "docs/c/c.md": "# Gamma\n\ngamma notes about python packaging\n",
}
GOLDEN = """queries:
  - query: alpha tokio runtime
    expected: [{path: a.md}]
  - query: rust ownership borrowing
    expected: [{path: docs/a/b.md}]
  - query: python packaging
    expected: [{path: docs/c/c.md}]
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with an indexed KB, a golden file, a schema and a groove.toml (not discovered)."""
    root = tmp_path_factory.mktemp("grooveseek")
    kb = root / "kb"
    for rel, text in NOTES.items():
        (kb / rel).parent.mkdir(parents=True, exist_ok=True)
        (kb / rel).write_text(text, encoding="utf-8")
    (root / "golden.yml").write_text(GOLDEN, encoding="utf-8")
    (kb / ".groove-eval.yml").write_text(GOLDEN, encoding="utf-8")
    (root / "schema.toml").write_text("[fields.category]\nrequired = false\n", encoding="utf-8")
    (root / "cfg").mkdir()
    (root / "cfg" / "groove.toml").write_text(f'kb_path = "{kb.as_posix()}"\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["index", "--kb-path", str(kb), "-q"])
    assert result.exit_code == 0, result.stderr
    return root


def _command(argv: list[str]) -> Any:
    """The click command an upgraded argv reaches."""
    command: Any = cli
    for word in argv:
        if word.startswith("-") or not hasattr(command, "commands") or word not in command.commands:
            break
        command = command.commands[word]
    return command


def _argv(example: str, site: Path) -> list[str]:
    argv = [str(site / "kb") if w == "KB" else w for w in shlex.split(example)[1:]]
    argv = [str(site / "cfg" / "groove.toml") if w == "groove.toml" else w for w in argv]
    upgraded, _ = upgrade_argv(argv)
    takes_kb = any("--kb-path" in p.opts for p in _command(upgraded).params)
    if takes_kb and "--kb-path" not in argv and "--config" not in argv:
        argv += ["--kb-path", str(site / "kb")]
    return argv


def _env(tmp_path: Path) -> dict[str, str]:
    """A service manager pointed at a temporary home and a bus that does not exist."""
    return {"XDG_CONFIG_HOME": str(tmp_path / "config"), "HOME": str(tmp_path / "home"),
            "XDG_RUNTIME_DIR": str(tmp_path / "no-runtime"),
            "DBUS_SESSION_BUS_ADDRESS": f"unix:path={tmp_path}/no-bus"}


@pytest.mark.parametrize("row", ROWS, ids=[r["example"] for r in ROWS])
def test_every_grooveseek_flag_runs(row, site, tmp_path, monkeypatch):
    monkeypatch.chdir(site)
    served: list[dict[str, Any]] = []
    import groove.server as server

    # serve would block: record what it was asked to serve instead (the flags are what is tested)
    monkeypatch.setattr(server, "build_in_background", lambda kb: None)
    monkeypatch.setattr(server, "serve", lambda kb, **kw: served.append({"config": kb.config, **kw}))
    env = _env(tmp_path)
    argv = _argv(row["example"], site)
    if argv[0] == "service" and argv[1] != "install":
        done = CliRunner().invoke(cli, ["service", "install", "--name", "work", "--kb-path",
                                        str(site / "kb")], env=env)
        assert done.exit_code == 0, done.output
    result = CliRunner().invoke(cli, argv, env=env)
    expected = int(m.group(1)) if (m := re.search(r"\(exit (\d)\)", row["does"])) else 0
    assert result.exit_code == expected, (argv, result.stdout, result.stderr)
    assert "Usage:" not in result.output and "Error:" not in result.output
    if expected == 2:
        errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
        assert len(errors) == 1, result.stderr
    notes = [line for line in result.stderr.splitlines() if line.startswith("deprecated: ")]
    if row["does"].startswith("Read as"):
        assert notes, f"{row['example']}: no deprecation note ({result.stderr})"
        assert all("read as" in note for note in notes)
    else:
        assert not notes, notes
    if argv[0] == "serve":
        assert len(served) == 1


def test_the_table_covers_every_flag_of_grooveseeks_reference():
    """The flags GrooveSeek 1.0's clap definition declares, command by command."""
    reference = {
        "index": {"--kb-path", "--force", "--model", "--quiet", "--progress"},
        "status": {"--kb-path"},
        "serve": {"--kb-path", "--model", "--reranker", "--rerank-by-default", "--no-watch",
                  "--debounce-ms", "--transport", "--bind", "--port", "--i-know"},
        "graph": {"--start", "--kb-path", "--model", "--depth", "--fan-out", "--min-similarity",
                  "--seed-strategy", "--max-nodes", "--max-seed-chunks", "--category", "--topic",
                  "--exclude-paths", "--dedup-by-path", "--format"},
        "doctor": {"--kb-path", "--format"},
        "validate": {"--kb-path", "--schema", "--format", "--no-color", "--fail-fast"},
        "search": {"--kb-path", "--model", "--reranker", "--limit", "--category", "--topic",
                   "--format", "--min-quality", "--include-low-quality", "--path-glob",
                   "--tag-any", "--tag-all", "--date-from", "--date-to",
                   "--min-confidence-ratio", "--mmr", "--mmr-lambda", "--mmr-same-doc-penalty",
                   "--parent-retriever"},
        "eval": {"--kb-path", "--golden", "--model", "--reranker", "--k", "--limit", "--format",
                 "--no-history", "--no-diff", "--no-color", "--fail-on-regression", "--mmr",
                 "--mmr-lambda", "--mmr-same-doc-penalty", "--parent-retriever"},
        "tune": {"--kb-path", "--golden", "--model", "--k", "--limit", "--format", "--no-color"},
        "service install": {"--service-name", "--kb-path", "--bind", "--no-auto-start",
                            "--force", "--i-know", "--with-tray"},
        "service uninstall": {"--service-name", "--purge", "--yes"},
        "service status": {"--service-name"},
        "service tray-install": {"--service-name", "--force"},
        "service tray-uninstall": {"--service-name"},
    }
    covered: dict[str, set[str]] = {}
    for row in ROWS:
        flags = set(re.findall(r"--[a-z][a-z-]*", row["flag"]))
        covered.setdefault(row["command"].strip(), set()).update(flags)
    for command, flags in reference.items():
        assert flags <= covered.get(command, set()), (command, flags - covered.get(command, set()))
    assert "service list" in covered and "--config" in covered["(all)"]


def _run(site: Path, *argv: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(cli, list(argv), env=env)


def test_serve_flags_reach_the_configuration(site, monkeypatch):
    import groove.server as server

    served: list[Any] = []
    monkeypatch.setattr(server, "build_in_background", lambda kb: None)
    monkeypatch.setattr(server, "serve", lambda kb, **kw: served.append(kb.config))
    result = _run(site, "serve", "--kb-path", str(site / "kb"), "--debounce-ms", "250",
                  "--reranker", "bge-v2-m3", "--rerank-by-default=false")
    assert result.exit_code == 0, result.stderr
    config = served[0]
    assert config.watch.debounce_ms == 250 and config.reranker == "bge-reranker-v2-m3"
    assert config.rerank_by_default is False
    _run(site, "serve", "--kb-path", str(site / "kb"), "--rerank-by-default", "true")
    assert served[1].rerank_by_default is True


def test_eval_k_limit_and_no_diff_change_what_is_measured(site):
    import json

    kb = str(site / "kb")
    first = json.loads(_run(site, "eval", "--kb-path", kb, "--k", "1,2", "--format", "json",
                            "--no-history").stdout)
    assert first["k_values"] == [1, 2] and "recall@2" in first["metrics"]
    deep = json.loads(_run(site, "eval", "--kb-path", kb, "--limit", "20", "--format",
                           "json", "--no-history").stdout)
    assert deep["fingerprint"]["depth"] == 20 and "depth" not in first["fingerprint"]
    _run(site, "eval", "--kb-path", kb, "--format", "json")  # recorded: the next run compares
    compared = json.loads(_run(site, "eval", "--kb-path", kb, "--format", "json",
                               "--no-history").stdout)
    assert compared["previous"] is not None
    no_diff = json.loads(_run(site, "eval", "--kb-path", kb, "--format", "json", "--no-diff",
                              "--no-history").stdout)
    assert no_diff["previous"] is None and not no_diff["regressed"]
    refused = _run(site, "eval", "--kb-path", kb, "--k", "1,x")
    assert refused.exit_code == 2 and "'1,x' is not a comma-separated list" in refused.stderr


def test_service_install_flags(site, tmp_path):
    env = _env(tmp_path)
    kb = str(site / "kb")
    units = Path(env["XDG_CONFIG_HOME"]) / "systemd" / "user"
    held = _run(site, "service", "install", "--kb-path", kb, "--no-auto-start", "--name", "w",
                env=env)
    assert held.exit_code == 0 and "--no-auto-start was given" in held.stdout
    assert "systemctl --user enable --now w.service" in held.stdout
    open_bind = _run(site, "service", "install", "--kb-path", kb, "--name", "w",
                     "--bind", "0.0.0.0:3105", env=env)
    assert open_bind.exit_code == 2 and "--i-know" in open_bind.stderr
    known = _run(site, "service", "install", "--kb-path", kb, "--name", "w",
                 "--bind", "0.0.0.0:3105", "--i-know", env=env)
    assert known.exit_code == 0, known.stderr
    assert '"--bind" "0.0.0.0:3105" "--i-know"' in (units / "w.service").read_text()
    other = site / "other-kb"
    other.mkdir(exist_ok=True)
    clash = _run(site, "service", "install", "--kb-path", str(other), "--name", "w", "--port",
                 "3106", env=env)
    assert clash.exit_code == 2 and "--force" in clash.stderr
    forced = _run(site, "service", "install", "--kb-path", str(other), "--name", "w",
                  "--port", "3106", "--force", env=env)
    assert forced.exit_code == 0 and str(other) in (units / "w.service").read_text()


def test_service_uninstall_purge_needs_yes_and_removes_only_the_index(tmp_path):
    env = _env(tmp_path)
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "a.md").write_text("# A\n\nalpha\n", encoding="utf-8")
    assert _run(tmp_path, "index", "--kb-path", str(kb), "-q").exit_code == 0
    assert _run(tmp_path, "service", "install", "--kb-path", str(kb), "--name", "p",
                env=env).exit_code == 0
    refused = _run(tmp_path, "service", "uninstall", "--service-name", "p", "--purge", env=env)
    assert refused.exit_code == 2 and "--yes" in refused.stderr
    assert (kb / ".groove.db").exists()
    done = _run(tmp_path, "service", "uninstall", "--service-name", "p", "--purge", "--yes",
                env=env)
    assert done.exit_code == 0, done.stderr
    assert not (kb / ".groove.db").exists() and (kb / "a.md").exists()
    assert f"removed {kb / '.groove.db'}" in done.stdout


def test_naming_a_reranker_opts_the_run_in_unless_told_otherwise(site, monkeypatch):
    """GrooveSeek's rule; checked on the request the command builds (no model is loaded)."""
    from groove.kb import KnowledgeBase
    from groove.models import SearchResponse

    asked: list[Any] = []

    def record(self, request, **_kw):
        asked.append(request)
        return SearchResponse(results=[], low_confidence=False, filter_applied={})

    monkeypatch.setattr(KnowledgeBase, "search", record)
    kb = str(site / "kb")
    for extra, expected in (([], None), (["--reranker", "bge-v2-m3"], True),
                            (["--reranker", "bge-v2-m3", "--no-rerank"], False),
                            (["--reranker", "none"], False)):
        result = _run(site, "search", "alpha", "--kb-path", kb, *extra)
        assert result.exit_code == 0, result.stderr
        assert asked[-1].rerank is expected, extra


def test_serve_with_a_reranker_reranks_by_default_unless_told_otherwise(site, monkeypatch):
    import groove.server as server

    served: list[Any] = []
    monkeypatch.setattr(server, "build_in_background", lambda kb: None)
    monkeypatch.setattr(server, "serve", lambda kb, **kw: served.append(kb.config))
    kb = str(site / "kb")
    _run(site, "serve", "--kb-path", kb, "--reranker", "bge-v2-m3")
    _run(site, "serve", "--kb-path", kb, "--reranker", "bge-v2-m3", "--rerank-by-default=false")
    _run(site, "serve", "--kb-path", kb)
    assert [c.rerank_by_default for c in served] == [True, False, False]

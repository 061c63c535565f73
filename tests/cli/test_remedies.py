"""Every remedy an error message suggests can be run as written.

The messages live where the errors are raised, so they are collected from the
source: every backticked ``groove …`` command in a string must parse with the
real command line (command and flags exist), and every ``--flag`` an error or
finding names must be an option of some command. The model-mismatch remedy is
then followed for real, command by command.
"""

from __future__ import annotations

import ast
import re
import shlex
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from groove.cli import cli
from groove.cli.commands import load_all
from groove.cli.compat import upgrade_argv

load_all()

SRC = Path(__file__).resolve().parents[2] / "src" / "groove"
COMMAND = re.compile(r"`(groove [^`]+)`")
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
#: Sample values for the placeholders messages fill in at run time.
SAMPLES = {"…": "x", "X": "x", "ADDRESS": "local"}


def _literals(node: ast.AST) -> str:
    """The constant text of a string or f-string node (placeholders as ``{}``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(_literals(v) if isinstance(v, ast.Constant) else "{}" for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _literals(node.left) + _literals(node.right)
    return ""


def _messages(callee: str = "") -> list[tuple[str, str]]:
    """(where, text) of the string arguments of every call whose name matches ``callee``."""
    out = []
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", getattr(node.func, "attr", ""))
                text = " ".join(_literals(a) for a in node.args)
                if text.strip() and re.search(callee, name):
                    out.append((f"{path.relative_to(SRC)}:{node.lineno}", text))
    return out


def _error_messages() -> list[tuple[str, str]]:
    """Messages given to an exception or a doctor Finding (what a user is told to do)."""
    return _messages(r"(Error|Refused|NotFound|Busy|Finding|Exception)$")


def _suggested_commands() -> list[tuple[str, str]]:
    found = {}
    for where, text in _messages():
        for command in COMMAND.findall(text):
            if " | " in command or "<" in command:  # a usage summary, not a command to run
                continue
            found.setdefault(command, where)
    return sorted((c, w) for c, w in found.items())


def _resolve(argv: list[str]) -> click.Context:
    """Parse ``argv`` with the real command line (raises click errors like a user would see)."""
    words, _ = upgrade_argv(argv)
    command: Any = cli
    name = "groove"
    while isinstance(command, click.Group):
        assert words and words[0] in command.commands, f"no command {words[:1]} in {name}"
        name = words.pop(0)
        command = command.commands[name]
    return command.make_context(name, words)


@pytest.mark.parametrize(("command", "where"), _suggested_commands())
def test_every_suggested_command_parses(command, where):
    words = [SAMPLES.get(w, w) for w in shlex.split(command.replace("{}", "x"))[1:]]
    if "--start" not in words and words[:1] == ["graph"]:
        words += ["--start", "a.md"]
    if words == ["search"]:  # named as "what `groove search` shows", with its query
        words.append("q")
    try:
        _resolve(words)
    except click.ClickException as exc:
        pytest.fail(f"{where}: `{command}` does not run: {exc.format_message()}")


def _all_flags() -> set[str]:
    flags: set[str] = set()

    def walk(command: click.Command) -> None:
        for param in command.params:
            flags.update(o for o in (*param.opts, *getattr(param, "secondary_opts", ()))
                         if o.startswith("--"))
        for sub in getattr(command, "commands", {}).values():
            walk(sub)

    walk(cli)
    return flags


def test_every_flag_an_error_names_exists():
    known = _all_flags() | {"--", "--force-reinstall"}  # pip's flag, in a reinstall hint
    missing = {(flag, where) for where, text in _error_messages()
               for flag in FLAG.findall(text) if flag not in known}
    assert not missing, sorted(missing)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    kb = tmp_path_factory.mktemp("remedy") / "kb"
    kb.mkdir()
    (kb / "a.md").write_text("# Alpha\n\nalpha tokio runtime notes\n", encoding="utf-8")
    (kb / "b.md").write_text("# Beta\n\nbeta notes about rust ownership\n", encoding="utf-8")
    (kb / ".groove-eval.yml").write_text(
        "queries:\n  - query: alpha tokio\n    expected: [{path: a.md}]\n"
        "  - query: rust ownership\n    expected: [{path: b.md}]\n", encoding="utf-8")
    assert CliRunner().invoke(cli, ["index", "--kb-path", str(kb), "-q"]).exit_code == 0
    return kb


COMMANDS = {
    "search": ["search", "alpha"],
    "graph": ["graph", "--start", "a.md"],
    "eval": ["eval", "--no-history"],
    "tune": ["tune"],
    "serve": ["serve"],
    "index": ["index", "-q"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_the_model_mismatch_remedy_runs(command, built, monkeypatch):
    import groove.server as server

    monkeypatch.setattr(server, "serve", lambda kb, **kw: None)  # the model check runs before it
    argv = [*COMMANDS[command], "--kb-path", str(built)]
    refused = CliRunner().invoke(cli, [*argv, "--model", "bge-m3"])  # refused before any download
    assert refused.exit_code == 2
    message = refused.stderr.strip().splitlines()[-1]
    assert message.startswith("error: ") and "was built with model 'multilingual-e5-small'" in message
    suggested = re.search(r"\(--model (\S+?)[,)]", message)
    assert suggested, message
    followed = CliRunner().invoke(cli, [*argv, "--model", suggested.group(1)])
    assert followed.exit_code == 0, followed.stderr
    rebuild = COMMAND.search(message)
    assert rebuild and rebuild.group(1).startswith("groove index --force --model bge-m3")
    _resolve(shlex.split(rebuild.group(1))[1:])  # parses (running it would download bge-m3)

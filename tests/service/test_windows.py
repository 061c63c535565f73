"""The Windows Task Scheduler task: well-formed, the schema's required structure, hostile paths."""

from __future__ import annotations

import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from groove.cli import cli
from groove.cli.commands import load_all
from groove.config.bind import BindAddress
from groove.errors import ConfigError
from groove.service.spec import ServiceSpec
from groove.service.windows import NS, TaskScheduler, split_arguments

load_all()

T = f"{{{NS}}}"
#: Task Scheduler 1.2 schema: the children each element must have, and the order an
#: <Exec> action's children must come in (a sequence in the schema).
REQUIRED = {
    "Task": ["Triggers", "Principals", "Settings", "Actions"],
    "Triggers": ["LogonTrigger"],
    "Principals": ["Principal"],
    "Actions": ["Exec"],
    "Exec": ["Command"],
}
EXEC_ORDER = ["Command", "Arguments", "WorkingDirectory"]
DURATION = r"^P(T(\d+[HMS])+|\d+D)$|^PT0S$"


def check_schema_structure(text: str) -> ET.Element:
    assert text.startswith('<?xml version="1.0" encoding="UTF-16"?>')
    root = ET.fromstring(text.encode("utf-16"))
    assert root.tag == f"{T}Task" and root.get("version") == "1.2"
    for name, children in REQUIRED.items():
        node = root if name == "Task" else root.find(f".//{T}{name}")
        assert node is not None, name
        present = [c.tag.removeprefix(T) for c in node]
        for child in children:
            assert child in present, (name, child)
    run = root.find(f".//{T}Exec")
    assert run is not None
    order = [c.tag.removeprefix(T) for c in run]
    assert order == [n for n in EXEC_ORDER if n in order]
    principal = root.find(f".//{T}Principal")
    assert principal is not None and principal.get("id") == "Author"
    assert root.find(f"{T}Actions").get("Context") == "Author"  # type: ignore[union-attr]
    import re

    for node in root.iter():
        if node.tag in (f"{T}Interval", f"{T}ExecutionTimeLimit"):
            assert re.match(DURATION, node.text or ""), node.text
        if node.tag in (f"{T}Enabled", f"{T}Hidden", f"{T}StopIfGoingOnBatteries"):
            assert node.text in ("true", "false")
    return root


def spec(kb: Path, **extra) -> ServiceSpec:
    return ServiceSpec(name="groove-notes", kb_path=kb, bind=BindAddress("127.0.0.1", 3100),
                       python=r"C:\Program Files\Python 3.12\python.exe", **extra)


HOSTILE = [
    r"C:\Users\me\my notes",
    r"C:\Users\me\notes & <stuff> \"quoted\"",
    "C:\\Users\\me\\trailing backslash\\",
    r"C:\Users\me\tab	and 'single' quotes",
    r"C:\Users\José\ノート",
    r"\\server\share\notes",
]


@pytest.mark.parametrize("kb", HOSTILE)
def test_the_task_is_schema_shaped_and_reads_back_exactly(tmp_path, kb):
    backend = TaskScheduler({"LOCALAPPDATA": str(tmp_path)})
    original = spec(Path(kb), config_path=Path(kb) / "groove.toml")
    text = backend.render(original)
    root = check_schema_structure(text)
    assert root.find(f".//{T}LogonTrigger/{T}Enabled").text == "true"  # type: ignore[union-attr]
    assert root.find(f".//{T}RunLevel").text == "LeastPrivilege"  # type: ignore[union-attr]
    path = backend.path_for(original.name)
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding=backend.encoding)
    assert path.read_bytes()[:2] in (b"\xff\xfe", b"\xfe\xff")  # a BOM, as schtasks expects
    assert backend.read(path) == original
    assert backend.installed() == [path]


def test_a_percent_sign_is_refused_not_expanded(tmp_path):
    with pytest.raises(ConfigError, match="Task Scheduler expands"):
        TaskScheduler({}).render(spec(Path(r"C:\notes\%USERPROFILE%")))


def test_a_file_groove_did_not_write_is_not_a_service(tmp_path):
    backend = TaskScheduler({"LOCALAPPDATA": str(tmp_path)})
    other = tmp_path / "other.xml"
    text = backend.render(spec(Path(r"C:\notes"))).replace("groove service install", "someone")
    other.write_text(text, encoding="utf-16")
    assert backend.read(other) is None
    (tmp_path / "broken.xml").write_text("<Task", encoding="utf-16")
    assert backend.read(tmp_path / "broken.xml") is None


_ARG = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=12)


@given(st.lists(_ARG, min_size=1, max_size=6))
def test_split_arguments_inverts_list2cmdline(args):
    assert split_arguments(subprocess.list2cmdline(args)) == args


def test_install_writes_the_task_and_names_the_schtasks_commands(tmp_path):
    kb = tmp_path / "my notes"
    kb.mkdir()
    (kb / "a.md").write_text("# A\n", encoding="utf-8")
    env = {"LOCALAPPDATA": str(tmp_path / "local"), "HOME": str(tmp_path / "home")}
    result = CliRunner().invoke(cli, ["service", "install", "--manager", "schtasks",
                                      "--kb-path", str(kb), "--port", "3917"], env=env)
    assert result.exit_code == 0, result.output
    task = tmp_path / "local" / "groove" / "tasks" / "groove-my-notes.xml"
    root = check_schema_structure(task.read_text(encoding="utf-16"))
    arguments = split_arguments(root.findtext(f".//{T}Arguments") or "")
    assert arguments[:5] == ["-P", "-m", "groove", "serve", "--transport"] and "http" in arguments
    assert str(kb) in arguments and "127.0.0.1:3917" in arguments
    assert f"schtasks /Create /TN \\groove-my-notes /XML {task} /F" in result.output
    listed = CliRunner().invoke(cli, ["service", "list", "--manager", "schtasks"], env=env)
    assert "groove-my-notes" in listed.output and "port 3917" in listed.output
    removed = CliRunner().invoke(cli, ["service", "uninstall", "--manager", "schtasks",
                                       "--name", "groove-my-notes"], env=env)
    assert removed.exit_code == 0 and not task.exists()
    assert "schtasks /End /TN \\groove-my-notes" in removed.output

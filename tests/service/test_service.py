"""`groove service`: real unit files validated by systemd-analyze, plists read back by plistlib.

Every test points the service manager at a temporary config home and at a
session bus that does not exist, so nothing is ever started on the machine
running the tests; install must then say how to start the service.
"""

from __future__ import annotations

import json
import plistlib
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from groove.cli import cli
from groove.cli.commands import load_all
from groove.service.spec import default_name
from groove.service.systemd import parse_exec, render_exec

load_all()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"XDG_CONFIG_HOME": str(tmp_path / "config"), "HOME": str(tmp_path / "home"),
            "XDG_RUNTIME_DIR": str(tmp_path / "no-runtime"),
            "DBUS_SESSION_BUS_ADDRESS": f"unix:path={tmp_path}/no-bus"}


def groove(env: dict[str, str], *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
    return result.exit_code, result.output


def make_kb(root: Path, name: str = "notes") -> Path:
    kb = root / name
    kb.mkdir(parents=True)
    (kb / "a.md").write_text("# A\n\nhello\n", encoding="utf-8")
    return kb


def unit_dir(env: dict[str, str]) -> Path:
    return Path(env["XDG_CONFIG_HOME"]) / "systemd" / "user"


def verify(unit: Path) -> None:
    done = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True)
    assert done.returncode == 0 and not done.stderr.strip() and not done.stdout.strip(), done.stderr


def test_install_writes_a_unit_systemd_accepts_and_says_how_to_start_it(tmp_path, env):
    kb = make_kb(tmp_path, "my notes %$\"\\ 'x'")  # every character systemd treats specially
    code, out = groove(env, "service", "install", "--kb-path", str(kb), "--port", "3917")
    assert code == 0, out
    unit = unit_dir(env) / f"{default_name(kb)}.service"
    assert f"wrote {unit}" in out
    assert "not started" in out and f"systemctl --user enable --now {unit.name}" in out
    verify(unit)
    text = unit.read_text(encoding="utf-8")
    assert "Restart=on-failure" in text and "WantedBy=default.target" in text
    exec_line = next(line for line in text.splitlines() if line.startswith("ExecStart="))
    argv = parse_exec(exec_line.removeprefix("ExecStart="))
    assert argv == [sys.executable, "-P", "-m", "groove", "serve", "--transport", "http",
                    "--kb-path", str(kb.resolve()), "--bind", "127.0.0.1:3917"]


def test_config_is_passed_by_absolute_path_and_the_unit_verifies(tmp_path, env, monkeypatch):
    kb = make_kb(tmp_path)
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "conf" / "groove.toml"
    config.parent.mkdir()
    config.write_text(f'kb_path = "{kb.as_posix()}"\n[transport.http]\nbind = "127.0.0.1:4100"\n',
                      encoding="utf-8")
    code, out = groove(env, "service", "install", "--config", "conf/groove.toml", "--name", "work")
    assert code == 0, out
    unit = unit_dir(env) / "work.service"
    verify(unit)
    code, out = groove(env, "service", "status", "--name", "work", "--format", "json")
    info = json.loads(out)
    assert code == 0
    assert info["config"] == str(config.resolve()) and info["port"] == 4100
    assert info["kb_path"] == str(kb.resolve()) and info["answering"] is False
    assert info["state"].startswith("unknown")


def test_dry_run_prints_the_unit_and_writes_nothing(tmp_path, env):
    kb = make_kb(tmp_path)
    code, out = groove(env, "service", "install", "--kb-path", str(kb), "--dry-run")
    assert code == 0
    assert "[Service]" in out and "ExecStart=" in out and str(kb.resolve()) in out
    assert not unit_dir(env).exists()


def test_launchd_plist_parses_and_holds_the_arguments(tmp_path, env):
    kb = make_kb(tmp_path)
    code, out = groove(env, "service", "install", "--manager", "launchd", "--kb-path", str(kb),
                       "--port", "3200")
    assert code == 0, out
    plist_path = Path(env["HOME"]) / "Library" / "LaunchAgents" / "local.groove.groove-notes.plist"
    plist = plistlib.loads(plist_path.read_bytes())
    assert plist["Label"] == "local.groove.groove-notes"
    assert plist["ProgramArguments"] == [sys.executable, "-P", "-m", "groove", "serve",
                                         "--transport", "http", "--kb-path", str(kb.resolve()),
                                         "--bind", "127.0.0.1:3200"]
    assert plist["WorkingDirectory"] == "/"  # never the KB: nothing is imported from it
    assert plist["KeepAlive"] == {"SuccessfulExit": False} and plist["RunAtLoad"] is True
    log = Path(env["HOME"]) / "Library" / "Logs" / "groove" / "groove-notes.log"
    assert plist["StandardErrorPath"] == str(log) and log.parent.is_dir()
    code, out = groove(env, "service", "list", "--manager", "launchd")
    assert "groove-notes" in out and "port 3200" in out


def test_list_shows_every_service_and_uninstall_removes_one(tmp_path, env):
    a, b = make_kb(tmp_path, "alpha"), make_kb(tmp_path, "beta")
    assert groove(env, "service", "install", "--kb-path", str(a), "--port", "3301")[0] == 0
    assert groove(env, "service", "install", "--kb-path", str(b), "--port", "3302")[0] == 0
    code, out = groove(env, "service", "list", "--format", "json")
    listed = {s["name"]: (s["port"], s["kb_path"]) for s in json.loads(out)}
    assert listed == {"groove-alpha": (3301, str(a.resolve())), "groove-beta": (3302, str(b.resolve()))}
    code, out = groove(env, "service", "uninstall", "--kb-path", str(a))
    assert code == 0 and "removed" in out
    assert not (unit_dir(env) / "groove-alpha.service").exists()
    code, out = groove(env, "service", "status", "--kb-path", str(a))
    assert code == 1 and "groove-beta" in out  # says what is installed instead


@pytest.mark.parametrize("second, message", [
    (("--port", "3301"), "port 3301 is already used by service groove-alpha"),
    (("--name", "groove-alpha", "--port", "3400"), "already serves"),
])
def test_clashing_installs_are_refused_by_name(tmp_path, env, second, message):
    a, b = make_kb(tmp_path, "alpha"), make_kb(tmp_path, "beta")
    assert groove(env, "service", "install", "--kb-path", str(a), "--port", "3301")[0] == 0
    code, out = groove(env, "service", "install", "--kb-path", str(b), *second)
    assert code == 2 and message in out


def test_a_second_service_for_the_same_kb_is_refused(tmp_path, env):
    a = make_kb(tmp_path, "alpha")
    assert groove(env, "service", "install", "--kb-path", str(a), "--port", "3301")[0] == 0
    code, out = groove(env, "service", "install", "--kb-path", str(a), "--name", "other")
    assert code == 2 and "already served by service groove-alpha" in out


def test_reinstalling_the_same_service_updates_it(tmp_path, env):
    a = make_kb(tmp_path, "alpha")
    assert groove(env, "service", "install", "--kb-path", str(a), "--port", "3301")[0] == 0
    assert groove(env, "service", "install", "--kb-path", str(a), "--port", "3302")[0] == 0
    assert '"127.0.0.1:3302"' in (unit_dir(env) / "groove-alpha.service").read_text()


def test_a_discovered_config_must_be_named_to_be_trusted(tmp_path, env, monkeypatch):
    kb = make_kb(tmp_path)
    (tmp_path / "groove.toml").write_text(f'kb_path = "{kb.as_posix()}"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out = groove(env, "service", "install")
    assert code == 2 and "untrusted" in out and "--config" in out
    assert not unit_dir(env).exists()


def test_bad_name_is_refused_naming_the_option(tmp_path, env):
    kb = make_kb(tmp_path)
    code, out = groove(env, "service", "install", "--kb-path", str(kb), "--name", "../evil")
    assert code == 2 and "--name '../evil'" in out and "accepted" in out


def test_windows_gets_task_scheduler_and_other_platforms_the_command_line(monkeypatch):
    from groove.errors import ConfigError
    from groove.service import backend_for

    monkeypatch.setattr(sys, "platform", "win32")
    assert backend_for().kind == "schtasks"
    monkeypatch.setattr(sys, "platform", "freebsd14")
    with pytest.raises(ConfigError, match="groove serve --transport http --config"):
        backend_for()


def test_default_names_are_valid_for_any_folder_name():
    for folder in ("Notes", "研究ノート", "a b/c", "...", "x" * 200):
        name = default_name(Path("/kbs") / folder)
        assert name.startswith("groove-") and len(name) <= 63
        assert name.replace("-", "").replace(".", "").replace("_", "").isalnum()


@given(st.lists(st.text(st.characters(blacklist_categories=("Cc", "Cs")), min_size=0),
                min_size=1, max_size=6))
def test_exec_quoting_round_trips(argv):
    assert parse_exec(render_exec(argv)) == argv


_PATHS = st.text(st.characters(blacklist_categories=("Cc", "Cs")), min_size=1, max_size=20)


@given(_PATHS, st.integers(1, 65535), st.one_of(st.none(), _PATHS), st.one_of(st.none(), _PATHS))
def test_an_installed_unit_reads_back_as_the_same_service(kb, port, config, db):
    from groove.config.bind import BindAddress
    from groove.service.spec import ServiceSpec
    from groove.service.systemd import Systemd

    spec = ServiceSpec(name="groove-x", kb_path=Path("/" + kb), bind=BindAddress("127.0.0.1", port),
                       config_path=Path("/" + config) if config else None,
                       db_path=Path("/" + db) if db else None, python="/usr/bin/python3")
    exec_line = next(line for line in Systemd({}).render(spec).splitlines()
                     if line.startswith("ExecStart="))
    assert ServiceSpec.from_argv("groove-x", parse_exec(exec_line[len("ExecStart="):])) == spec


def test_socket_install_writes_a_socket_and_service_pair_systemd_accepts(tmp_path, env):
    """`--socket`: systemd binds the port, the service serves on what it is passed."""
    kb = make_kb(tmp_path, "socketed")
    code, out = groove(env, "service", "install", "--kb-path", str(kb), "--port", "3918",
                       "--socket")
    assert code == 0, out
    service = unit_dir(env) / "groove-socketed.service"
    socket_unit = unit_dir(env) / "groove-socketed.socket"
    assert f"wrote {socket_unit}" in out and f"wrote {service}" in out
    assert "systemctl --user enable --now groove-socketed.socket" in out
    done = subprocess.run(["systemd-analyze", "verify", str(socket_unit), str(service)],
                          capture_output=True, text=True)
    assert done.returncode == 0 and not done.stderr.strip(), done.stderr
    assert "ListenStream=127.0.0.1:3918" in socket_unit.read_text()
    text = service.read_text()
    assert "Requires=groove-socketed.socket" in text
    argv = parse_exec(next(line for line in text.splitlines()
                           if line.startswith("ExecStart=")).removeprefix("ExecStart="))
    assert argv[-1] == "--systemd-socket" and "--bind" not in argv
    code, out = groove(env, "service", "list", "--format", "json")
    [listed] = json.loads(out)
    assert (listed["port"], listed["bind"]) == (3918, "127.0.0.1:3918")
    code, out = groove(env, "service", "uninstall", "--kb-path", str(kb))
    assert code == 0 and f"removed {socket_unit}" in out
    assert not socket_unit.exists() and not service.exists()


def _foreign_unit(env: dict[str, str], name: str) -> tuple[Path, str]:
    unit = unit_dir(env) / f"{name}.service"
    unit.parent.mkdir(parents=True, exist_ok=True)
    text = "[Unit]\nDescription=somebody else's\n\n[Service]\nExecStart=/bin/true\n"
    unit.write_text(text, encoding="utf-8")
    return unit, text


def test_uninstall_leaves_a_unit_groove_did_not_write(tmp_path, env):
    unit, text = _foreign_unit(env, "backup")
    code, out = groove(env, "service", "uninstall", "--name", "backup")
    assert code == 2 and "was not written by `groove service install`" in out and str(unit) in out
    assert unit.read_text(encoding="utf-8") == text


def test_install_does_not_overwrite_a_unit_groove_did_not_write(tmp_path, env):
    unit, text = _foreign_unit(env, "backup")
    kb = make_kb(tmp_path)
    for extra in ((), ("--force",)):
        code, out = groove(env, "service", "install", "--kb-path", str(kb), "--name", "backup",
                           "--port", "3311", *extra)
        assert code == 2 and "groove will not overwrite it" in out and str(unit) in out
        assert unit.read_text(encoding="utf-8") == text


def test_a_kb_path_ending_in_a_backslash_is_refused_and_one_inside_verifies(tmp_path, env):
    trailing = make_kb(tmp_path, "notes\\")
    code, out = groove(env, "service", "install", "--kb-path", str(trailing), "--port", "3312")
    assert code == 2 and "ends with a backslash" in out
    assert not list(unit_dir(env).glob("*.service")) if unit_dir(env).exists() else True
    inside = make_kb(tmp_path, "a\\b")
    code, out = groove(env, "service", "install", "--kb-path", str(inside), "--port", "3313")
    assert code == 0, out
    verify(unit_dir(env) / f"{default_name(inside)}.service")


# --- the service never runs code planted in the knowledge base ------------------------------------

_PLANT = 'open({marker!r}, "w").write("planted code ran")\n'


def _planted_kb(root: Path) -> tuple[Path, Path, Path]:
    """A KB holding a ``groove/`` package and a ``tree_sitter_python.py`` that each leave a
    marker file outside the KB when imported, plus a Python file so the grammar is needed."""
    kb = make_kb(root, "cloned")
    (kb / "code.py").write_text("def hello():\n    return 1\n", encoding="utf-8")
    markers = root / "pwned-package", root / "pwned-grammar"
    (kb / "groove").mkdir()
    (kb / "groove" / "__init__.py").write_text(_PLANT.format(marker=str(markers[0])))
    (kb / "groove" / "__main__.py").write_text(_PLANT.format(marker=str(markers[0])))
    (kb / "tree_sitter_python.py").write_text(_PLANT.format(marker=str(markers[1])))
    config = root / "groove.toml"
    config.write_text(f'kb_path = "{kb.as_posix()}"\n\n[parsers]\nenabled = ["md", '
                      '"python"]\n', encoding="utf-8")
    return kb, config, root / "pwned-package"


def _unit_command(env: dict[str, str], kb: Path, config: Path, port: int) -> tuple[list[str], str]:
    code, out = groove(env, "service", "install", "--kb-path", str(kb), "--config", str(config),
                       "--port", str(port))
    assert code == 0, out
    text = (unit_dir(env) / f"{default_name(kb)}.service").read_text(encoding="utf-8")
    lines = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
    return parse_exec(lines["ExecStart"]), lines["WorkingDirectory"]


def test_the_installed_unit_runs_nothing_planted_in_the_kb(tmp_path, env):
    """The unit's exact command, in the unit's working directory, serves and indexes the
    KB (its Python file parsed with tree-sitter) without importing the planted modules."""
    import httpx
    from tests.server._helpers import free_port

    kb, config, _ = _planted_kb(tmp_path)
    port = free_port()
    argv, workdir = _unit_command(env, kb, config, port)
    assert argv[1:4] == ["-P", "-m", "groove"] and not Path(workdir).is_relative_to(kb)
    log = tmp_path / "service.log"
    with log.open("wb") as err:
        proc = subprocess.Popen(argv, cwd=workdir, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=err)
    try:
        status: dict = {}
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                status = httpx.get(f"http://127.0.0.1:{port}/api/admin/status", timeout=2).json()
            except httpx.HTTPError:
                status = {}
            if status.get("kb", {}).get("documents") == 5 and not status["indexing"]["active"]:
                break
            time.sleep(0.2)
        # a.md, code.py and the three planted .py files: all read as text, none imported
        assert status.get("kb", {}).get("documents") == 5, log.read_text()
    finally:
        proc.terminate()
        proc.wait(20)
    assert sorted(p.name for p in tmp_path.glob("pwned-*")) == []


@pytest.mark.parametrize("how", ["python -m groove", "console script"])
def test_groove_started_inside_the_kb_imports_nothing_from_it(tmp_path, how):
    """``python -m groove`` (working directory first on sys.path) and the ``groove`` script,
    both run from inside the KB, index its Python file with the real grammar."""
    import os
    import shutil

    kb, config, _ = _planted_kb(tmp_path)
    shutil.rmtree(kb / "groove")  # `python -m` would import a planted package before groove runs
    script = shutil.which("groove")
    if how == "console script" and script is None:
        pytest.skip("the groove console script is not installed")
    head = [sys.executable, "-m", "groove"] if how == "python -m groove" else [str(script)]
    done = subprocess.run([*head, "index", "--config", str(config)], cwd=kb,
                          capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("indexed 3,")  # a.md, code.py, tree_sitter_python.py as text
    assert sorted(p.name for p in tmp_path.glob("pwned-*")) == []

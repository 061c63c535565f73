"""`groove service status` against a real running `groove serve --transport http`."""

from __future__ import annotations

import json
import os
import subprocess

from _helpers import groove_cmd


def test_status_reports_a_running_server_as_answering(http_server, server_kb, tmp_path):
    env_extra = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "HOME": str(tmp_path / "home"),
                 "XDG_RUNTIME_DIR": str(tmp_path / "none"),
                 "DBUS_SESSION_BUS_ADDRESS": f"unix:path={tmp_path}/no-bus"}
    env = {**os.environ, **env_extra}

    def groove(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(groove_cmd(*args), capture_output=True, text=True, env=env,
                              timeout=60)

    done = groove("service", "install", "--config", str(server_kb.config), "--name", "live",
                  "--port", str(http_server.port))
    assert done.returncode == 0, done.stderr
    done = groove("service", "status", "--name", "live", "--format", "json")
    info = json.loads(done.stdout)
    assert info["answering"] is True and info["port"] == http_server.port
    assert info["kb_path"] == str(server_kb.kb.resolve())
    done = groove("service", "status", "--name", "live")
    assert "answering /healthz: yes" in done.stdout

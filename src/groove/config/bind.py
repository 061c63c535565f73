"""The HTTP bind address: ``"host:port"`` text read once into a :class:`BindAddress`.

Parsing and formatting live here only. A bind travels through groove as a
``BindAddress`` (config, ``--bind`` / ``--port``, the listener, the
DNS-rebinding allow-list, service files) and becomes text again only where a
person or a command line reads it (docs/deployment.md).
"""

from __future__ import annotations

import ipaddress
import re
from typing import NamedTuple

_HOSTNAME_RE = re.compile(r"^[A-Za-z0-9.-]+$")


class BindAddress(NamedTuple):
    """A host (IPv6 without brackets, ready for a socket call) and a port."""

    host: str
    port: int

    @classmethod
    def parse(cls, text: str) -> BindAddress:
        """Read ``"host:port"`` (IPv6 as ``"[::1]:3100"``); ValueError says what is wrong."""
        host, sep, port_text = text.rpartition(":")
        if not sep or not host:
            raise ValueError('expected "host:port", e.g. "127.0.0.1:3100"')
        if host.startswith("["):
            inner = host[1:-1] if host.endswith("]") else ""
            try:
                ipaddress.IPv6Address(inner)
            except ValueError:
                raise ValueError(f"{host} is not a bracketed IPv6 address") from None
            host = inner
        elif ":" in host:
            raise ValueError('an IPv6 address needs brackets, e.g. "[::1]:3100"')
        elif not _HOSTNAME_RE.match(host):
            raise ValueError(f"{host!r} is not a host name or IP address")
        if not (port_text.isascii() and port_text.isdigit()):
            raise ValueError(f"port {port_text!r} is not a number")
        port = int(port_text)
        if not 1 <= port <= 65535:
            raise ValueError(f"port {port} is outside 1..65535")
        return cls(host, port)

    def __str__(self) -> str:
        """``host:port``, with brackets around an IPv6 host (a URL's netloc, a Host header)."""
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    def with_port(self, port: int | None) -> BindAddress:
        """The same host on ``port`` (unchanged when ``port`` is None)."""
        return self if port is None else BindAddress(self.host, port)

    @property
    def is_loopback(self) -> bool:
        return is_loopback_host(self.host)


def parse_bind(text: str) -> BindAddress:
    """Split ``"host:port"`` into ``(host, port)``; see :meth:`BindAddress.parse`."""
    return BindAddress.parse(text)


def is_loopback_host(host: str) -> bool:
    """True for ``localhost`` and loopback IPs (127.0.0.0/8, ::1), brackets allowed."""
    host = host.strip("[]")
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False

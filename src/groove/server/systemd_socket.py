"""Take the listening socket systemd handed over (``sd_listen_fds(3)``), and only that one.

``groove serve --systemd-socket`` (or ``[transport.http] systemd_socket = true``)
serves on the one stream socket a ``.socket`` unit bound and passed as file
descriptor 3 (docs/deployment.md, 'Socket activation'). Nothing reads
``LISTEN_FDS`` without that opt-in, and with it there is no fallback: a socket
that cannot be taken stops ``serve`` with one line naming what was read and
what was expected, because a daemon listening somewhere other than where the
operator configured it is worse than one that does not start.

The checks run in the order ``sd_listen_fds(3)`` gives: ``LISTEN_PID`` is this
process (the variables travel further than the descriptors do), ``LISTEN_FDS``
is exactly 1, then the descriptor's type before whether it listens, so a
``ListenDatagram=`` unit is reported for its type. The family (TCP or a Unix
socket) is read off the descriptor. The socket's file is the service
manager's: groove never unlinks it.
"""

from __future__ import annotations

import os
import socket
import stat
from dataclasses import dataclass

from groove.config.bind import BindAddress
from groove.errors import ConfigError

#: The first descriptor systemd passes (SD_LISTEN_FDS_START).
LISTEN_FDS_START = 3


@dataclass(frozen=True)
class InheritedSocket:
    """The adopted socket: a TCP address, or None for a Unix socket (``path`` then)."""

    sock: socket.socket
    address: BindAddress | None
    path: str | None = None

    def describe(self) -> str:
        if self.address is not None:
            return f"http://{self.address}"
        return f"unix:{self.path or '(unnamed)'}"


def _refuse(what: str) -> ConfigError:
    return ConfigError(f"--systemd-socket: {what}; serve takes exactly one listening stream "
                       "socket passed by systemd (a .socket unit with one ListenStream=) and "
                       "never opens one of its own")


def take_inherited_socket(env: dict[str, str] | None = None) -> InheritedSocket:
    """Check the handover and adopt descriptor 3; clears ``LISTEN_*`` from the environment."""
    environ = os.environ if env is None else env
    pid_text = environ.get("LISTEN_PID")
    fds_text = environ.get("LISTEN_FDS")
    if pid_text is None:
        raise _refuse("LISTEN_PID is not set (was groove started by a socket unit?)")
    if pid_text != str(os.getpid()):
        raise _refuse(f"LISTEN_PID is {pid_text!r} but this process is {os.getpid()}: the "
                      "variables were inherited from another process")
    if fds_text != "1":
        raise _refuse(f"LISTEN_FDS is {fds_text!r}, expected '1'")
    fd = LISTEN_FDS_START
    try:
        mode = os.fstat(fd).st_mode
    except OSError as exc:
        raise _refuse(f"descriptor {fd} is not open ({exc.strerror})") from None
    if not stat.S_ISSOCK(mode):
        raise _refuse(f"descriptor {fd} is not a socket")
    probe = socket.socket(fileno=os.dup(fd))
    try:
        kind = probe.getsockopt(socket.SOL_SOCKET, socket.SO_TYPE)
        if kind != socket.SOCK_STREAM:
            raise _refuse(f"descriptor {fd} is a {_type_name(kind)} socket, expected a stream "
                          "socket (ListenStream=, not ListenDatagram=)")
        if not probe.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN):
            raise _refuse(f"descriptor {fd} is a stream socket that is not listening")
        if probe.family not in (socket.AF_INET, socket.AF_INET6, socket.AF_UNIX):
            raise _refuse(f"descriptor {fd} is of family {probe.family!r}, expected TCP or Unix")
    except BaseException:
        probe.close()
        raise
    probe.close()
    sock = socket.socket(fileno=fd)
    sock.set_inheritable(False)
    for name in ("LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"):
        environ.pop(name, None)
    if sock.family == socket.AF_UNIX:
        name = sock.getsockname()
        return InheritedSocket(sock, None, name if isinstance(name, str) and name else None)
    host, port = sock.getsockname()[:2]
    return InheritedSocket(sock, BindAddress(host, port))


def _type_name(kind: int) -> str:
    names = {int(socket.SOCK_DGRAM): "datagram", int(socket.SOCK_SEQPACKET): "seqpacket",
             int(socket.SOCK_RAW): "raw"}
    return names.get(int(kind), f"type-{kind}")

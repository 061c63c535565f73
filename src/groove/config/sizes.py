"""Byte sizes in groove.toml: ``"300 MiB"``, ``52428800`` or ``"unlimited"`` (docs/configuration.md).

The ``[index]`` size caps (``max_binary_file_size``, ``max_text_file_size``,
``max_decompressed_size``) are read here and nowhere else. A size is a whole
number of bytes of at least 1, or a whole number with a unit — ``B``, ``KB``
``MB`` ``GB`` ``TB`` (powers of 1000) or ``KiB`` ``MiB`` ``GiB`` ``TiB``
(powers of 1024), case-insensitive — or the word ``"unlimited"``. ``0``,
negative numbers, fractions and other words are refused: "no limit" is
spelled out so nobody reads a number two ways. ``None`` stands for unlimited.
"""

from __future__ import annotations

import logging
import re
from typing import Any

log = logging.getLogger("groove.config")

MIB = 1024 * 1024
#: The built-in cap of each of the three keys, and what a read (get_document,
#: resources) keeps whatever they say.
DEFAULT_CAP = 50 * MIB
UNLIMITED = "unlimited"
SIZE_KEYS = ("max_binary_file_size", "max_text_file_size", "max_decompressed_size")

_UNITS = {"b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3, "tb": 1000**4,
          "kib": 1024, "mib": 1024**2, "gib": 1024**3, "tib": 1024**4}
#: ASCII digits and unit letters only: ``"٣ MB"`` (an Arabic-Indic three) is refused.
_SIZE = re.compile(r"^\s*(\d+)\s*([a-z]*)\s*$", re.IGNORECASE | re.ASCII)
ACCEPTED = ('a whole number of bytes >= 1, a whole number with a unit (B, KB, MB, GB, TB; '
            'KiB, MiB, GiB, TiB), or "unlimited"')


def parse_size(value: Any) -> int | None:
    """Bytes (None: unlimited); ValueError saying what is accepted."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a size; accepted: {ACCEPTED}")
    if value is None:
        return None
    if isinstance(value, int):
        if value < 1:
            raise ValueError(f"{value} is not a size (0 and negative numbers do not mean "
                             f'"no limit": write "unlimited"); accepted: {ACCEPTED}')
        return value
    if isinstance(value, str):
        if value.strip().lower() == UNLIMITED:
            return None
        found = _SIZE.match(value)
        if found is not None and found.group(2).lower() in ("", *_UNITS):
            size = int(found.group(1)) * _UNITS.get(found.group(2).lower(), 1)
            if size >= 1:
                return size
    raise ValueError(f"{value!r} is not a size; accepted: {ACCEPTED}")


def describe(size: int | None) -> str:
    """``50 MiB``, ``1234 bytes`` or ``unlimited``, for messages."""
    if size is None:
        return UNLIMITED
    return f"{size // MIB} MiB" if size % MIB == 0 else f"{size} bytes"


_announced: set[str] = set()


def announce_raised(caps: dict[str, int | None]) -> None:
    """One warning per process and key for a cap set above the built-in one."""
    for key, size in caps.items():
        if key in _announced or (size is not None and size <= DEFAULT_CAP):
            continue
        _announced.add(key)
        log.warning(
            "[index] %s = %s is above the built-in %s: a file is held in memory whole while "
            "it is parsed, so memory grows with the largest file and a file larger than the "
            "machine can hold ends the run%s; get_document and resources still return at "
            "most %s", key, describe(size), describe(DEFAULT_CAP),
            " (with \"unlimited\" memory is bounded only by the files)" if size is None else "",
            describe(DEFAULT_CAP))

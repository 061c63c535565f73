"""Files GrooveSeek left in and beside a knowledge base, which groove does not use.

* GrooveSeek kept its index at ``<kb_path>/../.groove.db``; groove keeps its
  own at ``<kb_path>/.groove.db`` and builds it afresh. A file at the old place
  is another program's: groove never opens or writes it, it only says once
  (when it builds a new index, and in ``groove doctor``) that the file is there
  and which command removes it.
* GrooveSeek's old ignore file was ``.kb-mcpignore``; it is not read, so its
  patterns exclude nothing until it is renamed to ``.grooveignore``.

GrooveSeek's index is only looked at (does the path exist); the old ignore
file, the user's own, is read to say which indexed documents it names.
"""

from __future__ import annotations

import logging
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from groove.config.model import DB_FILENAME

log = logging.getLogger("groove.leftovers")

OLD_IGNORE_FILE = ".kb-mcpignore"
IGNORE_FILE = ".grooveignore"


@dataclass(frozen=True)
class Leftover:
    """One GrooveSeek file: where it is, what it is, and the command that deals with it."""

    path: Path
    message: str
    fix: str


def grooveseek_index(kb_path: Path, db_path: Path) -> Leftover | None:
    """GrooveSeek's index beside the KB folder, unless it is the index groove was told to use."""
    old = kb_path.resolve().parent / DB_FILENAME
    try:
        if old == db_path.resolve() or not old.is_file():
            return None
    except OSError:
        return None
    return Leftover(
        path=old,
        message=(f"{old} is where GrooveSeek kept its index (beside the knowledge base); groove "
                 f"does not read it (its own index is {db_path}). If no other knowledge base "
                 "uses it, remove it"),
        fix=f"rm {shlex.quote(str(old))}",
    )


def old_ignore_file(kb_path: Path, indexed: Iterable[str] = ()) -> Leftover | None:
    """A ``.kb-mcpignore`` in the KB: GrooveSeek's ignore file, which groove does not read.

    ``indexed`` (the paths in the index) are matched against its patterns, so
    the message can name the documents it would have kept out — what the
    rename changes. This reads the user's own ignore file, nothing else.
    """
    old = kb_path / OLD_IGNORE_FILE
    try:
        if not old.is_file():
            return None
        patterns = old.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        patterns, unreadable = [], str(exc)
    else:
        unreadable = ""
    new = kb_path / IGNORE_FILE
    if new.exists():
        fix = (f"copy its patterns into {shlex.quote(str(new))}, then "
               f"rm {shlex.quote(str(old))}")
    else:
        fix = f"mv {shlex.quote(str(old))} {shlex.quote(str(new))}"
    import pathspec

    spec = pathspec.PathSpec.from_lines("gitignore", patterns)
    matched = sorted(p for p in indexed if spec.match_file(p))
    if unreadable:
        effect = f" (it could not be read: {unreadable})"
    elif matched:
        shown = ", ".join(matched[:5]) + (", …" if len(matched) > 5 else "")
        effect = f"; its patterns match {len(matched)} indexed document(s): {shown}"
    else:
        effect = "; its patterns match no indexed document"
    return Leftover(
        path=old,
        message=(f"{OLD_IGNORE_FILE} is GrooveSeek's old ignore-file name and is not read, so "
                 f"its patterns exclude nothing; groove reads {IGNORE_FILE}{effect}"),
        fix=fix,
    )


def note_grooveseek_index(kb_path: Path, db_path: Path) -> None:
    """Say (once, as a warning) that GrooveSeek's index sits beside the KB; called on a first build."""
    found = grooveseek_index(kb_path, db_path)
    if found is not None:
        log.warning("%s: %s", found.message, found.fix)

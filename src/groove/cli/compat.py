"""GrooveSeek's command-line spellings, rewritten to groove's before click parses them.

* ``--tag-any a,b`` / ``--tag-all a,b`` (comma lists) become one flag per item;
* ``--exclude-paths a,b`` (``graph``) becomes ``--exclude-path a --exclude-path b``;
* ``--mmr true|false`` (a value) becomes ``--mmr`` / ``--no-mmr``.

Both ``--flag value`` and ``--flag=value`` are read; nothing after ``--`` is
touched. Each rewrite adds one deprecation line (printed on stderr by
:func:`groove.cli.main`); an argument list without these spellings comes back
unchanged. docs/grooveseek.md has the full map.
"""

from __future__ import annotations

#: Flags whose value GrooveSeek took as a comma list -> groove's repeatable flag.
LIST_FLAGS: dict[str, str] = {"--tag-any": "--tag-any", "--tag-all": "--tag-all",
                              "--exclude-paths": "--exclude-path"}
#: Flags GrooveSeek took with a true/false value -> groove's (on, off) flags.
BOOL_FLAGS: dict[str, tuple[str, str]] = {"--mmr": ("--mmr", "--no-mmr")}
_TRUTH = {"true": True, "false": False}


def upgrade_argv(argv: list[str]) -> tuple[list[str], list[str]]:
    """``(argv in groove's spelling, one note per rewrite)``."""
    out: list[str] = []
    notes: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            out += argv[i:]
            break
        flag, eq, inline = arg.partition("=")
        if flag in LIST_FLAGS and (eq or i + 1 < len(argv)):
            value = inline if eq else argv[i + 1]
            i += 1 if eq else 2
            new = LIST_FLAGS[flag]
            items = [v.strip() for v in value.split(",")] if "," in value else [value]
            items = [v for v in items if v] or [value]
            for item in items:
                out += [new, item]
            if flag != new or len(items) > 1:
                shown = " ".join(f"{new} {item}" for item in items)
                notes.append(f"{flag} {value!r} is GrooveSeek's form; read as {shown} "
                             "(repeat the flag, one value each)")
            continue
        if flag in BOOL_FLAGS:
            value = inline if eq else (argv[i + 1] if i + 1 < len(argv) else "")
            if value.lower() in _TRUTH:
                on, off = BOOL_FLAGS[flag]
                new = on if _TRUTH[value.lower()] else off
                out.append(new)
                notes.append(f"{flag} {value} is GrooveSeek's form; read as {new}")
                i += 1 if eq else 2
                continue
        out.append(arg)
        i += 1
    return out, notes

"""GrooveSeek's command-line spellings, rewritten to groove's before click parses them.

* ``groove --config X <command>`` (GrooveSeek's global option) becomes
  ``groove <command> --config X``;
* ``--tag-any a,b`` / ``--tag-all a,b`` (comma lists) become one flag per item;
* ``--exclude-paths a,b`` (``graph``) becomes ``--exclude-path a --exclude-path b``;
* ``--mmr`` / ``--parent-retriever`` / ``--rerank-by-default`` with a
  ``true|false`` value become ``--x`` / ``--no-x``;
* ``--reranker none`` becomes ``--no-rerank`` (``search``, ``eval``) or
  ``--no-rerank-by-default`` (``serve``);
* ``--service-name N`` (``service``) becomes ``--name N``.

Both ``--flag value`` and ``--flag=value`` are read; nothing after ``--`` is
touched. Each rewrite adds one deprecation line (printed on stderr by
:class:`groove.cli.usage.GrooveGroup`); an argument list without these
spellings comes back unchanged. docs/grooveseek.md has the full table.
"""

from __future__ import annotations

#: Flags whose value GrooveSeek took as a comma list -> groove's repeatable flag.
LIST_FLAGS: dict[str, str] = {"--tag-any": "--tag-any", "--tag-all": "--tag-all",
                              "--exclude-paths": "--exclude-path"}
#: Flags GrooveSeek took with a true/false value -> groove's (on, off) flags.
BOOL_FLAGS: dict[str, tuple[str, str]] = {
    "--mmr": ("--mmr", "--no-mmr"),
    "--parent-retriever": ("--parent-retriever", "--no-parent-retriever"),
    "--rerank-by-default": ("--rerank-by-default", "--no-rerank-by-default"),
}
#: Value flags GrooveSeek named differently, per command -> groove's name.
RENAMED_FLAGS: dict[str, tuple[str, str]] = {"--service-name": ("service", "--name")}
#: What ``--reranker none`` ("no reranking") is in groove, per command.
NO_RERANKER: dict[str, str] = {"search": "--no-rerank", "eval": "--no-rerank",
                               "serve": "--no-rerank-by-default"}
_TRUTH = {"true": True, "false": False}


def _hoist_global_config(argv: list[str], notes: list[str]) -> list[str]:
    """``--config X`` given before the command moves behind it (groove's options are per command)."""
    flag, eq, inline = argv[0].partition("=") if argv else ("", "", "")
    if flag != "--config" or not (eq or len(argv) > 2):
        return argv
    value = inline if eq else argv[1]
    rest = argv[1:] if eq else argv[2:]
    path = []
    while rest and not rest[0].startswith("-"):
        path.append(rest.pop(0))
        if path[-1] != "service":
            break
    notes.append(f"--config before the command is GrooveSeek's form; read as "
                 f"groove {' '.join(path)} --config {value}")
    return [*path, "--config", value, *rest]


def upgrade_argv(argv: list[str]) -> tuple[list[str], list[str]]:
    """``(argv in groove's spelling, one note per rewrite)``."""
    notes: list[str] = []
    argv = _hoist_global_config(list(argv), notes)
    command = next((a for a in argv if not a.startswith("-")), "")
    out: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            out += argv[i:]
            break
        flag, eq, inline = arg.partition("=")
        has_value = bool(eq) or i + 1 < len(argv)
        value = inline if eq else (argv[i + 1] if i + 1 < len(argv) else "")
        step = 1 if eq else 2
        if flag in LIST_FLAGS and has_value:
            i += step
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
        if flag in BOOL_FLAGS and value.lower() in _TRUTH:
            on, off = BOOL_FLAGS[flag]
            new = on if _TRUTH[value.lower()] else off
            out.append(new)
            notes.append(f"{flag} {value} is GrooveSeek's form; read as {new}")
            i += step
            continue
        if flag == "--reranker" and value.lower() == "none" and command in NO_RERANKER:
            out.append(NO_RERANKER[command])
            notes.append(f"--reranker none is GrooveSeek's form; read as {NO_RERANKER[command]}")
            i += step
            continue
        if flag in RENAMED_FLAGS and RENAMED_FLAGS[flag][0] == command and has_value:
            new = RENAMED_FLAGS[flag][1]
            out += [new, value]
            notes.append(f"{flag} is GrooveSeek's name; read as {new} {value}")
            i += step
            continue
        out.append(arg)
        i += 1
    return out, notes

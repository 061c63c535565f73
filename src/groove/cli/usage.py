"""Command-line mistakes (unknown flag, bad value, missing argument) as one ``error:`` line.

docs/cli.md promises that every error is a single line on stderr starting
with ``error:`` that names what was wrong and what is accepted, with exit
code 2. click's own reporting prints a three-line usage block headed
``Error:``; :class:`GrooveGroup` replaces it for every command at once, so no
command formats its own usage errors. Library errors (:class:`GrooveError`)
take the same shape through :func:`groove.cli.options.handle_errors`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, NoReturn

import click

from groove.cli.commands import load, load_all

#: The exit code of every usage error (GrooveSeek's clap used the same).
USAGE_EXIT = 2


def fail(message: str, code: int = USAGE_EXIT) -> NoReturn:
    """Print ``error: <message>`` on stderr and exit with ``code`` (no traceback)."""
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


def _command_path(ctx: click.Context | None) -> str:
    return ctx.command_path if ctx is not None else "groove"


def accepted_options(command: click.Command, ctx: click.Context) -> list[str]:
    """Every visible long flag of ``command`` (``--x/--no-x`` both), in help order."""
    out: list[str] = []
    for param in command.get_params(ctx):
        if isinstance(param, click.Option) and not param.hidden:
            out += [o for o in (*param.opts, *param.secondary_opts) if o.startswith("--")]
    return out


def _usage(ctx: click.Context | None) -> str:
    if ctx is None:
        return "groove --help"
    pieces = ctx.command.collect_usage_pieces(ctx)
    return " ".join([ctx.command_path, *pieces])


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[:1].isupper() and text[1:2].islower() else text


def describe(exc: click.ClickException) -> str:
    """The one-line message for a click error: what was wrong, then what is accepted."""
    ctx: click.Context | None = getattr(exc, "ctx", None)
    if isinstance(exc, click.NoSuchOption) and ctx is not None:
        hint = ""
        if exc.possibilities:
            hint = f" (did you mean {' or '.join(sorted(exc.possibilities))}?)"
        accepted = ", ".join(accepted_options(ctx.command, ctx))
        return (f"`{_command_path(ctx)}` has no option {exc.option_name}{hint}; "
                f"accepted: {accepted} (docs/cli.md; GrooveSeek's flags: docs/grooveseek.md)")
    message = " ".join(_lower_first(exc.format_message()).split()).rstrip(".")
    if (isinstance(exc, click.UsageError) and ctx is not None
            and isinstance(ctx.command, click.Group) and message.startswith("no such command")):
        commands = ", ".join(ctx.command.list_commands(ctx))
        return f"{message}; accepted commands of `{_command_path(ctx)}`: {commands}"
    if isinstance(exc, click.MissingParameter | click.BadArgumentUsage) or (
            isinstance(exc, click.UsageError) and "extra argument" in message):
        return f"{message}; usage: {_usage(ctx)}"
    return message


class GrooveGroup(click.Group):
    """A click group whose errors all take groove's one-line shape.

    The group's :meth:`main` first rewrites GrooveSeek's spellings
    (:mod:`groove.cli.compat`, one ``deprecated:`` line each), then runs click
    in non-standalone mode and turns every :class:`click.ClickException` into
    :func:`describe`'s line with exit 2. Sub-commands raise into this one
    ``main``, so the rule lives here once.
    """

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command, its module imported first if nothing imported it yet
        (:mod:`groove.cli.commands`)."""
        if cmd_name not in self.commands:
            load(cmd_name)
        return super().get_command(ctx, cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        load_all()
        return super().list_commands(ctx)

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             windows_expand_args: bool = True, **extra: Any) -> Any:
        from groove.cli.compat import upgrade_argv

        argv, notes = upgrade_argv(list(sys.argv[1:] if args is None else args))
        for note in notes:
            click.echo(f"deprecated: {note}", err=True)
        if not standalone_mode:
            return super().main(argv, prog_name, complete_var, standalone_mode=False,
                               windows_expand_args=windows_expand_args, **extra)
        try:
            code = super().main(argv, prog_name, complete_var, standalone_mode=False,
                               windows_expand_args=windows_expand_args, **extra)
        except click.exceptions.NoArgsIsHelpError as exc:
            click.echo(exc.ctx.get_help() if exc.ctx else "", err=True)
            sys.exit(USAGE_EXIT)
        except click.ClickException as exc:
            fail(describe(exc), USAGE_EXIT if isinstance(exc, click.UsageError) else exc.exit_code)
        except click.Abort:
            fail("interrupted", 130)
        sys.exit(code if isinstance(code, int) else 0)


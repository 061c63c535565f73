"""The ``groove`` command: a thin click layer over the library.

Each subcommand lives in its own module and only translates flags into
library calls and results into stdout. Options shared by several commands are
decorators in :mod:`groove.cli.options`, written once.
"""

from __future__ import annotations

import click

from groove._logging import configure_logging
from groove._version import __version__
from groove.cli.usage import GrooveGroup


@click.group("groove", cls=GrooveGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="groove")
def cli() -> None:
    """Local knowledge-base search: index a folder of notes, search it, serve it over MCP."""
    configure_logging()


def main() -> None:
    """The ``groove`` entry point (usage errors and GrooveSeek spellings: :class:`GrooveGroup`)."""
    cli(prog_name="groove")

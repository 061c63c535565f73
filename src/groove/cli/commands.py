"""Imports every command module so its ``@cli.command`` registers itself."""

from groove.cli import index_cmd, search_cmd, serve_cmd, status_cmd  # noqa: F401

# Optional command modules written alongside their library module; each
# registers itself when present.
for _name in ("eval_cmd", "tune_cmd", "graph_cmd", "doctor_cmd", "validate_cmd", "service_cmd"):
    try:
        __import__(f"groove.cli.{_name}")
    except ModuleNotFoundError as exc:  # pragma: no cover - only while a module is absent
        if exc.name != f"groove.cli.{_name}":
            raise

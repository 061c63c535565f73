"""Option groups shared by several commands, each written once.

``kb_options`` gives every command ``--kb-path/--config/--db-path`` and hands
it a ready :class:`~groove.kb.KnowledgeBase` (config errors exit 2 before any
model loads). ``search_options`` derives one flag per field of
:class:`~groove.search.request.SearchRequest` (docs/cli.md) and hands the
command a request template; ``search``, ``eval`` and ``tune`` share it, and
the MCP tool is generated from the same model, so none of them can drift.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from groove.cli.usage import fail
from groove.config import GOLDEN_FILENAME
from groove.errors import GrooveError, InvalidArgument
from groove.rerankers import RERANKERS
from groove.search.request import (
    SearchRequest,
    base_type,
    field_help,
    fields_from_pairs,
    flag_name,
)

if TYPE_CHECKING:
    from groove.collections import Collections
    from groove.kb import KnowledgeBase


def handle_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """Turn GrooveError into a one-line message on stderr and its exit code."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except GrooveError as exc:
            fail(str(exc), exc.exit_code)
        except KeyboardInterrupt:
            fail("interrupted", 130)

    return wrapper


Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


COLLECTION_HELP = ("Only this collection of the groove.toml's [collections] (repeat the flag "
                   "for several; default: all of them).")


def collection_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--collection NAME`` (repeatable), for commands without the search flags (``search``
    gets it from :class:`SearchRequest`'s ``collection`` field, with the same meaning)."""
    return click.option("--collection", "collection", multiple=True, metavar="NAME",
                        help=COLLECTION_HELP)(func)


def kb_options(overrides: Callable[[dict[str, Any]], dict[str, Any]] | None = None, *,
               model: bool = False, collections: bool = False, select: bool = False,
               one: bool = False, prefix_of: str | None = None) -> Decorator:
    """Add ``--kb-path/--config/--db-path`` and pass ``kb`` (a KnowledgeBase).

    ``overrides`` maps the command's own parsed options to config overrides
    (CLI beats groove.toml beats defaults); those options are still passed on.
    ``model=True`` adds ``--model``, the embedding model the command expects
    the index to hold (checked against the index before any model loads).
    ``collections=True``: the command understands a groove.toml naming
    collections and is then passed a :class:`~groove.collections.Collections`
    as ``kb`` (any other command refuses such a file without ``--kb-path``);
    ``select=True`` adds ``--collection`` and keeps only the named ones.
    ``one=True``: the command reads one knowledge base; with a collections file
    it takes ``--collection NAME`` (needed when the file names more than one)
    and is passed that collection's KnowledgeBase. ``prefix_of`` names an
    argument (``ls``'s FOLDER) whose first segment may name the collection
    instead: ``groove ls notes/guides``.
    """

    def decorator(func: Callable[..., Any]) -> Callable[..., Any]:
        @click.option("--kb-path", type=click.Path(path_type=Path), default=None,
                      help="Folder of notes to index (overrides kb_path in groove.toml).")
        @click.option("--config", "config_path", type=click.Path(path_type=Path), default=None,
                      help="groove.toml to use (trusted); default: discovered.")
        @click.option("--db-path", type=click.Path(path_type=Path), default=None,
                      help="Index file (default <kb_path>/.groove.db).")
        @functools.wraps(func)
        @handle_errors
        def wrapper(kb_path: Path | None, config_path: Path | None, db_path: Path | None,
                    **kwargs: Any) -> Any:
            from groove.config import load_config, load_settings
            from groove.kb import KnowledgeBase

            chosen_model = kwargs.pop("model", None) if model else None
            names = list(kwargs.pop("collection", ()) or ()) if select or one else []
            extra = overrides(kwargs) if overrides else {}
            if chosen_model:
                extra = {**extra, "model": chosen_model}
            load = load_settings if collections or one else load_config
            loaded = load(config_path=config_path, kb_path=kb_path, db_path=db_path,
                          overrides=extra or None)
            kb: Any
            if isinstance(loaded, dict) and one:
                kb = KnowledgeBase(loaded[_one_collection(loaded, names, kwargs, prefix_of)])
            elif isinstance(loaded, dict):
                from groove.collections import Collections

                kb = Collections(loaded, only=names or None)
            elif names:
                raise InvalidArgument(f"--collection {names[0]}: no collections are named "
                                      "(this reads one folder); accepted: a groove.toml with "
                                      "[collections.NAME] tables (docs/collections.md)")
            else:
                kb = KnowledgeBase(loaded)
            try:
                return func(kb=kb, **kwargs)
            finally:
                kb.close()

        if select or one:
            wrapper = collection_option(wrapper)  # type: ignore[assignment]
        if model:
            from groove.embedders import EMBEDDERS

            wrapper = click.option(
                "--model", default=None,
                help=f"Embedding model id (overrides groove.toml): {EMBEDDERS.accepted()}.")(wrapper)
        return wrapper

    return decorator


def _one_collection(configs: dict[str, Any], names: list[str], kwargs: dict[str, Any],
                    prefix_of: str | None) -> str:
    """The collection a one-folder command reads: ``--collection``, else the first segment
    of the ``prefix_of`` argument when it names one (which is then taken off), else the
    file's only collection."""
    from groove.collections import check_names

    known = list(configs)
    if len(names) > 1:
        raise InvalidArgument(f"--collection: this command reads one collection, {len(names)} "
                              f"were given; accepted: one of {', '.join(known)}")
    if names:
        return check_names(names, known)[0]
    given = kwargs.get(prefix_of) if prefix_of else None
    if given:
        head, _, rest = str(given).strip("/").partition("/")
        if head in configs:
            kwargs[prefix_of] = rest or None  # type: ignore[index]
            return head
    if len(known) == 1:
        return known[0]
    raise InvalidArgument(f"the groove.toml names {len(known)} collections and this command "
                          f"reads one; accepted: --collection NAME with one of {', '.join(known)}"
                          + (f" (or {prefix_of.upper()} starting with one)" if prefix_of else ""))


def golden_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--golden``: the golden YAML of ``eval`` and ``tune``."""
    return click.option("--golden", type=click.Path(path_type=Path), default=None,
                        help=f"Golden YAML (default <kb>/{GOLDEN_FILENAME}, or [eval] golden).")(func)


def format_option(*choices: str, default: str) -> Decorator:
    return click.option("--format", "fmt", type=click.Choice(choices), default=default,
                        show_default=True, help="Output format.")


def model_flag(name: str, info: FieldInfo, model: type[BaseModel] = SearchRequest) -> Decorator:
    """The click option of one argument-model field (flag, type and help from the model).

    Every option defaults to None ("not given"), so the model's own default applies.
    """
    kind = base_type(info)
    flag, help_text = flag_name(name, model), field_help(name, model)
    if kind is bool and info.default is False:
        return click.option(flag, name, is_flag=True, default=None, help=help_text)
    if kind is bool:
        return click.option(f"{flag}/--no-{flag[2:]}", name, default=None, help=help_text)
    if kind is list:
        return click.option(flag, name, multiple=True, help=help_text + " Repeat the flag.")
    if kind is dict:
        return click.option(flag, name, multiple=True, metavar="KEY=VALUE",
                            help=help_text + " Written key=value; repeat the flag.")
    param_type = {int: int, float: float}.get(kind, str)
    return click.option(flag, name, type=param_type, default=None, help=help_text)


def search_options(func: Callable[..., Any] | None = None, *,
                   omit: tuple[str, ...] = ()) -> Any:
    """Every search parameter as a flag, plus ``--reranker``; passes ``base_request``.

    The flags are derived from :class:`SearchRequest` (query left empty: the
    command fills it in); bounds are checked by the model, so the messages
    match the library's and the MCP tool's. ``omit`` leaves out fields a
    command sets itself (``eval``/``tune`` search as deep as the golden set's
    largest k, so they offer no ``--limit``).
    """
    if func is None:
        return functools.partial(search_options, omit=omit)
    fields = {name: info for name, info in SearchRequest.model_fields.items()
              if name != "query" and name not in omit}

    @functools.wraps(func)
    def wrapper(**kwargs: Any) -> Any:
        given = {name: kwargs.pop(name) for name in fields}
        given = {name: value for name, value in given.items() if value not in (None, ())}
        for name, value in given.items():
            if base_type(fields[name]) is dict:
                given[name] = fields_from_pairs(flag_name(name), value)
        return func(base_request=SearchRequest(query="", **given), **kwargs)

    decorated: Callable[..., Any] = wrapper
    decorated = click.option("--reranker", default=None,
                             help=f"Reranker id (overrides groove.toml): {RERANKERS.accepted()}.")(decorated)
    for name, info in reversed(fields.items()):
        decorated = model_flag(name, info)(decorated)
    return decorated


def search_overrides(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Config overrides carried by the search flags (only ``--reranker``).

    Naming a reranker also turns reranking on for this run unless ``--no-rerank``
    says otherwise (GrooveSeek's rule: the per-query override on the command
    line is ``--reranker`` itself), so a script passing ``--reranker`` gets
    reranked results, not the selection alone.
    """
    reranker = kwargs.pop("reranker", None)
    if reranker and kwargs.get("rerank") is None:
        kwargs["rerank"] = True
    return {"reranker": reranker} if reranker else {}


def _k_list(ctx: click.Context, param: click.Parameter, value: str | None) -> list[int] | None:
    """``--k 1,5,10`` (GrooveSeek's comma list) as integers."""
    if value is None:
        return None
    try:
        return [int(part) for part in value.split(",") if part.strip()]
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a comma-separated list of integers "
                                 "(e.g. 1,5,10)") from None


def depth_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--k`` (the cut-offs, overriding [eval] k_values) and ``--limit`` (hits fetched per query)."""
    from groove.search.request import MAX_LIMIT

    func = click.option("--limit", "depth", type=click.IntRange(1, MAX_LIMIT), default=None,
                        help="Hits fetched per query (default: the largest k; never less).")(func)
    return click.option("--k", "k_values", callback=_k_list, default=None, metavar="K[,K...]",
                        help="Cut-offs to report, e.g. 1,5,10 (overrides [eval] k_values).")(func)


def no_color_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--no-color``: plain text even on a terminal (NO_COLOR in the environment does the same)."""
    return click.option("--no-color", is_flag=True,
                        help="No colour or other terminal styling in text output.")(func)


def golden_run_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """What ``eval`` and ``tune`` share: the golden file, the depth and cut-offs, text or
    JSON, the knowledge base (with ``--reranker``/``--k`` as config overrides) and every
    search option but ``--limit`` (there it is the depth) and ``--explain``. With a
    groove.toml naming collections the command is passed a Collections and the request's
    ``collection`` (:func:`golden_targets` reads them)."""
    for option in (search_options(omit=("limit", "explain")),
                   kb_options(overrides=eval_overrides, model=True, collections=True),
                   format_option("text", "json", default="text"), no_color_option, depth_options,
                   golden_option):
        func = option(func)
    return func


def golden_targets(kb: KnowledgeBase | Collections, request: SearchRequest,
                   golden: Path | None, command: str
                   ) -> list[tuple[str | None, KnowledgeBase, SearchRequest]]:
    """What ``eval``/``tune`` run on: ``[(collection or None, knowledge base, request)]``.

    One folder: itself. Collections: each chosen one (``--collection``), searched
    alone with its own golden file; ``--golden`` names one file, so it needs one
    collection, and so does ``tune`` (its suggestion is one collection's settings).
    """
    from groove.collections import Collections

    if not isinstance(kb, Collections):
        return [(None, kb, request)]
    chosen = kb.chosen(request.collection)
    if len(chosen) > 1 and (golden is not None or command == "tune"):
        why = "--golden names one file" if golden is not None else "tune suggests one collection's settings"
        raise InvalidArgument(f"{command}: {why}; accepted: --collection NAME with one of "
                              f"{', '.join(chosen)}")
    alone = request.replace(collection=None)
    return [(name, kb[name], alone) for name in chosen]


def eval_overrides(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Config overrides of ``eval``/``tune``: ``--reranker`` and ``--k``."""
    out = search_overrides(kwargs)
    k_values = kwargs.pop("k_values", None)
    if k_values:
        out["eval"] = {"k_values": k_values}
    return out

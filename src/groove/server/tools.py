"""The MCP tools, as plain async functions bound to one knowledge base.

Each tool validates its path arguments lexically (``server.paths``), runs the
blocking work (SQLite, the model) in a worker thread so the event loop keeps
serving other sessions, and lets :func:`tool_errors` turn failures into MCP
tool errors: a :class:`~groove.errors.GrooveError` keeps its message (written
for a model to act on), anything else becomes a generic message while the
traceback goes to the log on stderr.

Optional arguments are declared ``X | None = None`` so that "not given" means
"the server's setting"; :func:`plain_schema` then removes the ``null`` arm
from the advertised schema, because strict clients reject ``anyOf`` unions.
The ``search`` tool's parameters, bounds and descriptions are generated from
:class:`~groove.search.request.SearchRequest`, the same model the CLI flags
come from (docs/mcp.md).
"""

import functools
import inspect
import logging
import re
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Annotated, Any

import anyio.to_thread
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, ConfigDict, Field

from groove.documents.lines import line_window, split_location
from groove.documents.read import multi_get as read_several
from groove.documents.read import read_document, servable
from groove.documents.request import GetRequest
from groove.errors import GrooveError, InvalidArgument, NotFound
from groove.graph.params import GraphParams, LinksParams
from groove.kb import DOCUMENT_TEXT_CAP_BYTES, DOCUMENT_TEXT_CAP_LABEL
from groove.models import SearchResponse, with_line_aliases
from groove.paths import check_rel_path, doc_uri
from groove.search.request import ArgumentModel, SearchRequest, field_help
from groove.server.state import ServerState

if TYPE_CHECKING:
    from groove.kb import KnowledgeBase

log = logging.getLogger("groove.server")

#: get_document text cap (docs/mcp.md, 'get_document').

ToolFn = Callable[..., Awaitable[Any]]


class RebuildRequest(ArgumentModel):
    """The ``rebuild_index`` arguments, as strict as every other request (``force: "yes"`` is refused)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    force: bool = Field(False, description="Re-embed every document, not only changed ones.")


def tool_errors(fn: ToolFn) -> ToolFn:
    """Map exceptions to tool errors; never let a traceback reach the client."""

    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return await fn(*args, **kwargs)
        except ToolError:
            raise
        except GrooveError as exc:
            raise ToolError(str(exc)) from None
        except Exception:
            log.exception("tool %s failed unexpectedly", fn.__name__)
            raise ToolError(
                f"{fn.__name__} failed with an internal error (details are in the server log); "
                "the server is still running, try again or use another tool"
            ) from None

    return wrapper


def plain_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Drop ``{"type": "null"}`` from ``anyOf`` arms and ``default: null``, in place."""
    for prop in schema.get("properties", {}).values():
        arms = prop.get("anyOf")
        if arms is not None:
            rest = [a for a in arms if a.get("type") != "null"]
            if len(rest) == 1:
                del prop["anyOf"]
                prop.update(rest[0])
        if "default" in prop and prop["default"] is None:
            del prop["default"]
    return schema


def _opt_text(value: str | None) -> str | None:
    return value if value else None


#: Search arguments a single-folder server does not offer (they name collections).
SINGLE_FOLDER_OMIT = ("collection",)


def model_signature(model: type[BaseModel] = SearchRequest,
                    omit: tuple[str, ...] = ()) -> inspect.Signature:
    """A tool's parameters: one per field of its argument model, types only.

    The SDK validates nothing here (every type is ``Any``), so every refusal,
    a wrong type included, is the model's and reads like the CLI's. Only a
    ``str`` field keeps its type: the SDK would otherwise decode a text that
    happens to be JSON (a query ``["x"]`` or ``true``) before we see it.
    """
    return inspect.Signature([
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY,
                          annotation=str if info.annotation is str else Any,
                          default=inspect.Parameter.empty if info.is_required() else info.default)
        for name, info in model.model_fields.items() if name not in omit
    ], return_annotation=dict[str, Any])


def model_input_schema(model: type[BaseModel] = SearchRequest,
                       title: str = "searchArguments",
                       omit: tuple[str, ...] = ()) -> dict[str, Any]:
    """The advertised schema of a tool, generated from its argument model (no unions),
    without the fields in ``omit``."""
    schema = model.model_json_schema()
    for name in omit:
        schema["properties"].pop(name, None)
    schema.pop("additionalProperties", None)
    schema.pop("description", None)
    schema["title"] = title
    for name, prop in schema["properties"].items():
        prop["description"] = field_help(name, model)
    return plain_schema(schema)


def register_tools(add: Callable[..., None], state: ServerState) -> None:
    """Register every tool through ``add(fn, description, schema=None)``.

    ``schema`` replaces the input schema the SDK derives from the signature.
    """
    kb = state.kb

    async def search(**arguments: Any) -> dict[str, Any]:
        request = SearchRequest(**arguments)  # strict: limit "5" is refused, not read as 5
        # One worker-thread hop does the search and the JSON shaping: the event
        # loop only moves bytes (docs/deployment.md, "Latency").
        return await anyio.to_thread.run_sync(lambda: with_uris(kb, kb.search(request)))

    search.__signature__ = model_signature(  # type: ignore[attr-defined]
        SearchRequest, SINGLE_FOLDER_OMIT)

    async def get_document(
        path: Annotated[str, Field(description="Document path relative to the KB root, as in search results; 'path:120' or 'path:120-140' gives a line window.")],
        line_start: Annotated[int | None, Field(ge=1, description="Return only the text from this line (1-based), e.g. a code hit's line_start.")] = None,
        line_end: Annotated[int | None, Field(ge=1, description="Return only the text up to this line (inclusive), e.g. a code hit's line_end.")] = None,
        max_lines: Annotated[int | None, Field(ge=1, description="Return at most this many lines from line_start.")] = None,
        start_line: Annotated[int | None, Field(ge=1, description="Another spelling of line_start.")] = None,
        end_line: Annotated[int | None, Field(ge=1, description="Another spelling of line_end.")] = None,
    ) -> dict[str, Any]:
        line_start = either_spelling("line_start", line_start, "start_line", start_line)
        line_end = either_spelling("line_end", line_end, "end_line", end_line)
        path, line_start, line_end = window_in_path(path, line_start, line_end)

        def answer() -> dict[str, Any]:
            from groove.graph.links import document_links_json

            doc = read_document(kb, path)
            return {**document_json(doc, line_start, line_end, max_lines),
                    **document_links_json(kb, doc.document.path)}

        return await anyio.to_thread.run_sync(answer)

    async def links(**arguments: Any) -> dict[str, Any]:
        from groove.graph.links import links_answer

        params = LinksParams(**arguments)  # the path gate, before any work
        return await anyio.to_thread.run_sync(functools.partial(links_answer, kb, params))

    links.__signature__ = model_signature(LinksParams)  # type: ignore[attr-defined]

    async def multi_get(**arguments: Any) -> dict[str, Any]:
        request = GetRequest(**arguments)
        return await anyio.to_thread.run_sync(read_several, kb, request)

    multi_get.__signature__ = model_signature(GetRequest)  # type: ignore[attr-defined]

    async def list_topics() -> dict[str, Any]:
        return await anyio.to_thread.run_sync(topics_json, kb)

    async def get_connection_graph(**arguments: Any) -> dict[str, Any]:
        try:
            from groove.graph import connection_graph
        except ImportError:
            raise ToolError("get_connection_graph is not available in this build") from None
        params = GraphParams(**arguments)  # bounds and the path gate, before any work
        return await anyio.to_thread.run_sync(functools.partial(connection_graph, kb, params))

    get_connection_graph.__signature__ = model_signature(GraphParams)  # type: ignore[attr-defined]

    async def get_best_practice(
        target: Annotated[str, Field(description="What the best practice is about; substituted into the configured path templates.")],
        category: Annotated[str | None, Field(description="Return only the '## <category>' section.")] = None,
    ) -> dict[str, Any]:
        return await anyio.to_thread.run_sync(best_practice, kb, target, _opt_text(category))

    async def rebuild_index(**arguments: Any) -> dict[str, Any]:
        request = RebuildRequest(**arguments)
        with state.exclusive_rebuild():
            summary = await anyio.to_thread.run_sync(functools.partial(
                kb.index, force=request.force, wait=False))
        return {"summary": summary.line(), **summary.to_json()}

    rebuild_index.__signature__ = model_signature(RebuildRequest)  # type: ignore[attr-defined]

    add(search, "Hybrid (full-text + embedding) search over the knowledge base. Cite the returned "
                "paths. low_confidence=true means 'the knowledge base probably does not answer "
                "this'; low_confidence_reason says why (no_content_word, quote_not_found, "
                "legs_disagree).",
        schema=model_input_schema(SearchRequest, "searchArguments", SINGLE_FOLDER_OMIT))
    add(get_document, "Full text and metadata of one indexed document (text capped at "
                      f"{DOCUMENT_TEXT_CAP_LABEL}), with the links written in it and the "
                      "links to it (backlinks).")
    add(links, "The links written in a document (wikilinks and Markdown links, each with the "
               "document and heading it resolves to, or why it points at none), or with "
               "backlinks=true the links to it: which documents link here, from which "
               "section, with that section's first line.",
        schema=model_input_schema(LinksParams, "linksArguments"))
    add(multi_get, "Several indexed documents at once, by paths (each may carry a line window, "
                   "path:120-140) or globs (guides/**/*.md); each text and the whole answer are "
                   "capped in bytes, and the answer says what was cut or left out.",
        schema=model_input_schema(GetRequest, "multi_getArguments"))
    add(list_topics, "Categories and topics in the knowledge base, with document counts, and "
                     "the folder tree (children: segment, file_count, children).")
    add(get_connection_graph, "Documents related to a start document: the links the notes "
                              "write (both directions) and embedding similarity (BFS, "
                              "similarity calibrated to the model); edges chooses which.",
        schema=model_input_schema(GraphParams, "get_connection_graphArguments"))
    add(get_best_practice, "The best-practice document for a target, from the configured path templates.")
    add(rebuild_index, "Bring the index up to date with the files (one run at a time).",
        schema=model_input_schema(RebuildRequest, "rebuild_indexArguments"))


def with_uris(kb: "KnowledgeBase", response: SearchResponse) -> dict[str, Any]:
    """The search response (docs/search.md) with ``uri`` on every hit whose document is servable."""
    for hit in response.results:
        if servable(kb, hit.path):
            hit.uri = doc_uri(hit.path)
    return response.to_json()


def either_spelling(name: str, value: int | None, alias: str, alias_value: int | None
                    ) -> int | None:
    """One line number given under its name or its alias; both, with different values,
    is refused (which one was meant?)."""
    if alias_value is None:
        return value
    if value is not None and value != alias_value:
        raise InvalidArgument(f"{name} ({value}) and {alias} ({alias_value}) disagree; "
                              f"accepted: one of them ({alias} is another spelling of {name})")
    return alias_value


def window_in_path(path: str, line_start: int | None, line_end: int | None
                   ) -> tuple[str, int | None, int | None]:
    """``path:120`` / ``path:120-140`` as the line arguments, refused beside them."""
    bare, first, last = split_location(path)
    if first is None:
        return path, line_start, line_end
    if line_start is not None or line_end is not None:
        raise InvalidArgument(f"path {path!r} carries a line window and line_start/line_end "
                              "are given too; accepted: one of the two")
    return bare, first, last


def document_json(doc: Any, line_start: int | None = None, line_end: int | None = None,
                  max_lines: int | None = None) -> dict[str, Any]:
    """The get_document answer; with a line window, only those lines of the text.

    A source file's text is the file verbatim, so a code hit's
    ``line_start``/``line_end`` select exactly its chunk's lines.
    """
    row = doc.document
    out: dict[str, Any] = {
        "path": row.path, "uri": doc_uri(row.path), "title": row.title,
        "category": row.category, "topic": row.topic, "date": row.date,
        "tags": list(row.tags), "metadata": row.metadata, "size": row.size,
        "chunks": row.chunk_count, "text": doc.text, "truncated": doc.truncated,
    }
    if row.language is not None:
        out["language"] = row.language
    if line_start is not None or line_end is not None or max_lines is not None:
        window = line_window(doc.text, line_start, line_end, max_lines, path=repr(row.path))
        out["text"], out["line_start"], out["line_end"] = window.text, window.first, window.last
        out["lines"] = window.total
        with_line_aliases(out)
    if doc.truncated:
        out["note"] = (f"text truncated at {DOCUMENT_TEXT_CAP_BYTES} bytes of {row.size}; "
                       "use search to reach the rest")
    return out


def topics_json(kb: "KnowledgeBase") -> dict[str, Any]:
    """Categories and topics with counts, and the folder tree (docs/mcp.md, 'list_topics')."""
    docs = kb.list_documents()
    categories = Counter(d.category for d in docs if d.category)
    topics = Counter(d.topic for d in docs if d.topic)
    return {
        "documents": len(docs),
        "categories": [{"name": k, "documents": v} for k, v in sorted(categories.items())],
        "topics": [{"name": k, "documents": v} for k, v in sorted(topics.items())],
        "uncategorised": sum(1 for d in docs if not d.category),
        "children": folder_tree(d.path for d in docs),
    }


def folder_tree(paths: Iterable[str]) -> list[dict[str, Any]]:
    """The folders holding ``paths``, nested: ``{segment, file_count, children}`` per folder.

    ``file_count`` counts the documents anywhere below the folder, so a client
    can browse a large knowledge base one level at a time; a document at the
    top level is in no folder (only in the total). Siblings are sorted by name.
    """
    root: dict[str, Any] = {}
    for path in paths:
        node = root
        for segment in path.split("/")[:-1]:
            entry = node.setdefault(segment, {"count": 0, "below": {}})
            entry["count"] += 1
            node = entry["below"]

    def render(level: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"segment": name, "file_count": level[name]["count"],
                 "children": render(level[name]["below"])} for name in sorted(level)]

    return render(root)


def best_practice(kb: "KnowledgeBase", target: str, category: str | None) -> dict[str, Any]:
    """The first template, ``{target}`` filled in, that names a document get_document serves.

    Same rule as ``get_document``: only indexed documents that are members of
    the KB by rule (:class:`~groove.indexing.fileset.FileSet`) are returned;
    anything else (``.git/…``, ``node_modules/…``, a ``.grooveignore``d file,
    a file not indexed) counts as absent, so this tool reads nothing that
    indexing excludes. "Not found" does not list the probed paths
    (docs/mcp.md, "get_best_practice").
    """
    from groove.indexing.fileset import FileSet

    templates = list(kb.config.best_practice.path_templates or [])
    if not templates:
        raise GrooveError("get_best_practice is not configured: set [best_practice] "
                          "path_templates in groove.toml, e.g. [\"best-practices/{target}.md\"]")
    check_rel_path(target, what="target")
    files = FileSet.from_config(kb.config)
    for template in templates:
        rel = check_rel_path(template.replace("{target}", target), what="best-practice path")
        if not files.includes(rel):
            continue
        try:
            doc = read_document(kb, rel)
        except NotFound:
            continue
        text = markdown_section(doc.text, category, rel) if category else doc.text
        return {"path": rel, "uri": doc_uri(rel), "category": category, "text": text,
                "truncated": doc.truncated}
    # The probed paths are the operator's layout, not the caller's business (and the
    # system groove follows does not show them): say how many, and what to do instead.
    raise NotFound(f"no best-practice document for {target!r} ({len(templates)} configured "
                   "location(s) checked); use search to find related documents")


def markdown_section(text: str, heading: str, rel: str) -> str:
    """The ``## heading`` section (case-insensitive), up to the next ``#``/``##`` heading."""
    lines = text.splitlines(keepends=True)
    wanted = heading.strip().casefold()
    start = None
    found: list[str] = []
    for i, line in enumerate(lines):
        m = re.match(r"^(#{1,2})\s+(.*?)\s*#*\s*$", line)
        if m is None:
            continue
        if start is not None:
            break
        if len(m.group(1)) == 2:
            found.append(m.group(2))
            if m.group(2).casefold() == wanted:
                start = i
    if start is None:
        names = ", ".join(found) or "none"
        raise NotFound(f"{rel!r} has no '## {heading}' section; sections: {names}")
    end = next((j for j in range(start + 1, len(lines))
                if re.match(r"^#{1,2}\s", lines[j])), len(lines))
    return "".join(lines[start:end]).rstrip() + "\n"

"""The MCP server over several collections, from one process (docs/collections.md).

The tools are the single-folder server's, built once per collection by the
same :func:`~groove.server.tools.register_tools`, behind one dispatcher each:
every tool but ``search`` takes a ``collection`` argument (required when more
than one collection is served) and hands the call to that collection's own
tool, so a document is read, gated and capped exactly as a single-folder
server does. ``search`` searches every collection, or those its
``collection`` list names, and merges the answers (groove/collections.py);
each hit names its collection.

A document's URI names its collection: ``groove://COLLECTION/PATH`` (the path
percent-encoded except ``/``), readable with ``resources/read``. Answers of
the per-collection tools carry ``kb://doc/`` URIs; the dispatcher rewrites
them into this form, so a client never meets a URI that does not say which
collection it belongs to.
"""

from __future__ import annotations

import copy
import inspect
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resources.templates import ResourceSecurity
from mcp.server.mcpserver.tools.base import Tool
from mcp.types import Resource as MCPResource

from groove._version import __version__
from groove.documents.read import read_document, servable
from groove.kb import DOCUMENT_TEXT_CAP_LABEL
from groove.paths import DOC_URI_PREFIX
from groove.search.request import SearchRequest
from groove.server import prompts
from groove.server.mcp import GrooveMCPServer, _check_uri_param, _resource_call
from groove.server.notifications import ListChangedNotifier
from groove.server.state import ServerState
from groove.server.tools import (
    model_input_schema,
    model_signature,
    plain_schema,
    register_tools,
    tool_errors,
)

if TYPE_CHECKING:
    from groove.collections import Collections

log = logging.getLogger("groove.server")

URI_SCHEME = "groove://"

INSTRUCTIONS = (
    "groove searches several local knowledge bases (collections). Use `search` first (all "
    "collections, or those named in `collection`); every hit names its collection. Pass that "
    "`collection` to `get_document` (or `multi_get`, `links`, `list_topics`, ...) to read it. "
    "Cite the collection and path."
)


def collection_uri(collection: str, rel_path: str) -> str:
    """``groove://<collection>/<path>``, the path percent-encoded except ``/``."""
    return f"{URI_SCHEME}{collection}/{quote(rel_path, safe='/')}"


def named_uris(value: Any, collection: str) -> Any:
    """``value`` with every ``kb://doc/`` URI in it rewritten to name ``collection``."""
    if isinstance(value, dict):
        return {k: named_uris(v, collection) for k, v in value.items()}
    if isinstance(value, list):
        return [named_uris(v, collection) for v in value]
    if isinstance(value, str) and value.startswith(DOC_URI_PREFIX):
        return collection_uri(collection, unquote(value.removeprefix(DOC_URI_PREFIX)))
    return value


class CollectionsMCPServer(GrooveMCPServer):
    """The groove server whose resource list names each collection's documents by topic."""

    def __init__(self, state: ServerState, collections: Collections, **kwargs: Any) -> None:
        super().__init__(state, **kwargs)
        self.collections = collections

    async def read_resource(self, uri: Any, context: Any = None) -> Any:
        return await MCPServer.read_resource(self, uri, context)

    async def list_resources(self) -> list[MCPResource]:
        """One resource per collection: its overview (what list_topics returns, in Markdown)."""
        return [MCPResource(uri=f"{URI_SCHEME}{name}/", name=f"collection: {name}",
                            description=f"The documents of collection {name}, by folder",
                            mime_type="text/markdown") for name in self.collections.names]


def build_collections_server(collections: Collections, state: ServerState) -> MCPServer:
    """The MCP server over ``collections`` (``state`` is shared with the HTTP app)."""
    names = collections.names
    per_collection: dict[str, dict[str, Tool]] = {}
    for name, kb in collections:
        built: dict[str, Tool] = {}

        def add(fn: Any, description: str, schema: dict[str, Any] | None = None,
                into: dict[str, Tool] = built) -> None:
            tool = Tool.from_function(tool_errors(fn), name=fn.__name__, description=description)
            tool.parameters = schema if schema is not None else plain_schema(tool.parameters)
            into[tool.name] = tool

        register_tools(add, ServerState(kb, started_at=state.started_at))
        per_collection[name] = built

    tools = [_search_tool(collections)]
    for tool_name, template in per_collection[names[0]].items():
        if tool_name != "search":
            tools.append(_dispatcher(tool_name, template, per_collection, names))
    notifier = ListChangedNotifier()  # the watchers say when a collection's documents change
    state.notifier = notifier
    server = CollectionsMCPServer(state, collections, name="groove", version=__version__,
                                  instructions=INSTRUCTIONS, tools=tools,
                                  middleware=[notifier], subscriptions=notifier.bus)
    for fn in prompts.PROMPTS:
        server.prompt()(fn)
    _register_resources(server, collections)
    return server


def _search_tool(collections: Collections) -> Tool:
    async def search(**arguments: Any) -> dict[str, Any]:
        request = SearchRequest(**arguments)

        def answer() -> dict[str, Any]:
            response = collections.search(request)
            for hit in response.results:
                name = hit.collection or ""
                if servable(collections[name], hit.path):
                    hit.uri = collection_uri(name, hit.path)
            return response.to_json()

        return await anyio.to_thread.run_sync(answer)

    search.__signature__ = model_signature(SearchRequest)  # type: ignore[attr-defined]
    tool = Tool.from_function(
        tool_errors(search), name="search",
        description="Hybrid (full-text + embedding) search over every collection (or those "
                    "named in collection), merged into one ranking; each hit names its "
                    "collection. Cite the collection and path. low_confidence=true means 'no "
                    "collection probably answers this'.")
    tool.parameters = model_input_schema(SearchRequest, "searchArguments")
    return tool


def _dispatcher(tool_name: str, template: Tool, per_collection: dict[str, dict[str, Tool]],
                names: list[str]) -> Tool:
    """``tool_name`` with a ``collection`` argument, calling that collection's own tool."""
    only = names[0] if len(names) == 1 else None

    async def call(**arguments: Any) -> Any:
        name = arguments.pop("collection", None) or only
        if name is None:
            raise ToolError(f"{tool_name}: collection is required (this server serves "
                            f"several); accepted: {', '.join(names)}")
        if name not in per_collection:
            raise ToolError(f"{tool_name}: collection {name!r} is not served here; accepted: "
                            f"{', '.join(names)}")
        result = await per_collection[name][tool_name].fn(**arguments)
        return named_uris(result, name)

    signature = inspect.signature(template.fn)
    extra = inspect.Parameter("collection", inspect.Parameter.KEYWORD_ONLY, annotation=Any,
                              default=None)
    params = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in signature.parameters.values()]
    call.__signature__ = signature.replace(parameters=[*params, extra])  # type: ignore[attr-defined]
    call.__name__ = tool_name
    tool = Tool.from_function(call, name=tool_name,
                              description=f"{template.description} Takes the collection to use.")
    schema = copy.deepcopy(template.parameters)
    schema.setdefault("properties", {})["collection"] = {
        "type": "string", "enum": list(names),
        "description": "The collection the document belongs to, as named in search results "
                       f"(accepted: {', '.join(names)})."}
    if only is None:
        schema["required"] = [*schema.get("required", []), "collection"]
    tool.parameters = schema
    return tool


def _register_resources(server: MCPServer, collections: Collections) -> None:
    exempt = ResourceSecurity(exempt_params={"path"})

    @server.resource(URI_SCHEME + "{collection}/{+path}", name="document",
                     mime_type="text/markdown", security=exempt,
                     description="One indexed document of a collection; the path is "
                                 "percent-encoded except '/'.")
    async def read_doc(collection: str, path: str) -> str:
        _check_uri_param("path", path)
        kb = await _resource_call(_collection, collections, collection)
        if not path:
            return await _resource_call(_overview, kb, collection)
        doc = await _resource_call(read_document, kb, path)
        note = (f"\n\n[truncated at {DOCUMENT_TEXT_CAP_LABEL}; use the search tool to reach "
                "the rest]" if doc.truncated else "")
        return str(doc.text + note)


def _collection(collections: Collections, name: str) -> Any:
    return collections[name]


def _overview(kb: Any, name: str) -> str:
    """A collection's documents as a Markdown list of their URIs."""
    docs = [d for d in kb.list_documents() if servable(kb, d.path)]
    lines = [f"# Collection {name}", "", f"{len(docs)} document(s) in {kb.kb_path.name}", ""]
    lines += [f"- [{d.title or d.path}]({collection_uri(name, d.path)}) — `{d.path}`"
              for d in sorted(docs, key=lambda d: d.path)]
    return "\n".join(lines) + "\n"


#: Type of the tool factory, for callers that build the server themselves.
Builder = Callable[["Collections", ServerState], MCPServer]

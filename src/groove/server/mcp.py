"""The MCP server: eight tools, four prompts, ``kb://`` resources (docs/mcp.md).

``build_mcp_server`` is transport-neutral; ``server.stdio`` and
``server.http`` run the same object. ``resources/list`` is computed per call
from the index (topic groups, not every document), which is why the server
is a small :class:`MCPServer` subclass rather than a set of static resources.
"""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp.server.mcpserver.resources.templates import ResourceSecurity
from mcp.server.mcpserver.tools.base import Tool
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, TextContent
from mcp.types import Resource as MCPResource
from mcp_types import INVALID_PARAMS
from pydantic import ValidationError

from groove._version import __version__
from groove.errors import GrooveError, InvalidArgument, NotFound, PathRefused, did_you_mean
from groove.kb import DOCUMENT_TEXT_CAP_LABEL
from groove.paths import ROOT_TOPIC, check_rel_path, doc_uri, topic_prefixes, topic_uri
from groove.server import prompts
from groove.server.notifications import ListChangedNotifier
from groove.server.state import ServerState
from groove.server.tools import (
    plain_schema,
    read_document,
    register_tools,
    servable,
    tool_errors,
)

if TYPE_CHECKING:
    from groove.kb import KnowledgeBase
    from groove.models import DocumentRow

log = logging.getLogger("groove.server")

INSTRUCTIONS = (
    "groove searches a local knowledge base of notes. Use `search` first, `get_document` "
    "to read a hit in full (with its links and backlinks; `multi_get` for several), `links` "
    "for what a note links to or what links to it, `list_topics` to see what the knowledge "
    "base covers. Cite paths."
)

#: The SDK's own traversal/absolute/NUL checks, run by us so we can word the error.
_URI_SECURITY = ResourceSecurity()


class GrooveMCPServer(MCPServer):
    """MCPServer whose resource list is the KB's current topic groups, and whose
    prompts refuse bad arguments by name (the SDK answers "Internal server error")."""

    def __init__(self, state: ServerState, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.groove_state = state

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None,
                         context: Any = None) -> Any:
        known = {p.name: p for p in await self.list_prompts()}
        if name not in known:
            raise MCPError(INVALID_PARAMS, f"unknown prompt {name!r}{did_you_mean(name, known)}; "
                                           f"available: {', '.join(sorted(known))}")
        declared = {a.name: a for a in known[name].arguments or []}
        given = dict(arguments or {})
        accepted = ", ".join(declared) or "none"
        if unknown := sorted(set(given) - set(declared)):
            named = ", ".join(u + did_you_mean(u, declared) for u in unknown)
            raise MCPError(INVALID_PARAMS, f"prompt {name!r} does not take {named}; "
                                           f"accepted arguments: {accepted}")
        if missing := [a for a in declared.values() if a.required and not given.get(a.name)]:
            raise MCPError(INVALID_PARAMS, f"prompt {name!r} needs the argument "
                                           f"{', '.join(repr(a.name) for a in missing)} (accepted: {accepted})")
        try:
            return await super().get_prompt(name, given, context)
        except ValueError as exc:  # the SDK wraps a prompt's InvalidArgument in ValueErrors
            cause: BaseException | None = exc
            while cause is not None and not isinstance(cause, GrooveError):
                cause = cause.__cause__
            if cause is None:
                raise
            raise MCPError(INVALID_PARAMS, f"prompt {name!r}: {cause}") from None

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Any = None) -> Any:
        """Run a tool; a failure is :func:`error_result` (``isError`` plus ``{"error": …}``).

        Arguments the tool does not declare are refused by name before it
        runs (the SDK would drop them silently, and a misspelt ``limt`` would
        quietly search with the default).
        """
        try:
            tool = self._tool_manager.get_tool(name)
            if tool is None:
                names = sorted(t.name for t in self._tool_manager.list_tools())
                raise ToolError(f"unknown tool {name!r}{did_you_mean(name, names)}; "
                                f"available: {', '.join(names)}")
            declared = tool.parameters.get("properties", {})
            if unknown := sorted(set(arguments) - set(declared)):
                named = ", ".join(u + did_you_mean(u, declared) for u in unknown)
                raise ToolError(f"{name} does not take {named}; accepted arguments: "
                                f"{', '.join(declared) or 'none'}")
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError) and tool is not None:
                return error_result(argument_errors(name, exc.__cause__, tool.parameters))
            return error_result(_own_message(exc, name))

    async def read_resource(self, uri: Any, context: Any = None) -> Any:
        """Read a resource; a document's MIME type follows its format (:func:`document_mime`)."""
        contents = await super().read_resource(uri, context)
        text = str(uri)
        if not text.startswith(DOC_URI_PREFIX) or not isinstance(contents, list):
            return contents
        mime = document_mime(unquote(text.removeprefix(DOC_URI_PREFIX)))
        return [replace(item, mime_type=mime) for item in contents]

    async def list_resources(self) -> list[MCPResource]:
        groups = await anyio.to_thread.run_sync(_topic_groups, self.groove_state.kb)
        return [
            MCPResource(uri=topic_uri(prefix), name=f"topic: {prefix or '(top level)'}",
                        description=(f"{count} document(s) under {prefix}" if prefix else
                                     f"{count} document(s) at the top level of the knowledge base"),
                        mime_type="text/markdown")
            for prefix, count in sorted(groups.items())
        ]


DOC_URI_PREFIX = "kb://doc/"


def document_mime(rel_path: str) -> str:
    """``text/markdown`` for Markdown, ``text/plain`` for the text extracted from anything else.

    A PDF, Office or plain-text document is served as the plain text groove
    extracted from it, never in its own format (as GrooveSeek serves them).
    """
    from groove.parsers.markdown import MarkdownParser

    suffix = PurePosixPath(rel_path).suffix.lower().lstrip(".")
    return "text/markdown" if suffix in MarkdownParser.extensions else "text/plain"


def error_result(message: str) -> CallToolResult:
    """A failed tool call in GrooveSeek's envelope: ``isError`` and the body ``{"error": message}``.

    The body is both the structured content and its JSON text, so a client
    reading either finds the same object (docs/mcp.md, "Errors").
    """
    body = {"error": message}
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(body, ensure_ascii=False))],
                          structured_content=body, is_error=True)


#: pydantic's error types for a value of the right type outside its bounds.
_BOUND_ERRORS = frozenset({"greater_than", "greater_than_equal", "less_than",
                           "less_than_equal", "too_short", "too_long"})
_JSON_TYPES = {"string": "a string", "integer": "an integer", "number": "a number",
               "boolean": "true or false", "array": "a list", "object": "an object"}


def argument_errors(tool: str, error: ValidationError, schema: dict[str, Any]) -> str:
    """The SDK's type check of a tool's arguments, as one line naming each argument and its type."""
    props = schema.get("properties", {})
    problems = []
    for err in error.errors(include_url=False):
        field = ".".join(str(p) for p in err["loc"]) or "arguments"
        kind = props.get(str(err["loc"][0]) if err["loc"] else "", {}).get("type")
        wanted = _JSON_TYPES.get(kind, "a value")
        if err["type"] == "missing":
            problems.append(f"{field} is required ({wanted})")
        elif err["type"] in _BOUND_ERRORS:  # the right type, out of range: say the bound
            bound = str(err["msg"]).removeprefix("Input should be ")
            problems.append(f"{field} must be {wanted} {bound}, got {err.get('input')!r}")
        else:
            given = repr(err.get("input"))
            given = given if len(given) <= 60 else given[:57] + "..."
            problems.append(f"{field} must be {wanted}, got {type(err.get('input')).__name__} {given}")
    accepted = ", ".join(f"{k} ({v.get('type', 'any')})" for k, v in props.items()) or "none"
    return f"{tool}: {'; '.join(problems)}; accepted arguments: {accepted}"


def _own_message(exc: ToolError, tool: str) -> str:
    """groove's message without the SDK's ``Error executing tool <name>:`` prefix."""
    prefix = f"Error executing tool {tool}"
    message = str(exc)
    while message.startswith(prefix):
        message = message[len(prefix):].removeprefix(":").strip()
    return message or f"{tool} failed with an internal error (details are in the server log)"


def build_mcp_server(kb: KnowledgeBase, state: ServerState | None = None) -> MCPServer:
    """The groove MCP server for ``kb`` (pass ``state`` to share it with the HTTP app)."""
    state = state or ServerState(kb)
    tools: list[Tool] = []

    def add(fn: Any, description: str, schema: dict[str, Any] | None = None) -> None:
        tool = Tool.from_function(tool_errors(fn), name=fn.__name__, description=description)
        tool.parameters = schema if schema is not None else plain_schema(tool.parameters)
        tools.append(tool)

    register_tools(add, state)
    notifier = ListChangedNotifier()
    state.notifier = notifier
    server = GrooveMCPServer(state, name="groove", version=__version__,
                             instructions=INSTRUCTIONS, tools=tools,
                             middleware=[notifier], subscriptions=notifier.bus)
    for fn in prompts.PROMPTS:
        server.prompt()(fn)
    _register_resources(server, kb)
    return server


def _register_resources(server: MCPServer, kb: KnowledgeBase) -> None:
    exempt = ResourceSecurity(exempt_params={"path", "prefix"})

    @server.resource("kb://doc/{+path}", name="document", mime_type="text/markdown",
                     description="One indexed document; the path is percent-encoded except '/'.",
                     security=exempt)
    async def read_doc(path: str) -> str:
        _check_uri_param("path", path)
        doc = await _resource_call(read_document, kb, path)
        note = (f"\n\n[truncated at {DOCUMENT_TEXT_CAP_LABEL}; use the search tool to reach the rest]"
                if doc.truncated else "")
        return doc.text + note

    @server.resource(topic_uri(ROOT_TOPIC), name="topic: (top level)", mime_type="text/markdown",
                     description="The documents at the top level of the knowledge base.")
    async def read_root_topic() -> str:
        return await _resource_call(_topic_listing, kb, ROOT_TOPIC)

    @server.resource("kb://topic/{+prefix}", name="topic", mime_type="text/markdown",
                     description="The documents under a folder prefix, as a Markdown list of kb://doc URIs.",
                     security=exempt)
    async def read_topic(prefix: str) -> str:
        _check_uri_param("prefix", prefix)
        return await _resource_call(_topic_listing, kb, prefix)


def _check_uri_param(name: str, value: str) -> None:
    """Decoded URI parameter: the SDK's policy plus ours, with a message saying why."""
    if _URI_SECURITY.validate({name: value}) is not None:  # the caller's mistake: -32602
        raise MCPError(INVALID_PARAMS, f"{name} {value!r} is refused: it escapes kb_path "
                       "(no '..', no absolute path, no NUL)")


async def _resource_call(fn: Any, *args: Any) -> Any:
    try:
        return await anyio.to_thread.run_sync(fn, *args)
    except NotFound as exc:
        raise ResourceNotFoundError(str(exc)) from None
    except (PathRefused, InvalidArgument) as exc:  # the URI asked for what is refused: -32602
        raise MCPError(INVALID_PARAMS, str(exc)) from None
    except GrooveError as exc:
        raise ResourceError(str(exc)) from None
    except Exception:
        log.exception("reading a kb:// resource failed unexpectedly")
        raise ResourceError("internal error reading the resource (details in the server log)") from None


def _servable_docs(kb: KnowledgeBase) -> list[DocumentRow]:
    return [d for d in kb.list_documents() if servable(kb, d.path)]


def _topic_groups(kb: KnowledgeBase) -> dict[str, int]:
    groups: dict[str, int] = {}
    try:
        docs = _servable_docs(kb)
    except GrooveError as exc:
        log.warning("resources/list: %s", exc)
        return groups
    for doc in docs:
        for prefix in topic_prefixes(doc.path):
            groups[prefix] = groups.get(prefix, 0) + 1
    return groups


def _topic_listing(kb: KnowledgeBase, prefix: str) -> str:
    if prefix == ROOT_TOPIC:
        docs = [d for d in _servable_docs(kb) if "/" not in d.path]
        heading = "# Documents at the top level"
    else:
        prefix = check_rel_path(prefix, what="topic prefix")
        docs = [d for d in _servable_docs(kb)
                if d.path == prefix or d.path.startswith(prefix + "/")]
        heading = f"# Documents under {prefix}"
    if not docs:
        where = "at the top level" if prefix == ROOT_TOPIC else f"under {prefix!r}"
        raise NotFound(f"no indexed documents {where}; resources/list shows the topics")
    lines = [heading, ""]
    lines += [f"- [{d.title or d.path}]({doc_uri(d.path)}) — `{d.path}`"
              for d in sorted(docs, key=lambda d: d.path)]
    return "\n".join(lines) + "\n"

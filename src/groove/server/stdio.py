"""MCP over stdio: stdout carries MCP frames and nothing else.

The SDK's ``stdio_server`` points fd 1 at stderr while it serves (so stray
prints from any library miss the wire); groove's logging goes to stderr as
everywhere else.

What the SDK does with a line it cannot read is hand an exception to the
session, which logs it and answers nothing, so the client waits forever.
groove reads stdin itself and checks each line first (docs/troubleshooting.md):

* a request that carries an ``id`` but cannot be accepted (a lone surrogate
  in its text, an invalid shape, a batch, broken JSON whose ``id`` can still
  be read) is answered with a JSON-RPC error for that ``id``;
* a line that is not JSON and holds no readable ``id`` (garbage, ``[`` × 3000)
  is logged and answered with a parse error (``-32700``) whose ``id`` is
  ``null``, as JSON-RPC 2.0 says (the client may be waiting on it); the
  session goes on;
* a client that goes away (closes its end of our stdout) ends the server
  quietly, with one ``info`` line instead of a ``BrokenPipeError`` traceback;
* a request whose ``id`` is neither an integer nor a string (``{"a": 1}``,
  ``1e400``), which the SDK would take for a notification and never answer,
  is logged and dropped (there is no id to answer it with);
* at the end of stdin, the requests still running are answered before the
  server exits (the SDK would cancel them): the end of the input is passed on
  only once every request passed on has had its reply written
  (:class:`InFlight`), or a cancellation for it arrived, or
  :data:`DRAIN_S` seconds have passed.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
from collections.abc import AsyncIterator
from io import TextIOWrapper
from typing import TYPE_CHECKING, Any, cast

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

from groove._logging import configure_logging
from groove.server.state import ServerState

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectSendStream

    from groove.kb import KnowledgeBase

log = logging.getLogger("groove.server.stdio")

#: Longest excerpt of a malformed line written to the log.
LOG_EXCERPT = 120
#: The message of every parse-error reply.
NOT_JSON = "Parse error: the request is not valid JSON"
#: How long, after stdin ends, the requests in flight may take to be answered.
DRAIN_S = 120.0
_ID_IN_BROKEN_JSON = re.compile(r'^\s*\{.*?"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")')


def serve_stdio(kb: KnowledgeBase, *, state: ServerState | None = None) -> None:
    """Serve until the client closes stdin."""
    from groove.server.mcp import build_mcp_server

    configure_logging()
    state = state or ServerState(kb)
    if state.collections is not None:
        from groove.server.collections_mcp import build_collections_server

        server = build_collections_server(state.collections, state)
    else:
        server = build_mcp_server(kb, state)
    try:
        anyio.run(_serve, server)
    except BaseException as exc:
        if not _client_gone(exc):
            raise
        log.info("the client closed its end of stdout: exiting")
        _silence_stdout()


def _client_gone(exc: BaseException) -> bool:
    """True when every error in ``exc`` (a group, possibly nested) is a closed pipe, or the
    write stream a forwarder found broken because of one."""
    if isinstance(exc, BaseExceptionGroup):
        return all(_client_gone(inner) for inner in exc.exceptions)
    return isinstance(exc, BrokenPipeError | ConnectionResetError | anyio.BrokenResourceError
                      | anyio.ClosedResourceError)


def _silence_stdout() -> None:
    """Point fd 1 at the null device, so the interpreter's last flush cannot fail either."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.close(null)
    except OSError:
        pass


class InFlight:
    """The ids of requests passed to the SDK and not yet answered."""

    def __init__(self) -> None:
        self._ids: set[Any] = set()
        self._drained = anyio.Event()
        self._drained.set()

    def passed_on(self, line: str) -> None:
        """Note a line the SDK takes: a request's id, or a cancellation of one."""
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            return
        if not isinstance(message, dict):
            return
        if "id" in message and "method" in message:
            self._ids.add(_key(message["id"]))
            if self._drained.is_set():
                self._drained = anyio.Event()
        elif message.get("method") == "notifications/cancelled":
            params = message.get("params")
            if isinstance(params, dict) and "requestId" in params:
                self._answered(params["requestId"])

    def written(self, message: SessionMessage) -> None:
        """Note a message written to stdout: a response or an error ends its request."""
        root = getattr(message.message, "root", message.message)
        if isinstance(root, types.JSONRPCResponse | types.JSONRPCError) and root.id is not None:
            self._answered(root.id)

    def _answered(self, request_id: Any) -> None:
        self._ids.discard(_key(request_id))
        if not self._ids:
            self._drained.set()

    async def drained(self, seconds: float = DRAIN_S) -> None:
        """Return once every request passed on was answered (or ``seconds`` passed)."""
        with anyio.move_on_after(seconds) as waited:
            await self._drained.wait()
        if waited.cancelled_caught:
            log.warning("stdin ended; %d request(s) still unanswered after %.0f s: exiting",
                        len(self._ids), seconds)


def _key(request_id: Any) -> tuple[str, Any]:
    """A request id as a set key: ``1`` and ``"1"`` are different ids."""
    return (type(request_id).__name__, request_id)


async def _serve(server: Any) -> None:
    from mcp.server.stdio import stdio_server

    lowlevel = server._lowlevel_server  # what MCPServer.run("stdio") runs, minus the SDK's reader
    replies_in, replies_out = anyio.create_memory_object_stream[SessionMessage](16)
    inflight = InFlight()
    lines = cast("anyio.AsyncFile[str]", _wire_stdin_lines(replies_in, inflight))  # only iterated
    async with stdio_server(stdin=lines) as (read_stream, write_stream):
        async with anyio.create_task_group() as tg:
            sdk_out, to_wire = anyio.create_memory_object_stream[SessionMessage](16)
            tg.start_soon(_forward, replies_out, write_stream, None)
            tg.start_soon(_forward, to_wire, write_stream, inflight)
            # Both forwarders end by themselves once the SDK has closed its side (every
            # reply written) and the stdin reader has ended: nothing queued is dropped.
            await lowlevel.run(read_stream, sdk_out, lowlevel.create_initialization_options())
        await write_stream.aclose()  # the SDK's writer ends with it


async def _forward(messages: Any, write_stream: Any, inflight: InFlight | None) -> None:
    async with messages:
        async for message in messages:
            await write_stream.send(message)
            if inflight is not None:
                inflight.written(message)


def _wire_stdin() -> TextIOWrapper:
    """The client's stdin, privately; fd 0 then reads the null device (as the SDK does)."""
    if sys.platform == "win32":  # pragma: no cover - no fd juggling there
        return TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
    wire = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return TextIOWrapper(os.fdopen(wire, "rb"), encoding="utf-8", errors="replace")


async def _wire_stdin_lines(replies: MemoryObjectSendStream[SessionMessage],
                            inflight: InFlight) -> AsyncIterator[str]:
    """The lines the SDK may read; the others are answered or logged here. At the end of
    stdin, the requests passed on are answered before the SDK is told (see InFlight)."""
    async with replies:
        async for line in anyio.wrap_file(_wire_stdin()):
            replies_for_line = check_line(line)
            if replies_for_line is None:
                inflight.passed_on(line)
                yield line
            for reply in replies_for_line or ():
                await replies.send(SessionMessage(reply))
        await inflight.drained()


def check_line(line: str) -> list[types.JSONRPCError] | None:
    """None if the SDK can take ``line``; else the error replies owed (none: only logged)."""
    if not line.strip():
        return []
    try:
        parsed = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except Exception as exc:  # the SDK would drop the line with this error
        sdk_reason = _first_error(exc)
    else:
        if isinstance(parsed, types.JSONRPCNotification) and '"id"' in line:
            return _unanswerable_id(line)
        return None
    try:
        message = json.loads(line)
    except (ValueError, RecursionError) as exc:
        found = _ID_IN_BROKEN_JSON.match(line)
        if found is None:  # JSON-RPC 2.0: a parse error whose id cannot be read has id null
            _logged(line, f"not JSON ({type(exc).__name__}); answered with id null")
            return [types.JSONRPCError(jsonrpc="2.0", id=None, error=types.ErrorData(
                code=types.PARSE_ERROR, message=NOT_JSON))]
        return _errors(line, [json.loads(found.group(1))], types.PARSE_ERROR, NOT_JSON)
    if isinstance(message, list):
        ids = [m["id"] for m in message if isinstance(m, dict) and "id" in m]
        return _errors(line, ids, types.INVALID_REQUEST, "Invalid request: JSON-RPC batches "
                       "are not supported by MCP; send one request per line")
    if not isinstance(message, dict) or "id" not in message:
        return _logged(line, f"not an acceptable JSON-RPC message ({sdk_reason})")
    if _has_lone_surrogate(message):
        return _errors(line, [message["id"]], types.INVALID_PARAMS,
                       "Invalid params: the request holds a lone surrogate (U+D800..U+DFFF "
                       "without its pair), which is not valid Unicode text; send valid text")
    return _errors(line, [message["id"]], types.INVALID_REQUEST, f"Invalid request: {sdk_reason}")


def _unanswerable_id(line: str) -> list[types.JSONRPCError] | None:
    """A "notification" that holds an ``id`` the SDK could not read: logged, never answered."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or "id" not in message:
        return None
    return _logged(line, f"request id {_short(message['id'])} is neither an integer nor a "
                         "string, so it cannot be answered; send an integer or a string id")


def _short(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, float) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _errors(line: str, ids: list[Any], code: int, message: str) -> list[types.JSONRPCError]:
    """One error reply per usable id (an int, or a string that is valid text)."""
    usable = [i for i in ids if (isinstance(i, int) and not isinstance(i, bool))
              or (isinstance(i, str) and not _has_lone_surrogate(i))]
    _logged(line, f"{message} (answered ids: {usable or 'none usable'})")
    return [types.JSONRPCError(jsonrpc="2.0", id=i, error=types.ErrorData(code=code, message=message))
            for i in usable]


def _logged(line: str, reason: str) -> list[types.JSONRPCError]:
    excerpt = line.strip()[:LOG_EXCERPT].encode("utf-8", "backslashreplace").decode("utf-8")
    log.warning("malformed stdin line: %s: %s", reason, excerpt)
    return []


def _first_error(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            first = errors()[0]
            return f"{'.'.join(str(p) for p in first.get('loc', ()))}: {first.get('msg')}"[:200]
        except Exception:  # noqa: BLE001 - the type name is enough then
            pass
    return type(exc).__name__


def _has_lone_surrogate(value: Any) -> bool:
    """Iteratively: a hostile message may be deep."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(item, dict):
            stack += list(item.keys()) + list(item.values())
        elif isinstance(item, list):
            stack += item
    return False

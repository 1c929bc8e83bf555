"""What the stdio server reads and writes, made safe: each line from the client screened
before the SDK sees it (``screen_line``: an unreadable request is answered with a JSON-RPC
error instead of dropped, a line over ``MAX_LINE_BYTES`` never held whole), and each answer
made writable (``serializable``: a lone surrogate becomes U+FFFD). MCP over HTTP screens
request bodies with the same ``screen_line``."""

from __future__ import annotations

import dataclasses
import json
import logging
import re
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any, BinaryIO, Protocol

import anyio
import anyio.to_thread
import mcp.types as types
from mcp.shared.message import SessionMessage
from pydantic_core import PydanticSerializationError

from ..stores import MAX_DEPTH, nesting_depth
from ..text import has_lone_surrogate, without_lone_surrogates

logger = logging.getLogger(__name__)

MAX_MESSAGE_DEPTH = MAX_DEPTH
# The longest line read from the client. A request carries one memory (MEMORY_MAX_CHARS, 10,000
# characters by default) or a search; a line longer than this is refused, and never held whole.
MAX_LINE_BYTES = 4 * 1024 * 1024
_DISCARD_CHUNK = 1024 * 1024
_ID_WINDOW = 64 * 1024  # how much of each end of a long line is searched for the request id
_ID = re.compile(r'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")')


def _answerable(request_id: Any) -> bool:
    """Whether an answer may carry ``request_id``: an integer, or text UTF-8 can encode."""
    if isinstance(request_id, bool):
        return False
    if isinstance(request_id, int):
        return True
    return isinstance(request_id, str) and not has_lone_surrogate(request_id)


def _guess_id(text: str, *, last: bool = False) -> int | str | None:
    """The request id of a line that cannot be parsed, when one can be made out (the first
    ``"id"`` in ``text``, or with ``last`` the last one)."""
    found = list(_ID.finditer(text))
    if not found:
        return None
    try:
        value = json.loads(found[-1 if last else 0].group(1))
    except ValueError:
        return None
    return value if _answerable(value) else None


def _error(request_id: int | str | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(
        jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message)
    )


def invalid_request(message: str) -> types.JSONRPCError:
    """A JSON-RPC "Invalid Request" error (-32600) with id null."""
    return _error(None, types.INVALID_REQUEST, message)


class _NotJson(ValueError):
    """NaN, Infinity or -Infinity: Python's json reads them, JSON has no such numbers."""


def _no_constant(name: str) -> Any:
    raise _NotJson(f"{name} is not JSON")


def too_long(head: bytes, tail: bytes) -> types.JSONRPCError:
    """The answer to a line longer than ``MAX_LINE_BYTES``, of which ``head`` is the start and
    ``tail`` the end (the id is at one end or the other, outside the long text)."""
    request_id = _guess_id(head.decode("utf-8", errors="replace"))
    if request_id is None:
        request_id = _guess_id(tail.decode("utf-8", errors="replace"), last=True)
    return _error(
        request_id,
        types.INVALID_REQUEST,
        f"The request is too long (over {MAX_LINE_BYTES // (1024 * 1024)} MB on one line); "
        f"a memory is a short sentence.",
    )


def screen_line(line: str) -> tuple[bool, types.JSONRPCError | None]:
    """(pass it to the SDK?, the error to answer with instead) for one line from the client.

    The SDK drops a line it cannot read without answering, so the assistant waits forever;
    every such request is answered here with a JSON-RPC error, with its id when the id can be
    echoed and null when it cannot (a lone surrogate, a fraction, a list). Responses and
    notifications are never answered (JSON-RPC), only dropped when unreadable.
    """
    text = line.strip()
    if not text:
        return False, None
    depth = nesting_depth(text)
    if depth > MAX_MESSAGE_DEPTH:
        return False, _error(
            _guess_id(text),
            types.INVALID_REQUEST,
            f"The request is nested too deep ({depth} levels; at most {MAX_MESSAGE_DEPTH}).",
        )
    try:
        message = json.loads(text, parse_constant=_no_constant)  # NaN, Infinity: not JSON
    except ValueError as exc:
        if isinstance(exc, json.JSONDecodeError):
            reason = exc.msg
        elif isinstance(exc, _NotJson):
            reason = str(exc)
        else:
            reason = "a number is too long"
        return False, _error(_guess_id(text), types.PARSE_ERROR, f"Parse error: {reason}.")
    if not isinstance(message, dict):
        return False, _error(None, types.INVALID_REQUEST, "A request must be a JSON object.")
    problem = _request_problem(message)
    if problem is None:
        try:
            types.jsonrpc_message_adapter.validate_json(text, by_name=False)
        except Exception as exc:  # whatever the SDK would have dropped silently
            problem = (types.INVALID_REQUEST, f"Invalid request: {str(exc).splitlines()[0]}")
    if problem is None:
        return True, None
    if (
        "id" not in message
        or "method" not in message
        and ("result" in message or "error" in message)
    ):
        logger.warning("Dropped a message the server cannot read: %s", problem[1])
        return False, None
    request_id = message["id"]
    return False, _error(request_id if _answerable(request_id) else None, *problem)


def _request_problem(message: dict[str, Any]) -> tuple[int, str] | None:
    if "id" in message and not _answerable(message["id"]):
        return (
            types.INVALID_REQUEST,
            "Invalid request: the id must be an integer or a string of valid Unicode text "
            "(no lone surrogate such as \\ud800).",
        )
    if "params" in message and not isinstance(message["params"], dict):
        return types.INVALID_PARAMS, "Invalid params: params must be a JSON object."
    try:
        json.dumps(message, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return (
            types.INVALID_PARAMS,
            "Invalid params: the text has a lone surrogate (such as \\ud800), which is not "
            "valid Unicode. Send it again as valid UTF-8 text.",
        )
    return None


def serializable(item: SessionMessage) -> SessionMessage:
    """``item`` as the SDK's stdio writer can write it: a lone surrogate anywhere in the
    message (a stored memory's text, an id) would make ``model_dump_json`` raise and stop the
    server, so each becomes U+FFFD. Any other message is returned as it is."""
    try:
        item.message.model_dump_json(by_alias=True, exclude_unset=True)
    except PydanticSerializationError:
        data = item.message.model_dump(mode="json", by_alias=True, exclude_unset=True)
        message = types.jsonrpc_message_adapter.validate_python(
            without_lone_surrogates(data), by_name=False
        )
        logger.warning("Replaced lone surrogates (not valid Unicode) in an answer with U+FFFD")
        return dataclasses.replace(item, message=message)
    return item


class _Sender(Protocol):
    async def send(self, item: SessionMessage, /) -> None: ...
    async def aclose(self) -> None: ...


class SerializableReplies:
    """The SDK's write stream, with every message made writable first (``serializable``)."""

    def __init__(self, stream: _Sender) -> None:
        self._stream = stream

    async def send(self, item: SessionMessage, /) -> None:
        await self._stream.send(serializable(item))

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self) -> SerializableReplies:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()


async def read_lines(stream: BinaryIO) -> AsyncIterator[str | types.JSONRPCError]:
    """The client's lines as text (invalid UTF-8 as U+FFFD), split on newlines only; for a
    line over ``MAX_LINE_BYTES``, the error that answers it, its rest read and let go."""
    while True:
        line = await anyio.to_thread.run_sync(stream.readline, MAX_LINE_BYTES + 1)
        if not line:
            return
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            head, tail = line[:_ID_WINDOW], line[-_ID_WINDOW:]
            del line
            while not tail.endswith(b"\n"):
                rest = await anyio.to_thread.run_sync(stream.readline, _DISCARD_CHUNK)
                if not rest:
                    break
                tail = (tail + rest)[-_ID_WINDOW:]
            yield too_long(head, tail)
            continue
        yield line.decode("utf-8", errors="replace")


class ScreenedLines:
    """The client's lines for the SDK's stdio transport, hostile ones answered here instead."""

    def __init__(self, lines: AsyncIterable[str | types.JSONRPCError]) -> None:
        self._lines = lines
        self._replies: SerializableReplies | None = None
        self._ready = anyio.Event()

    def answer_with(self, replies: SerializableReplies) -> None:
        """The stream the server's own answers go out on (one writer, so lines never mix)."""
        self._replies = replies
        self._ready.set()

    async def __aiter__(self) -> AsyncIterator[str]:
        async for line in self._lines:
            forward, reply = (
                (False, line) if isinstance(line, types.JSONRPCError) else screen_line(line)
            )
            if forward:
                assert isinstance(line, str)
                yield line
            elif reply is not None:
                await self._ready.wait()
                assert self._replies is not None
                logger.warning("Answered a request the server cannot read: %s", reply.error.message)
                await self._replies.send(SessionMessage(reply))

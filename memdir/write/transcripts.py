"""Reading a finished session: a Claude Code transcript (JSON Lines) or a generic JSON list of
messages, as the messages `memdir extract` sends a model. Nothing here calls the API or writes.

A transcript's path comes from outside (the Stop hook's input): it is read only when it is a regular
file (memdir.core.inputs: a named pipe would hold the extraction forever, `/dev/zero` fill memory),
a line at a time, and only its newest MAX_TRANSCRIPT_BYTES.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from memdir.core.errors import MemdirError
from memdir.core.inputs import InputTooLarge, NotRegularInput, open_regular, parse_json, read_regular

MAX_MESSAGE_CHARS = 4_000
# A long session's transcript is tens of megabytes, most of it tool output; a run sends the model
# at most the newest 120,000 characters of conversation, so a longer file is read from this far
# before its end (the messages before were extracted by earlier runs, or are stale by now).
MAX_TRANSCRIPT_BYTES = 64 * 1024 * 1024
MAX_LINE_BYTES = 16 * 1024 * 1024  # one message; a longer line is skipped as broken, never held whole
MAX_MESSAGES_BYTES = 64 * 1024 * 1024  # a messages file (`--messages`), read whole
WRITE_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")


class ExtractError(MemdirError):
    """A run that could not be done: bad input, or the API failed. Nothing was written."""


@dataclass(frozen=True)
class Message:
    role: str  # user | assistant
    text: str  # as shown to the model
    uuid: str | None = None
    timestamp: dt.datetime | None = None
    turn: bool = False  # typed by the user (not a tool result): the throttle counts these
    written: tuple[str, ...] = ()  # file paths of Write/Edit tool calls in it


@dataclass
class Session:
    """The messages of one session, as read from a transcript or a messages file."""

    key: str  # the cursor's key: the session id, or `messages:<path>`
    path: Path
    messages: list[Message]
    broken_lines: int = 0
    cwd: str | None = None
    skipped_bytes: int = 0  # the start of a transcript over MAX_TRANSCRIPT_BYTES, not read


def _timestamp(value: Any) -> dt.datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def clip(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + " […]"


def _render_content(content: Any) -> tuple[str, bool, tuple[str, ...]]:
    """(text for the model, whether a person typed it, files written by tool calls)."""
    if isinstance(content, str):
        return content, True, ()
    if not isinstance(content, list):
        return "", False, ()
    parts: list[str] = []
    typed = False
    written: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
            typed = True
        elif kind == "tool_use":
            name = str(block.get("name", "tool"))
            raw_input = block.get("input")
            data: dict[str, Any] = raw_input if isinstance(raw_input, dict) else {}
            target = data.get("file_path") or data.get("notebook_path") or data.get("command") or data.get("url")
            parts.append(f"[tool call {name}{': ' + clip(str(target), 200) if target else ''}]")
            if name in WRITE_TOOLS and isinstance(data.get("file_path") or data.get("notebook_path"), str):
                written.append(data.get("file_path") or data["notebook_path"])
        elif kind == "tool_result":
            result = block.get("content")
            if isinstance(result, list):
                result = " ".join(str(b.get("text", "")) for b in result if isinstance(b, dict))
            parts.append(f"[tool output (source: tool): {clip(str(result or ''), 1000)}]")
    return "\n".join(p for p in parts if p.strip()), typed, tuple(written)


def read_transcript(path: Path) -> Session:
    """A Claude Code transcript (JSON Lines), its newest MAX_TRANSCRIPT_BYTES when it is longer.
    Broken lines (not JSON, nested too deep, over MAX_LINE_BYTES) are counted and skipped, not fatal."""
    handle = _open_input(path, "transcript")
    messages: list[Message] = []
    broken = 0
    session_id: str | None = None
    cwd: str | None = None
    with handle:
        skipped = _skip_to_tail(handle, MAX_TRANSCRIPT_BYTES)
        for raw in _lines(handle, MAX_TRANSCRIPT_BYTES, MAX_LINE_BYTES):
            if raw is None:
                broken += 1
                continue
            line = raw.decode("utf-8", errors="replace")
            if not line.strip():
                continue
            try:
                entry = parse_json(line)
            except ValueError:
                broken += 1
                continue
            if not isinstance(entry, dict):
                broken += 1
                continue
            session_id = session_id or (entry.get("sessionId") if isinstance(entry.get("sessionId"), str) else None)
            cwd = cwd or (entry.get("cwd") if isinstance(entry.get("cwd"), str) else None)
            if entry.get("type") not in ("user", "assistant") or entry.get("isMeta"):
                continue
            message = entry.get("message")
            if not isinstance(message, dict):
                broken += 1
                continue
            role = str(message.get("role") if message.get("role") in ("user", "assistant") else entry["type"])
            body, typed, written = _render_content(message.get("content"))
            messages.append(
                Message(
                    role=role,
                    text=body,
                    uuid=entry.get("uuid") if isinstance(entry.get("uuid"), str) else None,
                    timestamp=_timestamp(entry.get("timestamp")),
                    turn=role == "user" and typed,
                    written=written,
                )
            )
    return Session(session_id or f"transcript:{path.resolve()}", path, messages, broken, cwd, skipped)


def _open_input(path: Path, what: str) -> BinaryIO:
    """`path` open to read, a regular file; ExtractError, naming `what`, for anything else."""
    try:
        return open_regular(path)[0]
    except FileNotFoundError:
        raise ExtractError(f"{what} {path} does not exist") from None
    except NotRegularInput as exc:
        raise ExtractError(f"{what} {path} is {exc.strerror}; memdir reads only regular files") from None
    except OSError as exc:
        raise ExtractError(f"{what} {path} cannot be read: {exc.strerror or exc}") from None


def _skip_to_tail(handle: BinaryIO, limit: int) -> int:
    """Move to the first whole line of the last `limit` bytes of a longer file; how many bytes lie
    before it."""
    size = handle.seek(0, 2)
    if size <= limit:
        handle.seek(0)
        return 0
    handle.seek(size - limit - 1)
    if handle.read(1) != b"\n":
        _rest_of_line(handle)
    return handle.tell()


def _rest_of_line(handle: BinaryIO) -> int:
    """Read past the end of the current line, a chunk at a time; how many bytes that took."""
    taken = 0
    while True:
        chunk = handle.readline(1024 * 1024)
        taken += len(chunk)
        if not chunk or chunk.endswith(b"\n"):
            return taken


def _lines(handle: BinaryIO, limit: int, line_limit: int) -> Iterator[bytes | None]:
    """The lines from here on (at "\n" only: JSON text may hold U+2028 and other line separators),
    `limit` bytes at most in all; None for a line over `line_limit` bytes, which is not kept."""
    used = 0
    while used < limit:
        line = handle.readline(line_limit + 1)
        if not line:
            return
        used += len(line)
        if len(line) > line_limit and not line.endswith(b"\n"):
            used += _rest_of_line(handle)
            yield None
            continue
        yield line


def read_messages(path: Path) -> Session:
    """A generic harness's messages: a JSON list of `{"role", "content"}` (content as in the API)."""
    try:
        data = parse_json(read_regular(path, MAX_MESSAGES_BYTES).decode("utf-8", errors="replace"))
    except FileNotFoundError:
        raise ExtractError(f"messages file {path} does not exist") from None
    except NotRegularInput as exc:
        raise ExtractError(f"messages file {path} is {exc.strerror}; memdir reads only regular files") from None
    except InputTooLarge as exc:
        raise ExtractError(f"messages file {path} is {exc.strerror}") from None
    except OSError as exc:
        raise ExtractError(f"messages file {path} cannot be read: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ExtractError(f"messages file {path} is not JSON: {exc}") from None
    if not isinstance(data, list):
        raise ExtractError(f"messages file {path} must hold a JSON list of {{role, content}} objects")
    messages: list[Message] = []
    broken = 0
    for item in data:
        if not isinstance(item, dict) or item.get("role") not in ("user", "assistant"):
            broken += 1
            continue
        body, typed, written = _render_content(item.get("content"))
        messages.append(
            Message(item["role"], body, timestamp=_timestamp(item.get("timestamp")),
                    turn=item["role"] == "user" and typed, written=written)
        )  # fmt: skip
    return Session(f"messages:{path.resolve()}", path, messages, broken)

"""Reading a finished session: a Claude Code transcript (JSON Lines) or a generic JSON list of
messages, as the messages `memdir extract` sends a model. Nothing here calls the API or writes.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memdir.core.errors import MemdirError

MAX_MESSAGE_CHARS = 4_000
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
    """A Claude Code transcript (JSON Lines). Broken lines are counted and skipped, not fatal."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ExtractError(f"transcript {path} does not exist") from None
    except OSError as exc:
        raise ExtractError(f"transcript {path} cannot be read: {exc.strerror or exc}") from None
    text = raw.decode("utf-8", errors="replace")
    messages: list[Message] = []
    broken = 0
    session_id: str | None = None
    cwd: str | None = None
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
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
    return Session(session_id or f"transcript:{path.resolve()}", path, messages, broken, cwd)


def read_messages(path: Path) -> Session:
    """A generic harness's messages: a JSON list of `{"role", "content"}` (content as in the API)."""
    try:
        data = json.loads(path.read_bytes().decode("utf-8", errors="replace"))
    except FileNotFoundError:
        raise ExtractError(f"messages file {path} does not exist") from None
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

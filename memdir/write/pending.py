"""The sessions the Stop hook staged for extraction: `.memdir/pending-extractions.jsonl`, one line a
session (`session_id`, `transcript_path`, `cwd`, `recorded_at`). The hook adds a session once; an
extraction that is done with a transcript takes its line away (`memdir extract --pending` runs them
all). At most PENDING_MAX lines: past that, sessions whose transcript is gone go first, then the oldest.

Every change rewrites the file under the log lock (store.log_lock), so two hooks stopping at once and
an extraction clearing lines never lose one another's lines.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memdir.core.store import ensure_state_dir, log_lock, read_jsonl, state_dir, write_state_file

PENDING_EXTRACTIONS = "pending-extractions.jsonl"
PENDING_MAX = 200  # sessions: months of work for one person, a few hundred kilobytes at most


def pending_path(root: Path) -> Path:
    return state_dir(root) / PENDING_EXTRACTIONS


def read_pending(path: Path) -> list[dict[str, Any]]:
    """The staged sessions, oldest first; lines that do not parse (a torn disk) are skipped."""
    return read_jsonl(path)


def transcript_of(entry: Mapping[str, Any]) -> Path | None:
    """The transcript a staged line names, absolute (a relative one against its `cwd`); None when it
    names none."""
    value = entry.get("transcript_path")
    if not isinstance(value, str) or not value or "\0" in value:
        return None
    path = Path(value).expanduser()
    cwd = entry.get("cwd")
    return path if path.is_absolute() else Path(cwd if isinstance(cwd, str) else ".") / path


def readable(path: Path) -> bool:
    """Whether a transcript is still there to extract from: a regular file this process may read."""
    try:
        return path.is_file() and os.access(path, os.R_OK)
    except OSError:
        return False


@dataclass(frozen=True)
class Staged:
    """What adding a session did."""

    added: bool  # False: the session was already staged
    first: bool  # it is the only session staged now: nothing was waiting before it
    dropped: int = 0  # sessions let go to stay within PENDING_MAX


def add_pending(root: Path, entry: Mapping[str, Any]) -> Staged:
    """Stage a session, unless it is staged already (same `session_id` and `transcript_path`)."""
    path = ensure_state_dir(root) / PENDING_EXTRACTIONS
    key = (entry.get("session_id"), entry.get("transcript_path"))
    with log_lock(path):
        entries = read_pending(path)
        if any((e.get("session_id"), e.get("transcript_path")) == key for e in entries):
            return Staged(added=False, first=False)
        kept = [*entries, dict(entry)]
        if len(kept) > PENDING_MAX:
            alive = [e for e in kept[:-1] if (t := transcript_of(e)) is not None and readable(t)]
            kept = [*alive[-(PENDING_MAX - 1) :], dict(entry)]
        _write(path, kept)
    return Staged(added=True, first=not entries, dropped=len(entries) + 1 - len(kept))


def remove_pending(root: Path, done: Callable[[Mapping[str, Any]], bool]) -> int:
    """Take away the staged sessions `done` says are done; how many went."""
    try:
        path = pending_path(root)
    except OSError:
        return 0
    if not path.exists():
        return 0
    with log_lock(path):
        entries = read_pending(path)
        kept = [e for e in entries if not done(e)]
        if len(kept) != len(entries):
            _write(path, kept)
    return len(entries) - len(kept)


def _write(path: Path, entries: list[dict[str, Any]]) -> None:
    text = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries)
    write_state_file(path, text, durable=True)

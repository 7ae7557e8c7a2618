"""Remembered rejections: what `memdir review reject` threw out, so the write path does not bring it back.

`.memdir/rejected.jsonl`, one JSON object a line, appended whole or not at all (`append_lines`),
and rotated as the logs are (`append_lines(rotate=True)`: past 10 MiB, some 5,000 rejections, it becomes
`rejected.jsonl.1`, which is still read, so the last one or two generations are remembered):
`at`, `file`, `name`, `type`, `digest` (what the memory said: `said_fingerprint`), and its
`description` and `body` for the near-duplicate check, left out when it was rejected with `--purge`
(then only the digest is kept, and only the same memory again matches). The screen
(memdir.core.gauntlet) reads them; nothing here decides what a match means.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from memdir.core.model import Memory, name_key
from memdir.core.store import STATE_DIR, append_lines, ensure_state_dir, read_generations, state_dir

REJECTED_FILE = "rejected.jsonl"


@dataclass(frozen=True)
class Rejection:
    """One memory a person rejected in review."""

    file: str
    name: str
    type: str | None
    digest: str
    at: str = ""
    description: str | None = None  # None: rejected with --purge, its text not kept
    body: str | None = None


def said_fingerprint(kind: str | None, name: str, description: str, body: str) -> str:
    """A digest of what a memory says, blind to case, spacing and the name's punctuation: the same
    memory written again (by the same extraction, in another session) has the same one."""

    def norm(text: str) -> str:
        return " ".join(text.split()).casefold()

    said = "\n".join([kind or "", name_key(name), norm(description), norm(body)])
    return hashlib.sha256(said.encode("utf-8")).hexdigest()[:24]


def rejection_of(memory: Memory, *, purged: bool) -> Rejection:
    """The record of rejecting `memory`; without its texts when it is `purged`."""
    return Rejection(
        file=memory.path,
        name=memory.name,
        type=memory.raw_type,
        digest=said_fingerprint(memory.raw_type, memory.name, memory.description, memory.body),
        description=None if purged else memory.description,
        body=None if purged else memory.body,
    )


def remember(root: Path, rejections: Iterable[Rejection], now: dt.datetime | None = None) -> None:
    """Append `rejections` to `.memdir/rejected.jsonl`, all in one write or none (OSError, the file as
    it was). Their texts pass the outward boundary, so a secret in them is masked."""
    from memdir.text.outward import dumps

    stamp = (now or dt.datetime.now().astimezone()).isoformat(timespec="seconds")
    lines = []
    for r in rejections:
        entry = {"at": stamp, "file": r.file, "name": r.name, "type": r.type, "digest": r.digest}
        if r.description is not None and r.body is not None:
            entry |= {"description": r.description, "body": r.body}
        lines.append(dumps(entry, indent=None) + "\n")
    if lines:
        path, data = ensure_state_dir(root) / REJECTED_FILE, "".join(lines).encode("utf-8")
        append_lines(path, data, durable=True, rotate=True)


def remembered(root: Path) -> list[Rejection]:
    """The rejections of the folder at `root`, oldest first; a torn or foreign line is skipped, and
    no `.memdir/` (or something else than a file in the rejections' place) reads as none."""
    folder = root / STATE_DIR
    if not folder.is_dir() or folder.is_symlink():
        return []
    found: list[Rejection] = []
    path = state_dir(root) / REJECTED_FILE
    for entry in read_generations(path):
        file, name, digest = entry.get("file"), entry.get("name"), entry.get("digest")
        if not (isinstance(file, str) and isinstance(name, str) and isinstance(digest, str)):
            continue
        kind, description, body = entry.get("type"), entry.get("description"), entry.get("body")
        texts = isinstance(description, str) and isinstance(body, str)
        found.append(
            Rejection(
                file=file,
                name=name,
                type=kind if isinstance(kind, str) else None,
                digest=digest,
                at=str(entry.get("at") or ""),
                description=description if texts else None,
                body=body if texts else None,
            )
        )
    return found

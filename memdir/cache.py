"""The parse cache: each memory file's parsed form, kept in `.memdir/` between runs.

`memdir index` runs at every session start, and on a large folder most of its time goes into
reading and parsing files that have not changed since the last run. The cache keeps, per file, the
text and what its frontmatter parsed to, keyed by the file's size, modification time, change time
and inode; a file whose key differs is read and parsed again.

The cache is only ever a shortcut, never a source of truth. It is safe when it is:
- stale: a changed key means a re-read. A file changed twice within the file system's timestamp
  granularity, keeping its size, could keep its key, so a file modified in the two seconds before
  a scan is not cached (git's "racy clean" problem, solved the same way);
- corrupt, truncated, written by another memdir version or in another format: it is ignored whole
  and rewritten;
- unwritable (a read-only checkout, a full disk): the run goes on without it.

It is JSON, not pickle: a cache committed to a repository by someone else must not be able to run
code when a hook loads it.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from copy import copy
from pathlib import Path
from typing import Any

from memdir.model import Document

CACHE_FILE = "parse-cache"
_MAGIC = b"memdir parse cache 1"  # bump the number when an entry's layout or what parsing produces changes
RACY_SECONDS = 2.0

Key = tuple[int, int, int, int]  # size, mtime_ns, ctime_ns, inode


def file_key(status: os.stat_result) -> Key:
    return (status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino)


class ParseCache:
    """Parsed documents by folder-relative path. `get` and `put` during a scan, `save` after it.

    On disk: a magic line, one line of JSON with each file's key, parsed frontmatter and the span
    of its text, then the texts of all files back to back. Keeping the texts out of the JSON
    halves the time to load the cache, which is most of a warm `memdir index` on a large folder.
    """

    def __init__(self, path: Path | None, entries: dict[str, list[Any]], texts: str, version: str) -> None:
        self.path = path  # None: a cache that neither loads nor saves
        self._entries = entries  # rel -> [key, data, offsets, tags, text start, text end]
        self._texts = texts
        self._new_texts: dict[str, str] = {}
        self._version = version
        self._seen: set[str] = set()
        self._changed = False
        self._racy_after = time.time_ns() - int(RACY_SECONDS * 1e9)

    @classmethod
    def disabled(cls) -> ParseCache:
        return cls(None, {}, "", "")

    @classmethod
    def load(cls, state_dir: Path) -> ParseCache:
        """The cache in `state_dir`, or an empty one when it is missing, unreadable or not ours."""
        from memdir import __version__

        path = state_dir / CACHE_FILE
        try:
            magic, header, texts = path.read_bytes().split(b"\n", 2)
            raw = json.loads(header)
            if magic != _MAGIC or raw.get("memdir") != __version__ or not isinstance(raw.get("files"), dict):
                raise ValueError("not this version's cache")
            return cls(path, raw["files"], texts.decode("utf-8"), __version__)
        except (OSError, ValueError, AttributeError):
            return cls(path, {}, "", __version__)

    def get(self, rel: str, key: Key) -> Document | None:
        """The document parsed from `rel` last time, if the file still has the same key."""
        if self.path is None:
            return None
        self._seen.add(rel)
        entry = self._entries.get(rel)
        if not isinstance(entry, list) or len(entry) != 6 or entry[0] != list(key):
            return None
        _, data, offsets, tags, start, end = entry
        try:
            return Document(self._texts[start:end], _decode(data, tags), True, *offsets)
        except (TypeError, ValueError, LookupError):
            return None

    def put(self, rel: str, key: Key, doc: Document) -> None:
        """Remember `doc` for `rel`, unless the file is too new to trust its key or its data
        has a value JSON cannot carry back exactly."""
        if self.path is None or key[1] > self._racy_after:
            return
        tags: list[Tag] = []
        try:
            data = _encode(doc.data, [], tags)
        except _Uncacheable:
            return
        offsets = [doc.fm_start, doc.fm_end, doc.body_start, doc.body_line]
        self._entries[rel] = [list(key), data, offsets, tags, 0, 0]
        self._new_texts[rel] = doc.text
        self._seen.add(rel)
        self._changed = True

    def save(self) -> None:
        """Write the cache if anything changed, dropping files the scan did not see."""
        if self.path is None:
            return
        gone = self._entries.keys() - self._seen
        if not self._changed and not gone:
            return
        texts: list[str] = []
        at = 0
        for rel in list(self._entries):
            entry = self._entries[rel]
            if rel in gone or not isinstance(entry, list) or len(entry) != 6:
                del self._entries[rel]
                continue
            text = self._new_texts.get(rel)
            if text is None:
                text = self._texts[entry[4] : entry[5]]
            texts.append(text)
            entry[4], entry[5] = at, at + len(text)
            at += len(text)
        header = json.dumps(
            {"memdir": self._version, "files": self._entries}, ensure_ascii=False, separators=(",", ":")
        )
        from memdir.store import atomic_write, ensure_state_dir

        try:
            ensure_state_dir(self.path.parent.parent)
            atomic_write(self.path, f"{_MAGIC.decode()}\n{header}\n{''.join(texts)}", durable=False)
        except OSError:
            pass  # a read-only folder or a full disk: the next run parses again, nothing is lost
        self._texts, self._new_texts, self._changed = "".join(texts), {}, False


# YAML gives dates and datetimes, which JSON has no type for: they are stored as ISO strings, and
# the entry lists where they are ([key, ..., "date" | "datetime"]) so that loading converts only
# those. A non-string key or a value of any other type makes the document uncacheable.
Tag = list[Any]


class _Uncacheable(Exception):
    pass


def _encode(value: Any, where: list[Any], tags: list[Tag]) -> Any:
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, dt.date):
        tags.append([*where, "datetime" if isinstance(value, dt.datetime) else "date"])
        return value.isoformat()
    if isinstance(value, list):
        return [_encode(v, [*where, i], tags) for i, v in enumerate(value)]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: _encode(v, [*where, k], tags) for k, v in value.items()}
    raise _Uncacheable


def _decode(data: Any, tags: list[Tag]) -> Any:
    """`data` with the tagged strings turned back into dates; containers on a tag's path are
    copied, so the cache's own entry stays JSON for the next save."""
    if not tags:
        return data
    data = copy(data)
    for tag in tags:
        *parents, last, kind = tag
        holder = data
        for step in parents:
            holder[step] = copy(holder[step])
            holder = holder[step]
        parse = dt.datetime.fromisoformat if kind == "datetime" else dt.date.fromisoformat
        holder[last] = parse(holder[last])
    return data

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

It is JSON and text, not pickle: a cache committed to a repository by someone else must not be
able to run code when a hook loads it.

Each index row carries the memory's index line as memdir renders it, secrets masked. Which
secrets are masked, and how a line is drawn, is code (core/index.py, text/outward.py,
text/sensitive.py); the cache records a checksum of those files and is ignored whole when it
differs, so a new secret pattern reaches every index line at once, not only the files changed since.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import time
import zlib
from copy import copy
from pathlib import Path
from typing import Any, BinaryIO

from memdir.core.index import IndexRow
from memdir.core.model import Document, LenientRead, Memory

CACHE_FILE = "parse-cache"
_MAGIC = b"memdir parse cache 4"  # bump the number when an entry's layout or what parsing produces changes
RACY_SECONDS = 2.0
# The code that draws and masks an index line, by path in the package.
_LINE_SOURCES = ("core/index.py", "text/outward.py", "text/sensitive.py")

Key = tuple[int, int, int, int]  # size, mtime_ns, ctime_ns, inode
_ROW_ONLY = (b"", b"")  # a file whose frontmatter JSON cannot carry: its index row is cached, not its data


def file_key(status: os.stat_result) -> Key:
    return (status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino)


class ParseCache:
    """Parsed memories by folder-relative path. `row`, `get` and `put` during a scan, `save` after.

    On disk: a magic line; one line of JSON, the table of contents, with each file's key, its
    index row (what `memdir index` needs: type, title, description, importance, dates, status)
    and where its parsed frontmatter and its text sit in the blob; then the blob. A warm `memdir
    index` reads only the table of contents; `save` copies the blob slices of unchanged files
    without decoding them, so one changed file costs one re-encoded entry, not ten thousand.
    """

    def __init__(
        self, path: Path | None, toc: dict[str, list[Any]], version: str, handle: BinaryIO | None = None
    ) -> None:
        self.path = path  # None: a cache that neither loads nor saves
        self._toc = toc  # rel -> [key, row, data start, data end, text start, text end]
        self._handle = handle  # the open cache file, positioned at the blob (read on first need)
        self._blob_read: bytes | None = None if handle else b""
        self._new: dict[str, tuple[bytes, bytes]] = {}  # rel -> (encoded data, encoded text), or _ROW_ONLY
        self._version = version
        self._made: dict[str, IndexRow] = {}  # rel -> the row `put` made, for the scan that loaded the file
        self._seen: set[str] = set()
        self._changed = False
        self._racy_after = time.time_ns() - int(RACY_SECONDS * 1e9)

    @classmethod
    def disabled(cls) -> ParseCache:
        return cls(None, {}, "")

    @classmethod
    def load(cls, state_dir: Path) -> ParseCache:
        """The cache in `state_dir`, or an empty one when it is missing, unreadable, not ours or not
        a regular file (a named pipe there would block the read, a symlink could be anyone's; `save`
        replaces either). None at all when `state_dir` is a symlink or not a folder."""
        from memdir.core.errors import StateRefused
        from memdir.core.store import checked_folder, open_state_file

        try:
            checked_folder(state_dir)
        except StateRefused:  # a symlinked `.memdir/` could feed forged parse results: no cache at all
            return cls.disabled()
        path = state_dir / CACHE_FILE
        handle = None
        try:
            handle = open_state_file(path)  # kept open until the blob is read or the cache saved
            magic, header = handle.readline(), handle.readline()
            raw = json.loads(header)
            version = code_version()
            if magic != _MAGIC + b"\n" or raw.get("memdir") != version or not isinstance(raw.get("files"), dict):
                raise ValueError("not this version's cache")
            return cls(path, raw["files"], version, handle)
        except (OSError, ValueError, AttributeError):
            if handle is not None:
                handle.close()
            return cls(path, {}, code_version())

    @property
    def _blob(self) -> bytes:
        """The texts and frontmatter of the cached files. Read from the file opened by `load`,
        which stays the same file even if another process has replaced the cache since."""
        if self._blob_read is None:
            assert self._handle is not None
            try:
                self._blob_read = self._handle.read()
            except OSError:
                self._blob_read, self._toc = b"", {}
            self._close()
        return self._blob_read

    def _close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None
        if self._blob_read is None:  # closed unread: a later `get` finds nothing and parses afresh
            self._blob_read = b""

    def _entry(self, rel: str, key: Key) -> list[Any] | None:
        if self.path is None:
            return None
        self._seen.add(rel)
        entry = self._toc.get(rel)
        if not isinstance(entry, list) or len(entry) != 6 or entry[0] != list(key):
            return None
        return entry

    def has(self, rel: str) -> bool:
        """Whether `rel` has an entry, whatever its key: without one, a scan need not stat the file
        before it opens it (the open file's stat is the key)."""
        return rel in self._toc

    def row(self, rel: str, key: Key) -> IndexRow | None:
        """The index row of `rel` from last time, if the file still has the same key."""
        entry = self._entry(rel, key)
        if entry is None:
            return None
        try:
            return IndexRow.from_json(rel, entry[1])
        except (TypeError, ValueError, LookupError):
            return None

    def made_row(self, rel: str) -> IndexRow | None:
        """The row `put` made for `rel` in this run, if it made one: what `row` will return next time."""
        return self._made.get(rel)

    def get(self, rel: str, key: Key) -> Document | None:
        """The document parsed from `rel` last time, if the file still has the same key."""
        entry = self._entry(rel, key)
        if entry is None or not isinstance(entry[2], int) or entry[2] < 0:
            return None
        try:
            data, offsets, tags, lenient = json.loads(self._blob[entry[2] : entry[3]])
            raw = self._blob[entry[4] : entry[5]]
            if len(raw) != key[0]:  # as long as the file, or a damaged blob would pass for its text
                return None
            text = raw.decode("utf-8")
            fm_start, fm_end, body_start, body_line = offsets
            how = None if lenient is None else _lenient_read(lenient)
            return Document(text, _decode(data, tags), True, fm_start, fm_end, body_start, body_line, how)
        except (TypeError, ValueError, LookupError):
            return None

    def put(self, rel: str, key: Key, memory: Memory) -> None:
        """Remember `memory` for `rel`, unless the file is too new to trust its key or its data
        has a value JSON cannot carry back exactly."""
        if self.path is None or key[1] > self._racy_after:
            return
        doc = memory.doc
        tags: list[Tag] = []
        try:
            offsets = [doc.fm_start, doc.fm_end, doc.body_start, doc.body_line]
            lenient = None if doc.lenient is None else dataclasses.astuple(doc.lenient)
            entry = [_encode(doc.data, [], tags), offsets, tags, lenient]
            data = json.dumps(entry, separators=(",", ":")).encode("ascii")
            self._new[rel] = (data, doc.text.encode("utf-8"))
        except _Uncacheable:
            self._new[rel] = _ROW_ONLY  # the index row still spares the next `memdir index` a read
        row = self._made[rel] = IndexRow.of(memory)
        self._toc[rel] = [list(key), row.to_json(), 0, 0, 0, 0]
        self._seen.add(rel)
        self._changed = True

    def save(self) -> None:
        """Write the cache if anything changed, dropping files the scan did not see."""
        if self.path is None:
            return
        gone = self._toc.keys() - self._seen
        if not self._changed and not gone:
            self._close()
            return
        blob = self._blob
        parts: list[bytes] = []
        at = 0
        for rel in list(self._toc):
            entry = self._toc[rel]
            if rel in gone or not isinstance(entry, list) or len(entry) != 6:
                del self._toc[rel]
                continue
            new = self._new.get(rel)
            if new is _ROW_ONLY or (new is None and entry[2] < 0):
                entry[2:] = [-1, -1, -1, -1]
                continue
            data, text = new or (blob[entry[2] : entry[3]], blob[entry[4] : entry[5]])
            parts += [data, text]
            entry[2:] = [at, at + len(data), at + len(data), at + len(data) + len(text)]
            at += len(data) + len(text)
        # ASCII: a file name with undecodable bytes (a lone surrogate here) must survive the trip.
        header = json.dumps({"memdir": self._version, "files": self._toc}, separators=(",", ":"))
        from memdir.core.errors import FolderNotFound, StateRefused
        from memdir.core.store import ensure_state_dir, write_state_file

        try:
            ensure_state_dir(self.path.parent.parent)
            write_state_file(self.path, b"\n".join([_MAGIC, header.encode("ascii"), b"".join(parts)]))
        except (OSError, FolderNotFound, StateRefused):
            pass  # a read-only folder, a full disk, a folder removed: the next run parses again
        self._blob_read, self._new, self._changed = b"".join(parts), {}, False


def code_version() -> str:
    """What a cache must have been written by to be read: this memdir version, and a checksum of
    the code that renders and masks an index line (see the module's doc)."""
    from memdir.version import __version__

    package = os.path.dirname(os.path.dirname(__file__))
    code = 0
    for name in _LINE_SOURCES:
        try:
            with open(os.path.join(package, name), "rb") as source:
                code = zlib.crc32(source.read(), code)
        except OSError:  # no source beside the bytecode: the version alone tells the code apart
            code = zlib.crc32(name.encode(), code)
    return f"{__version__} {code:08x}"


def _lenient_read(stored: Any) -> LenientRead:
    """How the frontmatter was read, from its JSON: [quoted lines, tabs, strict error, strict line]."""
    quoted, tabs, error, line = stored
    if not (isinstance(quoted, list) and all(type(i) is int for i in quoted) and isinstance(tabs, bool)):
        raise ValueError("not a lenient reading")
    if not isinstance(error, str) or not (line is None or type(line) is int):
        raise ValueError("not a lenient reading")
    return LenientRead(tuple(quoted), tabs, error, line)


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

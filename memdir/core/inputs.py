"""Input memdir did not write: a file someone names (a transcript, notes to import, a Claude Code
settings file, a config) and JSON from outside (a hook's stdin, a settings file, a transcript's lines).

- `open_regular(path)` opens a file to read only when it is a regular file, following links as a
  path a person gives should. A named pipe would hold the reader until someone writes to it, maybe
  forever, and a device (`/dev/zero`, `/dev/urandom`) never ends; either raises NotRegularInput,
  which names what stands there, at once.
- `read_regular(path, limit)` reads such a file whole, refusing one over `limit` bytes (InputTooLarge).
- `parse_json(text)` is json.loads with nesting bounded by MAX_JSON_DEPTH: a deeper document raises
  JsonTooDeep, a ValueError like any other bad JSON, never RecursionError. Within the bound, a
  caller may walk, copy or dump what it got with Python's recursion.

Standard library only: the hooks and Claude Code's settings (core/claude_code.py) read through here.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import Any, BinaryIO

# Claude Code's payloads and settings are a handful of levels deep and a transcript line some ten;
# Python's own recursion stops json.loads near a thousand, and a walk over what it returned sooner.
MAX_JSON_DEPTH = 100

_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # POSIX; Windows has no named pipes in the file system
_BINARY = getattr(os, "O_BINARY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class NotRegularInput(OSError):
    """A path memdir was given to read that is a named pipe, socket, device or folder."""

    def __init__(self, path: Path | str, kind: str) -> None:
        super().__init__(errno.EINVAL, f"{kind}, not a regular file", str(path))

    def __str__(self) -> str:
        return f"{self.strerror}: {self.filename}"


class InputTooLarge(OSError):
    """A file over the size memdir reads for its purpose."""

    def __init__(self, path: Path | str, size: int, limit: int) -> None:
        super().__init__(errno.EFBIG, f"{size:,} bytes, over the {limit:,} memdir reads", str(path))

    def __str__(self) -> str:
        return f"{self.strerror}: {self.filename}"


class JsonTooDeep(ValueError):
    """JSON nested deeper than MAX_JSON_DEPTH."""


def kind_of(mode: int) -> str:
    """What a file of this mode is, in words: "a named pipe", "a character device", ..."""
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "a regular file" if stat.S_ISREG(mode) else "a special file"


def open_regular(path: Path | str) -> tuple[BinaryIO, int]:
    """The regular file at `path` (links followed) open to read, and its size. Never waits: a named
    pipe is opened non-blocking and refused, as is every other kind of file (NotRegularInput).
    Raises OSError as open() does (FileNotFoundError, PermissionError, ...)."""
    try:
        fd = os.open(path, os.O_RDONLY | _NONBLOCK | _BINARY | _CLOEXEC)
    except IsADirectoryError:
        raise NotRegularInput(path, "a folder") from None
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a socket, or a device with no unit behind it
            raise NotRegularInput(path, "a special file") from None
        raise
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise NotRegularInput(path, kind_of(status.st_mode))
        if _NONBLOCK:  # reads from a regular file never block; a clean descriptor all the same
            os.set_blocking(fd, True)
        return open(fd, "rb"), status.st_size
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path | str, limit: int) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them: InputTooLarge past that
    (also for a file that grew past it while read). Raises NotRegularInput and OSError as open_regular."""
    handle, size = open_regular(path)
    with handle:
        if size > limit:
            raise InputTooLarge(path, size, limit)
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise InputTooLarge(path, len(data), limit)
    return data


def parse_json(text: str | bytes, **options: Any) -> Any:
    """json.loads(text, **options), with nesting bounded by MAX_JSON_DEPTH (JsonTooDeep, a ValueError)."""
    try:
        data = json.loads(text, **options)
    except RecursionError:
        raise JsonTooDeep(_too_deep()) from None
    # Nesting needs an opening bracket a level: a text with few cannot be deep, and most are skipped.
    brackets = text.count("[") + text.count("{") if isinstance(text, str) else text.count(b"[") + text.count(b"{")
    if brackets > MAX_JSON_DEPTH and _deeper_than(data, MAX_JSON_DEPTH):
        raise JsonTooDeep(_too_deep())
    return data


def _too_deep() -> str:
    return f"nested deeper than {MAX_JSON_DEPTH} levels"


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether lists and objects in `value` nest more than `limit` levels; walked without recursion."""
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        for child in children:
            if isinstance(child, dict | list):
                if level + 1 > limit:
                    return True
                stack.append((child, level + 1))
    return False

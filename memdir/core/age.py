"""A memory's age: the one notion lint, recall, context, prune and stats share.

The frontmatter's date (`updated`, else `created`, ...) is the author's word. Claude Code writes
none, so the file's modification time stands in for it: a memory is not older for having no date.
A git checkout (or a copy) sets every file's mtime to the moment it ran, which says nothing about
any memory; when every memory file of a folder shares one moment, the date of each file's last
commit stands in, and without git there is no age at all. MEMORY.md's packing order does not use
this: the index must be the same in every clone, and mtimes are not (memdir.core.index).
"""

from __future__ import annotations

import datetime as dt
import io
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memdir.core.model import Memory

__all__ = ["NO_AGE", "Age", "AgeSource", "FolderAges", "git_dates", "mtimes_reset"]

RESET_MIN_FILES = 3  # fewer files sharing a moment is as likely a person's quick edits as a checkout
RESET_WINDOW_SECONDS = 2.0  # a checkout of thousands of small files takes about a second
GIT_TIMEOUT_SECONDS = 5.0  # one `git log` for the whole folder; past this, files not reached have no age


class AgeSource(StrEnum):
    FRONTMATTER = "frontmatter"  # `updated`, else `created`, ... in the file
    MTIME = "mtime"  # the file's modification time
    GIT = "git"  # the date of the file's last commit (every mtime was reset by a checkout or copy)
    NONE = "none"  # no telling


@dataclass(frozen=True)
class Age:
    """The day a memory last changed, as well as memdir can tell, and what that rests on."""

    day: dt.date | None  # None exactly when source is NONE
    source: AgeSource

    def describe(self) -> str:
        """What the day rests on, for people: 'its date', 'its modification time', ..."""
        return _DESCRIBED[self.source]


NO_AGE = Age(None, AgeSource.NONE)

_DESCRIBED = {
    AgeSource.FRONTMATTER: "its date",
    AgeSource.MTIME: "its modification time",
    AgeSource.GIT: "its last commit",
    AgeSource.NONE: "no date",
}


def mtimes_reset(mtimes: Iterable[float]) -> bool:
    """Whether a folder's mtimes look set all at once by a checkout or a copy: several files, all
    modified within a couple of seconds of each other. Cheap: the stats are taken already."""
    low = high = None
    count = 0
    for mtime in mtimes:
        count += 1
        low = mtime if low is None or mtime < low else low
        high = mtime if high is None or mtime > high else high
    return count >= RESET_MIN_FILES and high is not None and low is not None and high - low < RESET_WINDOW_SECONDS


class FolderAges:
    """The age of each memory file of one folder, from the frontmatter dates and the mtimes taken
    by the caller's own pass over the folder (a scan, the recall index's listing).

    Built for one command's run and thrown away with it: nothing is kept between runs, so nothing
    can go stale. `git log` runs at most once, and only when an undated file needs it."""

    def __init__(self, root: Path, mtimes: Mapping[str, float], *, git_timeout: float = GIT_TIMEOUT_SECONDS) -> None:
        self.root = root
        self.mtimes = mtimes  # path relative to root -> st_mtime, every memory file the caller saw
        self.reset = mtimes_reset(mtimes.values())
        self._git_timeout = git_timeout
        self._git: Mapping[str, dt.date] | None = None

    def age(self, path: str, stated: dt.date | None) -> Age:
        """The age of the file at `path` (relative to the folder) whose frontmatter states `stated`."""
        if stated is not None:
            return Age(stated, AgeSource.FRONTMATTER)
        mtime = self.mtimes.get(path)
        if not mtime:  # a file the caller did not see, or a Memory made by hand (mtime 0)
            return NO_AGE
        if not self.reset:
            return Age(dt.date.fromtimestamp(mtime), AgeSource.MTIME)
        if self._git is None:
            self._git = git_dates(self.root, set(self.mtimes), self._git_timeout)
        day = self._git.get(path)
        return Age(day, AgeSource.GIT) if day is not None else NO_AGE

    def of(self, memory: Memory) -> Age:
        return self.age(memory.path, memory.last_changed)


def git_dates(root: Path, wanted: set[str], timeout: float = GIT_TIMEOUT_SECONDS) -> dict[str, dt.date]:
    """The author date of the last commit that changed each of the `wanted` files (paths relative
    to `root`), in one `git log` over the folder, newest commit first, read until every wanted file
    is seen. Empty when git is missing, `root` is in no repository or in a shallow clone (whose
    oldest commit would date every file it holds); a file git never committed is left out, and so
    is every file not reached when `timeout` seconds run out."""
    import subprocess  # only for a folder whose mtimes were reset, and only once a file needs it
    import threading

    # A folder handed over whole could carry a config that runs programs: nothing of it that log reads.
    base = ["git", "-C", str(root), "-c", "core.fsmonitor=false", "-c", "log.showSignature=false"]
    try:
        shallow = subprocess.run(
            [*base, "rev-parse", "--is-shallow-repository"], capture_output=True, timeout=timeout, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return {}  # git missing, not a repository, or too slow
    if shallow.stdout.strip() != b"false":
        return {}
    found: dict[str, dt.date] = {}
    command = [*base, "log", "-z", "--format=%x01%at", "--name-only", "--relative", "--no-renames", "--", "."]
    try:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except OSError:
        return {}
    timer = threading.Timer(timeout, process.kill)  # a huge history stops here; what was read stands
    timer.start()
    try:
        output = process.stdout
        assert isinstance(output, io.BufferedReader)  # stdout=PIPE, unbuffered=False: read1 reads what is there
        day: dt.date | None = None
        pending = b""
        while len(found) < len(wanted):
            chunk = output.read1(1 << 16)
            if not chunk:
                break
            *records, pending = (pending + chunk).split(b"\0")
            for record in records:
                if record.startswith(b"\x01"):  # a commit: its author time
                    day = dt.date.fromtimestamp(int(record[1:]))
                    continue
                path = os.fsdecode(record.lstrip(b"\n"))  # the first file of a commit follows a newline
                if day is not None and path in wanted and path not in found:
                    found[path] = day  # newest first: the first commit seen is the last one
    except (OSError, ValueError):
        pass  # killed mid-read, or output git does not write: keep what was read
    finally:
        timer.cancel()
        timer.join()  # no thread left behind: lint forks after reading ages, and a fork copies one thread
        process.kill()
        process.wait()
    return found

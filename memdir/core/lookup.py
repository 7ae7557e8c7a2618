"""Which file a query names: `memdir show NAME`, `rm`, `edit` and the library's `get` all pick a
memory by path, file name, stem, `name` or slug of the name, and refuse an ambiguous query."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from memdir.core.cache import ParseCache
from memdir.core.errors import InvalidMemory, MemoryNotFound
from memdir.core.model import Memory, name_key, slugify
from memdir.core.store import ARCHIVE_DIR, FileProblem, Scan, archive_dir, read_decisions, resolved, scan_folder


@dataclass(frozen=True)
class Found:
    """A file picked by `find_memory`: a memory, or a file that failed to load as one."""

    path: str
    memory: Memory | None
    problem: FileProblem | None


def find_memory(root: Path, scan: Scan, query: str) -> Found:
    """Pick one file of the folder at `root` (as `scan` found it) by path, file name, stem, `name` or
    slug of the name, rule by rule, the first rule that picks exactly one winning. A path is relative
    to the folder, or to the working directory (`.claude/memory/user_role.md` from the repository
    root), or absolute.

    Raises MemoryNotFound when nothing matches, the query is ambiguous, or it is a path to a file
    outside the folder.
    """
    wanted = query.strip().removeprefix("./")
    in_folder = _path_in_folder(root, query.strip())
    outside = in_folder is None and _names_a_path(query.strip())
    if outside and os.path.isabs(query.strip()):
        raise MemoryNotFound(f"{query.strip()} is not in this memory folder ({root})")
    candidates: list[Found] = [Found(m.path, m, None) for m in scan.memories]
    candidates += [Found(p.path, None, p) for p in scan.problems if p.kind != "symlink-outside"]

    def stem(path: str) -> str:
        return PurePosixPath(path).stem

    try:
        wanted_slug = slugify(wanted)
    except InvalidMemory:
        wanted_slug = ""
    rules: tuple[Callable[[Found], bool], ...] = (
        lambda f: f.path == wanted or f.path == f"{wanted}.md",
        lambda f: in_folder is not None and f.path in (in_folder, f"{in_folder}.md"),
        lambda f: PurePosixPath(f.path).name in (wanted, f"{wanted}.md") or stem(f.path) == wanted,
        lambda f: f.memory is not None and f.memory.name.casefold() == wanted.casefold(),
        lambda f: (
            bool(wanted_slug)
            and (
                (f.memory is not None and bool(f.memory.name) and name_key(f.memory.name) == wanted_slug)
                or stem(f.path).split("_", 1)[-1] == wanted_slug
            )
        ),
    )
    for matches_rule in rules:
        hits = [f for f in candidates if matches_rule(f)]
        if len(hits) == 1:
            return hits[0]
        if len(hits) > 1:
            names = ", ".join(sorted(h.path for h in hits))
            raise MemoryNotFound(f"{query!r} matches {len(hits)} memories ({names}); name the file")
    if outside and os.path.lexists(query.strip()):
        raise MemoryNotFound(f"{query.strip()} is not in this memory folder ({root})")
    raise MemoryNotFound(f"no memory matches {query!r} in {root}; `memdir list` shows them")


def _path_in_folder(root: Path, query: str) -> str | None:
    """`query` as a POSIX path relative to the folder, when it is a path into the folder from the
    working directory or an absolute one; None otherwise. Compared as written and then with
    symlinks followed, since either the folder or the path may go through one."""
    if not _names_a_path(query):
        return None
    try:
        path, folder = Path(os.path.abspath(query)), Path(os.path.abspath(root))  # from the working directory
        if not path.is_relative_to(folder):
            path, folder = resolved(path), resolved(folder)
    except (OSError, ValueError):  # a working directory deleted, a symlink loop, a NUL character
        return None
    return path.relative_to(folder).as_posix() if path.is_relative_to(folder) and path != folder else None


def _names_a_path(query: str) -> bool:
    """Whether `query` can only be a path (a name or a bare file name has no separator)."""
    return os.path.isabs(query) or "/" in query or os.sep in query


def find_archived(root: Path, query: str, missing: MemoryNotFound) -> str:
    """The path (under `.archive/`) of the archived memory `query` names, when it names none in the
    folder (`missing` says so); else `missing` is raised. `.archive/x.md` names the archive. Never
    picks one of two: an ambiguous query is refused."""
    archive = archive_dir(root)
    if not str(missing).startswith("no memory matches") or not archive.is_dir():
        raise missing
    wanted = query.strip().removeprefix("./").removeprefix(f"{ARCHIVE_DIR}/")
    try:
        found = find_memory(archive, scan_folder(archive, ParseCache.disabled()), wanted)
    except MemoryNotFound as exc:
        if str(exc).startswith("no memory matches"):
            raise missing from None
        raise MemoryNotFound(f"{exc} (in the archive)") from None
    return f"{ARCHIVE_DIR}/{found.path}"


def archived_origin(root: Path, path: str) -> str:
    """The path an archived memory had in the folder (the log's move to `path`, else the same path
    without `.archive/`), whose lines the index history and the recall log hold; or `path` itself
    when a live memory has that path now, whose lines are its own."""
    moves = [e for e in read_decisions(root) if e.get("to") == path and isinstance(e.get("file"), str)]
    origin = moves[-1]["file"] if moves else path.removeprefix(f"{ARCHIVE_DIR}/")
    return path if os.path.lexists(root / origin) else origin

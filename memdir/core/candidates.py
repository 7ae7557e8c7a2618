"""Every folder memdir considers for the memory folder, for `memdir where` (and the one-line notes of
`init` and `hooks install`): each with how many memory files it holds, the one in use and why, and
the one Claude Code itself loads. locate() in config.py makes the choice; this says what it chose
among, so memories kept in another folder are not silently out of sight.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from memdir.core.claude_code import (
    MANAGED_SETTINGS,
    ClaudeMemory,
    claude_memory,
    default_memory_folder,
    find_repo_root,
    main_checkout,
)
from memdir.core.config import Config, Location, claude_location, locate
from memdir.core.model import INDEX_NAME

# Entries looked at per folder before counting stops: a folder of 10,000 memories is counted whole,
# and a home folder named by mistake costs a fraction of a second, not minutes.
COUNT_LIMIT = 20_000


@dataclass(frozen=True)
class MemoryCount:
    """How many memory files a folder holds, as far as a bounded listing tells."""

    exists: bool
    memories: int = 0
    complete: bool = True  # False: counting stopped after COUNT_LIMIT entries, so "at least"
    problem: str | None = None  # why it could not be counted, when it could not


def count_memories(folder: Path, limit: int = COUNT_LIMIT) -> MemoryCount:
    """The memory files in `folder`: markdown files other than MEMORY.md, in it and its sub-folders,
    dot-folders (`.memdir/`, `.archive/`) and symlinks left out as `memdir list` leaves them out.

    No file is opened or parsed (a named pipe costs nothing), so a file without frontmatter counts
    too; the listing stops after `limit` entries."""
    try:
        status = os.stat(folder)
    except FileNotFoundError:
        return MemoryCount(False)
    except OSError as exc:
        return MemoryCount(False, problem=f"cannot be reached ({exc.strerror})")
    if not stat.S_ISDIR(status.st_mode):
        return MemoryCount(False, problem="is not a folder")
    count, seen, pending = 0, 0, [str(folder)]
    while pending:
        current = pending.pop()
        try:
            with os.scandir(current) as entries:
                for entry in entries:
                    seen += 1
                    if seen > limit:
                        return MemoryCount(True, count, complete=False)
                    if entry.name.startswith(".") or entry.is_symlink():
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        pending.append(entry.path)
                    elif (
                        entry.name.endswith(".md") and entry.name != INDEX_NAME and entry.is_file(follow_symlinks=False)
                    ):
                        count += 1
        except OSError as exc:
            if current == str(folder):
                return MemoryCount(True, problem=f"cannot be listed ({exc.strerror})")
            return MemoryCount(True, count, complete=False, problem=f"a sub-folder cannot be listed ({exc.strerror})")
    return MemoryCount(True, count)


@dataclass(frozen=True)
class Candidate:
    """One folder memdir considered, and what it is to memdir and to Claude Code."""

    path: Path
    source: str  # option | env | config | repository | main-checkout | claude | claude-default | claude-worktree
    reason: str
    count: MemoryCount
    in_use: bool = False
    claude_loads: bool = False


@dataclass(frozen=True)
class Survey:
    """The folder in use, Claude Code's, and every folder considered (each once)."""

    location: Location
    claude: ClaudeMemory
    candidates: tuple[Candidate, ...]

    @property
    def claude_folder(self) -> Path | None:
        """The folder Claude Code loads; None when its auto memory is off."""
        return None if self.claude.off is not None else self.claude.folder

    def elsewhere(self) -> Candidate | None:
        """A folder of Claude Code's that holds memories memdir does not use: the one Claude Code
        loads when it is not the one in use, else one it wrote to before (its default folder, now
        that a setting moved it; a worktree's own), which neither loads any more. The one Claude Code
        loads first, else the fullest; None when there is none. Folders a person named (--dir, the
        config, the repository's) are their choice, and a main checkout's come with git."""
        stranded = [
            c
            for c in self.candidates
            if not c.in_use
            and c.count.memories > 0
            and (c.claude_loads or c.source in ("claude-default", "claude-worktree"))
        ]
        stranded.sort(key=lambda c: (not c.claude_loads, -c.count.memories))
        return stranded[0] if stranded else None


def survey(
    dir_option: Path | None,
    cwd: Path,
    env: Mapping[str, str],
    config: Config,
    *,
    managed: Path | None = MANAGED_SETTINGS,
    limit: int = COUNT_LIMIT,
) -> Survey:
    """Every folder memdir considers, in the order it considers them, with the one locate() chooses.
    A folder that only might hold memories (Claude Code's default folder when a setting moved it, a
    worktree's own, the main checkout's `.claude/memory/`) is listed when it exists."""
    location = locate(dir_option, cwd, env, config, managed=managed)
    claude = claude_memory(cwd, env, managed)
    repo = find_repo_root(cwd)
    found: list[tuple[Path, str, str, bool]] = []  # (path, source, reason, listed even when missing)
    if dir_option is not None:
        found.append((location.path, location.source, location.reason, True))
    if env.get("MEMDIR_DIR"):
        given = locate(None, cwd, {"MEMDIR_DIR": env["MEMDIR_DIR"]}, config, managed=None)
        found.append((given.path, given.source, given.reason, True))
    if config.dir is not None:
        found.append((config.dir, "config", f"`dir` in {config.path}", True))
    if repo is not None:
        found.append((repo / ".claude" / "memory", "repository", f".claude/memory/ in the repository at {repo}", True))
        main = main_checkout(repo)
        if main is not None:
            reason = f".claude/memory/ in the main checkout at {main} (this is a worktree of it)"
            found.append((main / ".claude" / "memory", "main-checkout", reason, False))
    found.append((claude.folder, "claude", claude.reason, True))
    fallback = claude_location(claude, repo or cwd, env)
    if fallback.path != claude.folder:  # memdir would not follow a repository's setting out of it
        found.append((fallback.path, "claude-default", fallback.reason, fallback.path == location.path))
    elif claude.folder != claude.default:
        found.append((claude.default, "claude-default", f"Claude Code's default folder for {claude.project}", False))
    if repo is not None and repo != claude.project:
        worktree = default_memory_folder(repo, env)
        found.append((worktree, "claude-worktree", f"Claude Code's folder for this worktree's own path, {repo}", False))
    loads = None if claude.off is not None else claude.folder
    return Survey(location, claude, tuple(_merge(found, location.path, loads, limit)))


def _merge(found: list[tuple[Path, str, str, bool]], in_use: Path, loads: Path | None, limit: int) -> list[Candidate]:
    """One candidate a folder (two names for one folder are one), counted once; a maybe-folder
    that does not exist is left out."""
    merged: dict[str, Candidate] = {}
    for path, source, reason, always in found:
        key = os.path.realpath(path)
        known = merged.get(key)
        if known is not None:
            if reason not in known.reason:
                merged[key] = replace(known, reason=f"{known.reason}; {reason}")
            continue
        count = count_memories(path, limit)
        if not always and not count.exists:
            continue
        merged[key] = Candidate(path, source, reason, count)
    use_key = os.path.realpath(in_use)
    loads_key = os.path.realpath(loads) if loads is not None else None
    return [
        replace(candidate, in_use=key == use_key, claude_loads=key == loads_key) for key, candidate in merged.items()
    ]

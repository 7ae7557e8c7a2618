"""Claude Code's own rules for its auto-memory folder, as the real client (2.1.332) applies them: the
project root it keys a folder on (a worktree's main checkout), the folder's name, the settings files
that may set `autoMemoryDirectory` and in which order, and the switches that turn auto memory off.
docs/configuration.md gives the evidence for each rule.

Reads files only: no git, no writes. Nothing here imports more than the standard library (and
core/inputs.py, which reads a file only when it is a regular one and is standard library only too).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memdir.core.inputs import InputTooLarge, NotRegularInput, parse_json, read_regular

AUTO_MEMORY_KEY = "autoMemoryDirectory"
# Where an organisation's managed settings live (Claude Code reads them first; drop-in files and
# MDM policies aside).
MANAGED_SETTINGS = (
    Path("/Library/Application Support/ClaudeCode/managed-settings.json")
    if sys.platform == "darwin"
    else Path("/etc/claude-code/managed-settings.json")
)
# Past this many characters a project's folder name is cut and a hash of the whole path added.
_NAME_MAX = 200
_SETTINGS_MAX_BYTES = 1024 * 1024  # a settings file is a few kilobytes; more is not one
_GIT_FILE_MAX_BYTES = 4096  # `.git`, `commondir`, `gitdir`: one line each
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


# --- the project and its folder's name --------------------------------------------------------


def find_repo_root(start: Path) -> Path | None:
    """The nearest folder at or above `start` with a `.git` (a folder, or a worktree's file)."""
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def main_checkout(root: Path) -> Path | None:
    """For a linked worktree at `root`, the main checkout's root (the bare repository itself when
    the repository is bare); None for anything else. The links are checked as Claude Code checks
    them (`gitdir:` -> `.git/worktrees/<name>`, its `commondir`, and its `gitdir` pointing back), so
    a `.git` file that merely names a folder is not taken for a worktree."""
    try:
        pointer = _read_small(root / ".git", _GIT_FILE_MAX_BYTES)
        if pointer is None or not pointer.strip().startswith("gitdir:"):
            return None
        gitdir = Path(os.path.normpath(root / pointer.strip().removeprefix("gitdir:").strip()))
        common_text = _read_small(gitdir / "commondir", _GIT_FILE_MAX_BYTES)
        back_text = _read_small(gitdir / "gitdir", _GIT_FILE_MAX_BYTES)
        if common_text is None or back_text is None:
            return None
        common = Path(os.path.normpath(gitdir / common_text.strip()))
        if gitdir.parent != common / "worktrees":
            return None
        if os.path.realpath(gitdir / back_text.strip()) != os.path.realpath(root / ".git"):
            return None
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if common.name != ".git":  # a bare repository's worktree: keyed on the repository itself
        return None if (common / ".git").exists() else common
    return common.parent


def canonical_repo_root(start: Path) -> Path | None:
    """The root Claude Code keys a project on: the repository's root, or for a linked worktree the
    main checkout's root, so every worktree of a repository shares one auto-memory folder."""
    root = find_repo_root(start)
    if root is None:
        return None
    return main_checkout(root) or root


def claude_home(env: Mapping[str, str]) -> Path:
    """Claude Code's configuration folder: CLAUDE_CONFIG_DIR, else ~/.claude."""
    configured = env.get("CLAUDE_CONFIG_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".claude"


def sanitise_project_path(path: Path) -> str:
    """Claude Code's folder name for a project: every character outside [A-Za-z0-9] becomes '-'.

    As JavaScript counts it: a character past U+FFFF is two UTF-16 code units, so two dashes. A
    name over 200 characters keeps its first 200 and gets `-` and a hash of the whole path (base 36
    of the absolute value of Java's String.hashCode), as the client does."""
    text = str(path)
    name = "".join(c if c.isascii() and c.isalnum() else "-" * _utf16_units(c) for c in text)
    if len(name) <= _NAME_MAX:
        return name
    return f"{name[:_NAME_MAX]}-{_base36(abs(_string_hash(text)))}"


def _utf16_units(char: str) -> int:
    return 2 if ord(char) > 0xFFFF else 1


def _string_hash(text: str) -> int:
    """Java's String.hashCode over UTF-16 code units, as a signed 32-bit number."""
    value = 0
    units = text.encode("utf-16-le")
    for i in range(0, len(units), 2):
        value = (value * 31 + int.from_bytes(units[i : i + 2], "little")) & 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    text = ""
    while True:
        number, rest = divmod(number, 36)
        text = digits[rest] + text
        if number == 0:
            return text


def project_folder_name(project: Path, env: Mapping[str, str]) -> str:
    """The name of `project`'s folder under `projects/`: CLAUDE_CODE_PROJECT_DIR_NAME when
    CLAUDE_CONFIG_DIR is set too and it is a plain name, else the sanitised path."""
    override = env.get("CLAUDE_CODE_PROJECT_DIR_NAME")
    if (
        env.get("CLAUDE_CONFIG_DIR")
        and not env.get("CLAUDE_CODE_REMOTE_MEMORY_DIR")
        and override
        and re.fullmatch(r"[A-Za-z0-9_-]{1,64}", override)
        and not re.fullmatch(r"con|prn|aux|nul|com[0-9]|lpt[0-9]", override, re.IGNORECASE)
    ):
        return override
    return sanitise_project_path(project)


def default_memory_folder(project: Path, env: Mapping[str, str]) -> Path:
    """`<Claude Code's home>/projects/<project's name>/memory`, the folder without any setting
    (CLAUDE_CODE_REMOTE_MEMORY_DIR stands in for the home in a remote session)."""
    base = Path(env["CLAUDE_CODE_REMOTE_MEMORY_DIR"]) if env.get("CLAUDE_CODE_REMOTE_MEMORY_DIR") else claude_home(env)
    return base / "projects" / project_folder_name(project, env) / "memory"


# Bounds the search for a project from its auto-memory folder's name: a name like `-home-ann-my-app`
# can be read several ways (/home/ann/my-app, /home/ann/my/app), and each reading costs a listing.
_PROJECT_SEARCH_LISTINGS = 256


def claude_project_of(folder: Path) -> Path | None:
    """The project whose Claude Code auto-memory folder is `folder` (`.../projects/<sanitised path>/memory`),
    found by reading the sanitised name back against the file system; None when `folder` is not such a
    folder or no existing directory sanitises to its name. The sanitising is lossy, so where two
    directories fit (/a/b-c and /a/b/c) the first in sorted order wins."""
    if folder.name != "memory" or folder.parent.parent.name != "projects":
        return None
    name = folder.parent.name
    listings = 0

    def search(at: Path, rest: str) -> Path | None:
        nonlocal listings
        if not rest:
            return at
        if not rest.startswith("-") or listings >= _PROJECT_SEARCH_LISTINGS:
            return None
        listings += 1
        try:
            children = sorted(child for child in at.iterdir() if child.is_dir())
        except OSError:
            return None
        for child in children:
            part = sanitise_project_path(Path(child.name))
            tail = rest[1 + len(part) :]
            if rest[1:].startswith(part) and (not tail or tail.startswith("-")):
                found = search(child, tail)
                if found is not None:
                    return found
        return None

    return search(Path(folder.anchor or "/"), name)


# --- the settings files ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SettingsFile:
    """One of Claude Code's settings files, and what it is to Claude Code."""

    scope: str  # policy | local | project | user
    path: Path

    @property
    def in_repository(self) -> bool:
        """Whether a repository can ship it: a project's `.claude/settings*.json`."""
        return self.scope in ("local", "project")


def settings_files(cwd: Path, env: Mapping[str, str], managed: Path | None = MANAGED_SETTINGS) -> list[SettingsFile]:
    """The settings files that can set the auto-memory folder, first one first, for a session
    started in `cwd`: managed, then local (the repository's main checkout's, then the working
    directory's own), then project (the working directory's), then the user's. Claude Code reads
    the local and project files only in a folder the user trusts (always with `claude -p`)."""
    files = [SettingsFile("policy", managed)] if managed is not None else []
    root = canonical_repo_root(cwd)
    local_roots = [root] if root is not None and root != Path.home() else []
    local_roots += [cwd] if cwd not in local_roots else []
    files += [SettingsFile("local", folder / ".claude" / "settings.local.json") for folder in local_roots]
    files.append(SettingsFile("project", cwd / ".claude" / "settings.json"))
    files.append(SettingsFile("user", claude_home(env) / "settings.json"))
    return files


def read_settings(path: Path) -> dict[str, Any] | None:
    """A settings file's JSON object; None when it is missing, not a regular file, too large or not a
    JSON object (Claude Code ignores such a file too)."""
    try:
        text = _read_small(path, _SETTINGS_MAX_BYTES)
        data = parse_json(text) if text is not None else None
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _read_small(path: Path, limit: int) -> str | None:
    """The text of a small regular file, following links; None when it is missing, not a regular
    file (a named pipe is never waited on) or over `limit` bytes."""
    try:
        return read_regular(path, limit).decode("utf-8")
    except (FileNotFoundError, NotADirectoryError, NotRegularInput, InputTooLarge):
        return None


def memory_dir_value(value: object, env: Mapping[str, str], *, tilde: bool) -> Path | None:
    """The folder an `autoMemoryDirectory` value names, or None when Claude Code would not take it:
    not a string, relative, `~` alone or `~/` leading out of the home folder, shorter than three
    characters, a drive alone, a UNC path, or with a NUL. `tilde`: `~/` is the home folder (in a
    setting, not in CLAUDE_COWORK_MEMORY_PATH_OVERRIDE)."""
    if not isinstance(value, str) or not value:
        return None
    text = value
    if tilde and text[:2] in ("~/", "~\\"):
        rest = text[2:]
        inside = os.path.normpath(rest or ".")
        if inside in (".", "..") or inside.startswith(("../", "..\\")):
            return None
        text = os.path.join(env.get("HOME") or str(Path.home()), rest)
    if text.startswith("//"):  # node's normalize makes one slash of several (Python keeps two)
        text = "/" + text.lstrip("/")
    folder = os.path.normpath(text).rstrip("/\\")
    if (
        not os.path.isabs(folder)
        or len(folder) < 3
        or re.fullmatch(r"[A-Za-z]:", folder)
        or folder.startswith(("//", "\\\\"))
        or "\0" in folder
    ):
        return None
    return Path(folder)


# --- the folder Claude Code loads -----------------------------------------------------------------


@dataclass(frozen=True)
class ClaudeMemory:
    """Claude Code's auto-memory folder for a session started in a folder, and why."""

    folder: Path  # where its auto memory is (even when off: where it would be)
    reason: str
    default: Path  # projects/<key>/memory: the folder when nothing says otherwise
    project: Path  # the root `default` is keyed on
    setting: SettingsFile | None = None  # the file whose autoMemoryDirectory named `folder`
    off: str | None = None  # why auto memory is off (Claude Code then loads no folder)


def claude_memory(cwd: Path, env: Mapping[str, str], managed: Path | None = MANAGED_SETTINGS) -> ClaudeMemory:
    """Where Claude Code's auto memory is for a session started in `cwd`: CLAUDE_COWORK_MEMORY_PATH_OVERRIDE,
    else `autoMemoryDirectory` in the first settings file that has the key (a value it refuses
    gives the default folder, not the next file's), else `projects/<project>/memory` keyed on the
    repository's main checkout, else on `cwd`."""
    project = canonical_repo_root(cwd) or cwd
    default = default_memory_folder(project, env)
    files = settings_files(cwd, env, managed)
    loaded = [(file, read_settings(file.path)) for file in files]
    off = _off_reason(env, loaded)
    override = env.get("CLAUDE_COWORK_MEMORY_PATH_OVERRIDE")
    folder = memory_dir_value(override, env, tilde=False) if override else None
    own = "Claude Code's auto-memory folder"
    if folder is not None:
        return ClaudeMemory(folder, f"{own}, set by CLAUDE_COWORK_MEMORY_PATH_OVERRIDE", default, project, off=off)
    for file, data in loaded:
        if data is None or data.get(AUTO_MEMORY_KEY) is None:
            continue
        folder = memory_dir_value(data[AUTO_MEMORY_KEY], env, tilde=True)
        if folder is not None:
            reason = f"{own}, set by {AUTO_MEMORY_KEY} in {file.path}"
            return ClaudeMemory(folder, reason, default, project, file, off)
        reason = f"{own} for {project} (it does not take {AUTO_MEMORY_KEY} in {file.path}: not an absolute folder)"
        return ClaudeMemory(default, reason, default, project, off=off)
    return ClaudeMemory(default, f"{own} for {project}", default, project, off=off)


def _off_reason(env: Mapping[str, str], loaded: list[tuple[SettingsFile, dict[str, Any] | None]]) -> str | None:
    switch = env.get("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "").strip().lower()
    if switch in _TRUE:
        return "CLAUDE_CODE_DISABLE_AUTO_MEMORY is set"
    if switch in _FALSE:
        return None  # forced on, whatever the settings say
    for file, data in loaded:
        enabled = data.get("autoMemoryEnabled") if data is not None else None
        if isinstance(enabled, bool):
            return None if enabled else f"autoMemoryEnabled is false in {file.path}"
    return None

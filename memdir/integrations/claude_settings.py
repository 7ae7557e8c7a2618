"""Claude Code's settings files: memdir's SessionStart, UserPromptSubmit and Stop hooks merged into one
(`.claude/settings.json`, `.claude/settings.local.json` or `~/.claude/settings.json`) and taken out
again, touching nothing else; `autoMemoryDirectory` set and unset. What the hooks do when they run
is claude_runtime.py.

Nothing here imports typer or rich (see cli/fast.py).
"""

from __future__ import annotations

import copy
import json
import os
import shlex
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from memdir.core.claude_code import claude_home, find_repo_root
from memdir.core.errors import ConfigError, MemdirError
from memdir.core.inputs import InputTooLarge, NotRegularInput, parse_json, read_regular
from memdir.core.store import atomic_write
from memdir.integrations.claude_runtime import SESSION_START, STOP, USER_PROMPT_SUBMIT

# --- what memdir installs ------------------------------------------------------------------

# `memdir hook X` -> Claude Code's event name
EVENTS = {SESSION_START: "SessionStart", USER_PROMPT_SUBMIT: "UserPromptSubmit", STOP: "Stop"}
# Not "resume": a resumed session replays its transcript, which already holds the context this
# hook gave it, and injecting it again only costs tokens. `clear` and `compact` start over.
SESSION_START_MATCHER = "startup|clear|compact"
# Seconds Claude Code waits before it kills the command. A warm index takes a fraction of a
# second; the lock wait below is bounded by LOCK_WAIT_SECONDS; a cold 10,000-file folder ~3 s.
HOOK_TIMEOUT_SECONDS = 10
SETTINGS_MAX_BYTES = 1024 * 1024  # a settings file is a few kilobytes; more is not one
DEFAULT_COMMAND = "memdir"
AUTO_MEMORY_KEY = "autoMemoryDirectory"


class SettingsScope(StrEnum):
    project = "project"  # .claude/settings.json, committed: the whole team gets the hooks
    local = "local"  # .claude/settings.local.json, this clone only
    user = "user"  # ~/.claude/settings.json, every project of this user


class SettingsError(ConfigError):
    """A settings file memdir cannot edit without risking what is in it."""


class SettingsConflict(MemdirError):
    """The settings already say something else where memdir would write (autoMemoryDirectory)."""


@dataclass(frozen=True)
class HookCommand:
    """One hook command memdir installs, and where."""

    event: str  # Claude Code's event name
    command: str
    matcher: str | None = None

    def group(self) -> dict[str, Any]:
        """The matcher group Claude Code reads, keys in the order its documentation shows them."""
        hook = {"type": "command", "command": self.command, "timeout": HOOK_TIMEOUT_SECONDS}
        return {"matcher": self.matcher, "hooks": [hook]} if self.matcher is not None else {"hooks": [hook]}


def memdir_hooks(base: str = DEFAULT_COMMAND, *, prompt_recall: bool = True) -> list[HookCommand]:
    """The hooks to install; `base` is how the shell that runs them reaches memdir. Without
    `prompt_recall`, no UserPromptSubmit hook (Claude Code uses no matcher for that event)."""
    base = base.strip() or DEFAULT_COMMAND
    hooks = [HookCommand("SessionStart", f"{base} hook {SESSION_START}", SESSION_START_MATCHER)]
    if prompt_recall:
        hooks.append(HookCommand("UserPromptSubmit", f"{base} hook {USER_PROMPT_SUBMIT}"))
    return [*hooks, HookCommand("Stop", f"{base} hook {STOP}")]


def installed_plugins(env: Mapping[str, str], project: Path) -> list[str]:
    """The memdir plugins Claude Code lists as installed (`memdir@<marketplace>`, with its scope):
    their hooks run beside those of the settings files, so a session would get everything twice.
    Read from Claude Code's own `plugins/installed_plugins.json`; [] when it cannot tell."""
    try:
        raw = read_regular(claude_home(env) / "plugins" / "installed_plugins.json", SETTINGS_MAX_BYTES)
        data = parse_json(raw.decode("utf-8"))
        plugins = data["plugins"]
        found = []
        for plugin_id, installs in plugins.items():
            if not plugin_id.startswith("memdir@"):
                continue
            for install in installs:
                where = install.get("projectPath")
                if where is None or Path(where).resolve() == project.resolve():  # user scope, or this project's
                    found.append(f"{plugin_id} ({install.get('scope', 'user')} scope)")
        return found
    except (OSError, ValueError, KeyError, TypeError, AttributeError):  # UnicodeDecodeError is a ValueError
        return []


def project_root(cwd: Path) -> Path:
    """Where Claude Code's project settings live: the repository root, else the working directory."""
    return find_repo_root(cwd) or cwd


def settings_path(scope: SettingsScope, project: Path, env: Mapping[str, str]) -> Path:
    if scope is SettingsScope.user:
        return claude_home(env) / "settings.json"
    name = "settings.local.json" if scope is SettingsScope.local else "settings.json"
    return project / ".claude" / name


def hook_event_of(command: str) -> str | None:
    """`session-start`, `user-prompt-submit` or `stop` when `command` runs memdir's hook of that name, else None.

    Recognises any way of reaching memdir (`memdir`, `/venv/bin/memdir`, `uvx memdir`,
    `python -m memdir`, `"$CLAUDE_PROJECT_DIR"/.venv/bin/memdir`, global options in between), so
    uninstall finds entries installed with another `--command`, and install does not add a second.
    """
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    start = next(
        (
            i
            for i, word in enumerate(words)
            if os.path.basename(word) in ("memdir", "memdir.exe")
            or (word == "-m" and words[i + 1 : i + 2] == ["memdir"])
        ),
        None,
    )
    if start is None:
        return None
    rest = words[start + 1 :]
    for i, word in enumerate(rest[:-1]):
        if word == "hook" and rest[i + 1] in EVENTS:
            return rest[i + 1]
    return None


# --- reading and writing a settings file ---------------------------------------------------


@dataclass(frozen=True)
class SettingsChange:
    """What memdir would write (or wrote) to one settings file."""

    path: Path
    before: str | None  # None: the file does not exist
    after: str | None  # None: it still does not exist
    notes: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return self.before != self.after


@dataclass
class _Settings:
    """A settings file as parsed, with what is needed to write it back in its own style."""

    data: dict[str, Any]
    indent: str | int
    final_newline: bool
    canonical: bool  # re-serialising the unchanged data reproduces the file byte for byte


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _no_duplicates(path: Path) -> Callable[[list[tuple[str, Any]]], dict[str, Any]]:
    def build(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key, value in pairs:
            if key in result:
                # json.loads would keep the last silently; a rewrite would then drop the first.
                raise SettingsError(f"{path}: key {key!r} appears twice in one object; memdir did not change the file")
            result[key] = value
        return result

    return build


def _parse_settings(path: Path, text: str | None) -> _Settings:
    if text is None or not text.strip():  # absent, or an empty file someone touched
        return _Settings({}, 2, True, True)
    try:
        data = parse_json(text, object_pairs_hook=_no_duplicates(path), parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise SettingsError(
            f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); memdir did not "
            "change it. Fix the file, or add the hooks by hand (docs/claude-code.md shows them)"
        ) from None
    except ValueError as exc:
        raise SettingsError(f"{path} is not valid JSON ({exc}); memdir did not change it") from None
    if not isinstance(data, dict):
        raise SettingsError(f"{path} holds a JSON {type(data).__name__}, not an object; memdir did not change it")
    indent = _indent_of(text)
    final_newline = text.endswith("\n")
    canonical = _dump(data, indent, final_newline) == text
    return _Settings(data, indent, final_newline, canonical)


def _indent_of(text: str) -> str | int:
    """The file's own indentation unit, so a rewrite keeps its look; two spaces when unknown."""
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and stripped != line:
            unit = line[: len(line) - len(stripped)]
            return len(unit) if set(unit) == {" "} else unit
    return 2


def _dump(data: dict[str, Any], indent: str | int, final_newline: bool) -> str:
    return json.dumps(data, indent=indent, ensure_ascii=False) + ("\n" if final_newline else "")


def _read(path: Path) -> str | None:
    """The settings file's text, None when there is none. Only a regular file is read, and only up
    to SETTINGS_MAX_BYTES: a named pipe in its place would hold `hooks install` forever."""
    try:
        return read_regular(path, SETTINGS_MAX_BYTES).decode("utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise SettingsError(f"{path} is not UTF-8 text; memdir did not change it") from None
    except NotRegularInput as exc:
        raise SettingsError(f"{path} is {exc.strerror}; memdir did not change it") from None
    except InputTooLarge as exc:
        raise SettingsError(f"{path} is {exc.strerror}: not a settings file; memdir did not change it") from None


# --- merging and removing memdir's hooks ---------------------------------------------------


def _hooks_table(path: Path, data: dict[str, Any]) -> dict[str, Any] | None:
    table = data.get("hooks")
    if table is not None and not isinstance(table, dict):
        raise SettingsError(f"{path}: `hooks` is not an object; memdir did not change the file")
    return table


def _strip(
    path: Path, table: dict[str, Any], is_ours: Callable[[str], bool], events: Iterable[str]
) -> tuple[dict[str, int], set[str]]:
    """Remove memdir's commands from `table` in place, dropping matcher groups left empty.

    Returns, per event list touched, where its first memdir group stood (counted among the groups
    that remain), and the events whose list this emptied (so their key can go too).
    """
    positions: dict[str, int] = {}
    emptied: set[str] = set()
    for event in list(table):
        groups = table[event]
        if not isinstance(groups, list):
            if event in events:
                raise SettingsError(f"{path}: `hooks.{event}` is not a list; memdir did not change the file")
            continue
        kept: list[Any] = []
        for group in groups:
            commands = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(commands, list):
                kept.append(group)
                continue
            remaining = [c for c in commands if not (isinstance(c, dict) and is_ours(str(c.get("command", ""))))]
            if len(remaining) == len(commands):
                kept.append(group)
                continue
            positions.setdefault(event, len(kept))
            if remaining:  # someone else's hooks share the group: keep it, and them
                kept.append({**group, "hooks": remaining})
        if groups and not kept:
            emptied.add(event)
        table[event] = kept
    return positions, emptied


def merge_hooks(path: Path, data: dict[str, Any], hooks: list[HookCommand]) -> dict[str, Any]:
    """`data` with memdir's hooks in place: each once, in its own matcher group, others untouched.

    A memdir entry already there (perhaps with another command or timeout) is replaced where it
    stands, so installing twice, or again with other options, leaves one entry per event.
    """
    data = copy.deepcopy(data)
    table = _hooks_table(path, data)
    if table is None:
        table = data["hooks"] = {}
    wanted = {h.command for h in hooks}
    positions, emptied = _strip(
        path, table, lambda c: c in wanted or hook_event_of(c) is not None, [h.event for h in hooks]
    )
    for hook in hooks:
        groups = table.setdefault(hook.event, [])
        groups.insert(positions.get(hook.event, len(groups)), hook.group())
    for event in emptied - {h.event for h in hooks}:
        del table[event]
    return data


def remove_hooks(path: Path, data: dict[str, Any], extra_commands: Iterable[str] = ()) -> dict[str, Any]:
    """`data` without memdir's hooks, and without the containers that held only them."""
    data = copy.deepcopy(data)
    table = _hooks_table(path, data)
    if not table:
        return data
    extra = set(extra_commands)
    _, emptied = _strip(path, table, lambda c: c in extra or hook_event_of(c) is not None, ())
    for event in emptied:
        del table[event]
    if not table:
        del data["hooks"]
    return data


def _set_auto_memory(path: Path, data: dict[str, Any], folder: Path) -> dict[str, Any]:
    current = data.get(AUTO_MEMORY_KEY)
    if current is None:
        return {**data, AUTO_MEMORY_KEY: str(folder)}
    if not isinstance(current, str) or _same_folder(current, folder):
        return data
    raise SettingsConflict(
        f"{path} already sets {AUTO_MEMORY_KEY} to {current!r}, not {str(folder)!r}; memdir left it as is "
        "(change or remove it by hand, then run this again)"
    )


def _same_folder(value: str, folder: Path) -> bool:
    return Path(os.path.expanduser(value)).resolve() == folder.resolve()


def _unset_auto_memory(data: dict[str, Any], folder: Path) -> dict[str, Any]:
    current = data.get(AUTO_MEMORY_KEY)
    if isinstance(current, str) and _same_folder(current, folder):
        return {k: v for k, v in data.items() if k != AUTO_MEMORY_KEY}
    return data


def _change(
    path: Path, text: str | None, edit: Callable[[dict[str, Any]], dict[str, Any]], drop_empty: bool = False
) -> SettingsChange:
    settings = _parse_settings(path, text)
    data = edit(settings.data)
    if data == settings.data:
        return SettingsChange(path, text, text)  # nothing to do: not even the formatting changes
    if drop_empty and not data and text is not None:
        # memdir's entries were all it held: the file `install` created goes, not a `{}` left behind
        return SettingsChange(path, text, None)
    after = _dump(data, settings.indent, settings.final_newline)
    notes: tuple[str, ...] = ()
    if not settings.canonical and text is not None:
        notes = (
            f"{path}: its formatting changes (memdir writes JSON as Claude Code does, one value per line); "
            "keys, values and their order are kept",
        )
    return SettingsChange(path, text, after, notes)


def _apply(
    plans: dict[Path, list[Callable[[dict[str, Any]], dict[str, Any]]]], dry_run: bool, drop_empty: bool = False
) -> list[SettingsChange]:
    """Plan every file's edits, then write the files that change (unless `dry_run`); with
    `drop_empty`, a file the edits leave without a key is removed instead.

    All files are planned before any is written, so a refusal leaves every file as it was. Each
    file is read again just before it is replaced: if something else (Claude Code itself) wrote it
    meanwhile, the edit is planned again on what is there now instead of overwriting it.
    """

    def plan(path: Path, text: str | None) -> SettingsChange:
        edits = plans[path]

        def edit(data: dict[str, Any]) -> dict[str, Any]:
            for step in edits:
                data = step(data)
            return data

        return _change(path, text, edit, drop_empty)

    changes = [plan(path, _read(path)) for path in plans]
    if dry_run:
        return changes
    written = []
    for change in changes:
        if change.changed:
            current = _read(change.path)
            if current != change.before:
                change = plan(change.path, current)
            if change.after is not None and change.changed:
                change.path.parent.mkdir(parents=True, exist_ok=True)
                atomic_write(change.path, change.after)
            elif change.after is None and change.before is not None:
                change.path.unlink(missing_ok=True)
        written.append(change)
    return written


def install_hooks(
    scope: SettingsScope,
    project: Path,
    env: Mapping[str, str],
    *,
    command: str = DEFAULT_COMMAND,
    auto_memory_dir: Path | None = None,
    dry_run: bool = False,
    prompt_recall: bool = True,
) -> list[SettingsChange]:
    """Merge memdir's hooks into the scope's settings file (without `prompt_recall`, the
    UserPromptSubmit hook is left out, and taken out if it was there); with `auto_memory_dir`, also point
    Claude Code's own memory at that folder in the project's local settings (an absolute path is this
    machine's, and Claude Code reads the local file before the committed one: docs/claude-code.md).
    Raises SettingsError / SettingsConflict before writing anything."""
    hooks = memdir_hooks(command, prompt_recall=prompt_recall)
    target = settings_path(scope, project, env)
    plans: dict[Path, list[Callable[[dict[str, Any]], dict[str, Any]]]] = {
        target: [lambda data: merge_hooks(target, data, hooks)]
    }
    if auto_memory_dir is not None:
        local = settings_path(SettingsScope.local, project, env)
        plans.setdefault(local, []).append(lambda data: _set_auto_memory(local, data, auto_memory_dir))
    return _apply(plans, dry_run)


def uninstall_hooks(
    scope: SettingsScope,
    project: Path,
    env: Mapping[str, str],
    *,
    command: str = DEFAULT_COMMAND,
    auto_memory_dir: Path | None = None,
    dry_run: bool = False,
) -> list[SettingsChange]:
    """Remove memdir's hooks from the scope's settings file (and `autoMemoryDirectory` from local
    settings when it points at `auto_memory_dir`). A file that does not exist stays absent, and one
    that held nothing but memdir's entries (the file `install` created) is removed, not left `{}`."""
    extra = [h.command for h in memdir_hooks(command)]
    target = settings_path(scope, project, env)
    plans: dict[Path, list[Callable[[dict[str, Any]], dict[str, Any]]]] = {
        target: [lambda data: remove_hooks(target, data, extra)]
    }
    if auto_memory_dir is not None:
        local = settings_path(SettingsScope.local, project, env)
        plans.setdefault(local, []).append(lambda data: _unset_auto_memory(data, auto_memory_dir))
    changes = _apply(plans, dry_run, drop_empty=True)
    return [c for c in changes if c.before is not None or c.changed]

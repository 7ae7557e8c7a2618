"""Shell completion of values: memory names and lint rule codes (`memdir --install-completion`).

A completion runs at every Tab, wherever the shell is: outside a memory folder, in a folder with
a broken config, or with a `--dir` that does not exist it offers nothing, and never prints.
"""

from __future__ import annotations

import contextlib
import io
from typing import TYPE_CHECKING

import typer  # at run time: typer reads these functions' annotations to know what to pass

from memdir.cli.state import State

if TYPE_CHECKING:
    from memdir.folder import MemoryDir


def _folder(ctx: typer.Context) -> MemoryDir | None:
    """The memory folder the command line names so far (typer has not run the global options' callback)."""
    params = ctx.find_root().params
    try:
        with contextlib.redirect_stderr(io.StringIO()):  # a config warning must not land in the prompt
            return State(dir_option=params.get("dir"), quiet=True, no_cache=bool(params.get("no_cache"))).folder()
    except Exception:
        return None


def _matching(choices: list[tuple[str, str]], incomplete: str) -> list[tuple[str, str]]:
    return [(value, help) for value, help in choices if value.startswith(incomplete)]


def _names(ctx: typer.Context, incomplete: str, archived: bool) -> list[tuple[str, str]]:
    folder = _folder(ctx)
    if folder is None:
        return []
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            memories = list(folder.scan().memories)
            if archived:
                from memdir.lifecycle.prune import archive_scan

                memories += archive_scan(folder).memories
    except Exception:
        return []
    names = _matching(sorted({(m.name, m.description) for m in memories if m.name}), incomplete)
    return names or _matching(sorted({(m.path, m.description) for m in memories}), incomplete)


def memory_names(ctx: typer.Context, incomplete: str) -> list[tuple[str, str]]:
    """Names of the folder's memories (with the description as help where the shell shows it);
    their file paths when no name starts with what was typed."""
    return _names(ctx, incomplete, archived=False)


def memory_names_archived_too(ctx: typer.Context, incomplete: str) -> list[tuple[str, str]]:
    """The same, with the memories in .archive/: `history` finds those too."""
    return _names(ctx, incomplete, archived=True)


def quarantined_names(ctx: typer.Context, incomplete: str) -> list[tuple[str, str]]:
    """Names of the memories waiting in quarantine, for `review accept|reject`."""
    folder = _folder(ctx)
    if folder is None:
        return []
    try:
        from memdir.write.review import quarantined

        with contextlib.redirect_stderr(io.StringIO()):
            waiting = quarantined(folder)
    except Exception:
        return []
    return _matching(sorted((m.name, m.description) for m in waiting if m.name), incomplete)


def rule_codes(ctx: typer.Context, incomplete: str) -> list[tuple[str, str]]:
    """Rule codes (and ALL) for --select, --ignore and --extend-select; after a comma, the next one."""
    from memdir.lint import RULES

    done, _, last = incomplete.rpartition(",")
    prefix = f"{done}," if done else ""
    choices = [("ALL", "every rule"), *sorted((r.code, r.name) for r in RULES.values())]
    return [(prefix + code, help) for code, help in choices if code.startswith(last.upper())]


def rule_codes_and_names(ctx: typer.Context, incomplete: str) -> list[tuple[str, str]]:
    """A rule code or name, for `memdir rules CODE`."""
    from memdir.lint import RULES

    choices = sorted((r.code, r.name) for r in RULES.values()) + sorted((r.name, r.code) for r in RULES.values())
    return [(value, help) for value, help in choices if value.startswith((incomplete, incomplete.upper()))]

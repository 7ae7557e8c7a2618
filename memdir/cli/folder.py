"""`memdir init`, `where` and `index`: create the memory folder, say which one is in use, index it."""

from __future__ import annotations

import os
from typing import Annotated, Any

import typer

from memdir.cli.index import run_index
from memdir.cli.state import OutputFormat, State
from memdir.cli.typer_app import FormatOption, app, state
from memdir.core.candidates import Candidate, MemoryCount, Survey, survey
from memdir.core.model import plural


def folder_survey(st: State) -> Survey:
    """Every folder memdir considered from here, as `memdir where` shows them."""
    return survey(st.dir_option, st.cwd, os.environ, st.config)


def elsewhere_note(found: Survey) -> str | None:
    """One line for when the folder in use is not the one Claude Code loads and another folder holds
    memories: where they are, and the command that brings them over."""
    other = found.elsewhere()
    if other is None:
        return None
    what = "the folder Claude Code loads" if other.claude_loads else other.reason
    return (
        f"{plural(other.count.memories, 'memory', 'memories')} in {other.path} ({what}), not in the folder "
        f"in use; bring them over with `memdir import {other.path}`"
    )


@app.command()
def init(ctx: typer.Context, format: FormatOption = OutputFormat.text) -> None:
    """Create the memory folder, an empty MEMORY.md and .memdir/ (tool state, ignored by git)."""
    st = state(ctx)
    folder = st.folder(must_exist=False)
    created = folder.init()
    note = elsewhere_note(folder_survey(st))
    if format is OutputFormat.json:
        st.write_json({"path": str(folder.root), "created": created, "reason": st.location.reason})
    else:
        where = st.show_path(folder.root)
        if created:
            st.say(f"Initialised memory folder {where} ({st.location.reason}).")
        else:
            st.say(f"{where} is already a memory folder; nothing to do.")
    if note is not None:
        st.warn(note)
    if format is OutputFormat.json:
        return
    st.say(
        "Next steps:\n"
        '  memdir add feedback lint-before-commit -d "Run the linter before every commit" '
        '--why "CI was red for a day" --how "Before any git commit"\n'
        "  memdir index    # regenerate MEMORY.md (e.g. in a session-start hook)\n"
        "  memdir lint     # check the folder (e.g. in CI)"
    )


@app.command()
def where(ctx: typer.Context, format: FormatOption = OutputFormat.text) -> None:
    """Print the memory folder in use and why; list every folder considered, with its memories.

    The folders: --dir, MEMDIR_DIR, `dir` in the config, the repository's .claude/memory/, and
    Claude Code's auto-memory folder for the project (with autoMemoryDirectory from its settings),
    each with how many memory files it holds, which one is in use and which one Claude Code loads.
    """
    st = state(ctx)
    found = folder_survey(st)
    location = found.location
    exists = location.path.is_dir()
    if format is OutputFormat.json:
        claude = found.claude
        payload = {
            "path": str(location.path),
            "source": location.source,
            "reason": location.reason,
            "exists": exists,
            "claude_code": {
                "path": str(found.claude_folder) if found.claude_folder is not None else None,
                "folder": str(claude.folder),
                "reason": claude.reason,
                "off": claude.off,
            },
            "candidates": [_candidate_json(c) for c in found.candidates],
        }
        st.write_json(payload)
        return
    st.write(f"{location.path}\n")
    st.say(f"  in use: {location.reason}" + ("" if exists else "; it does not exist yet (`memdir init` creates it)"))
    claude = found.claude
    if claude.off is not None:
        st.say(f"  Claude Code loads no memory folder: {claude.off}")
    else:
        st.say(f"  Claude Code loads {claude.folder}")
    st.say("  folders considered:")
    for candidate in found.candidates:
        roles = [
            role for role, on in (("in use", candidate.in_use), ("Claude Code loads it", candidate.claude_loads)) if on
        ]
        st.say(f"  {'*' if candidate.in_use else ' '} {candidate.path}")
        st.say(f"      {'; '.join([count_text(candidate.count), *roles])}: {candidate.reason}")
    note = elsewhere_note(found)
    if note is not None:
        st.warn(note)


def count_text(count: MemoryCount) -> str:
    """'3 memories', 'no folder', 'at least 19,000 memories', 'cannot be listed (...)'."""
    if count.problem is not None and count.memories == 0:
        return count.problem
    if not count.exists:
        return "no folder"
    memories = plural(count.memories, "memory", "memories")
    return memories if count.complete else f"at least {memories} (counting stopped)"


def _candidate_json(candidate: Candidate) -> dict[str, Any]:
    return {
        "path": str(candidate.path),
        "source": candidate.source,
        "reason": candidate.reason,
        "exists": candidate.count.exists,
        "memories": candidate.count.memories if candidate.count.problem is None or candidate.count.memories else None,
        "counted_all": candidate.count.complete,
        "problem": candidate.count.problem,
        "in_use": candidate.in_use,
        "claude_code_loads": candidate.claude_loads,
    }


@app.command()
def index(
    ctx: typer.Context,
    check: Annotated[
        bool, typer.Option("--check", help="Exit 1 if MEMORY.md is not what index would write; write nothing.")
    ] = False,
    stdout: Annotated[bool, typer.Option("--stdout", help="Print the index instead of writing it.")] = False,
    drop_missing: Annotated[
        bool, typer.Option("--drop-missing", help="Also remove list entries whose linked file is gone.")
    ] = False,
    format: FormatOption = OutputFormat.text,
) -> None:
    """Regenerate MEMORY.md from the memory files, within 200 lines and 25,000 bytes.

    Hand-written lines (headings, prose, notes) are kept in place. When not everything fits,
    the least valuable entries are left out (lowest importance, then oldest) and listed.
    """
    code = run_index(state(ctx), check=check, stdout=stdout, drop_missing=drop_missing, format=format)
    if code:
        raise typer.Exit(code)

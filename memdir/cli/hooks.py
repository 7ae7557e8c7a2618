"""`memdir hooks install/uninstall` (Claude Code's settings) and `memdir hook
session-start/user-prompt-submit/stop` (what Claude Code runs). The hook commands usually start
through cli/fast.py without typer; the typer commands here give them `--help` and run the same
`run_hook`."""

from __future__ import annotations

import difflib
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer

from memdir.cli.errors import REFUSED
from memdir.cli.fast import run_hook
from memdir.cli.folder import elsewhere_note, folder_survey
from memdir.cli.state import OutputFormat, State, fail
from memdir.cli.typer_app import FormatOption, app, state
from memdir.core.errors import FolderNotFound
from memdir.integrations.claude_runtime import SESSION_START, STOP, USER_PROMPT_SUBMIT
from memdir.integrations.claude_settings import (
    DEFAULT_COMMAND,
    SettingsChange,
    SettingsConflict,
    SettingsScope,
    install_hooks,
    installed_plugins,
    memdir_hooks,
    project_root,
    uninstall_hooks,
)
from memdir.integrations.gitignore import IgnoreOutcome, keep_out_of_git

hooks_app = typer.Typer(
    help="Install memdir's Claude Code hooks: `hooks install` merges them into a settings file, "
    "`hooks uninstall` takes them out. See docs/claude-code.md.",
    no_args_is_help=True,
)
hook_app = typer.Typer(
    help="What Claude Code runs: `hook session-start` re-indexes the memory folder and gives the session "
    "its index; `hook user-prompt-submit` adds the memories recalled for each prompt; `hook stop` stages "
    "the transcript for extraction. All read the hook's JSON on stdin and always exit 0.",
    no_args_is_help=True,
)
app.add_typer(hooks_app, name="hooks")
app.add_typer(hook_app, name="hook")

ScopeOption = Annotated[
    SettingsScope,
    typer.Option(
        "--scope",
        help="Which settings file: project (.claude/settings.json, committed), local "
        "(.claude/settings.local.json, this clone) or user (~/.claude/settings.json, every project).",
        case_sensitive=False,
    ),
]
DryRunOption = Annotated[bool, typer.Option("--dry-run", help="Print the change as a diff; write nothing.")]
CommandOption = Annotated[
    str,
    typer.Option(
        "--command",
        help="How the hook's shell reaches memdir, e.g. an absolute path or `uvx memdir`; "
        "memdir appends `hook session-start` (or `user-prompt-submit`, `stop`) to it, after a space.",
    ),
]
ProjectOption = Annotated[
    Path | None,
    typer.Option(
        "--project",
        help="The project whose .claude/ to edit (default: the repository root, else the working directory).",
        show_default=False,
    ),
]


def _project(st: State, project: Path | None) -> Path:
    return (st.cwd / project).resolve() if project is not None else project_root(st.cwd)


def _auto_memory_folder(st: State) -> Path:
    """The folder `--auto-memory-dir` points Claude Code at: the one memdir resolves, which must be
    a folder of the repository's (or one configured), not Claude Code's own default."""
    where = st.location
    if where.source == "claude":
        fail(
            f"the memory folder is Claude Code's own ({where.path}), so there is nothing to point it at; "
            "create the repository's folder first (`memdir --dir .claude/memory init`) or pass --dir"
        )
    if not where.path.is_dir():
        raise FolderNotFound.at(where.path, "create it with `memdir init`", where.reason)
    return where.path.resolve()


def _report(
    st: State,
    changes: list[SettingsChange],
    dry_run: bool,
    nothing: str,
    format: OutputFormat,
    ignored: Sequence[IgnoreOutcome] = (),
) -> None:
    if format is OutputFormat.json:
        payload: dict[str, object] = {
            "dry_run": dry_run,
            "changes": [
                {"path": str(c.path), "changed": c.changed, "existed": c.before is not None,
                 "exists": c.after is not None, "notes": list(c.notes)}
                for c in changes
            ],
        }  # fmt: skip
        if ignored:
            payload["git_ignore"] = [
                {"path": str(i.path), "status": i.status, "exclude": str(i.exclude) if i.exclude else None}
                for i in ignored
            ]
        st.write_json(payload)
        return
    for change in changes:
        shown = st.show_path(change.path)
        for note in change.notes:
            st.warn(note)
        if not change.changed:
            st.say(f"{shown}: {nothing}")
        elif dry_run:
            before = (change.before or "").splitlines(keepends=True)
            after = (change.after or "").splitlines(keepends=True)
            label = shown if change.before is not None else "/dev/null"
            st.write(
                "".join(difflib.unified_diff(before, after, label, shown if change.after is not None else "/dev/null"))
            )
            st.say(f"{shown}: would be {_done(change, 'written')} (dry run)")
        else:
            st.say(f"{shown}: {_done(change, 'updated')}")
    for outcome in ignored:
        message = outcome.message()
        if message is not None:
            (st.warn if outcome.status in ("tracked", "failed") else st.say)(message)


def _done(change: SettingsChange, edited: str) -> str:
    if change.after is None:
        return "removed (memdir's entries were all it held)"
    return edited if change.before is not None else "created"


def _check_program(st: State, command: str) -> None:
    """Warn when the hook's first word would not run here: the commonest reason a hook "does nothing"."""
    words = command.split()
    program = words[0] if words else DEFAULT_COMMAND
    if "$" in program or "~" in program:
        return  # expanded by the hook's shell, not here
    if os.sep in program:
        if not os.access(program, os.X_OK):
            st.warn(f"`{program}` is not an executable file here; the hooks will fail until it is")
    elif shutil.which(program) is None:
        st.warn(
            f"`{program}` is not on PATH here; Claude Code runs hooks through a shell with the PATH it was "
            "started with, so pass --command with an absolute path (or `uvx memdir`) if they cannot find it"
        )


@hooks_app.command()
def install(
    ctx: typer.Context,
    scope: ScopeOption = SettingsScope.local,
    dry_run: DryRunOption = False,
    auto_memory_dir: Annotated[
        bool,
        typer.Option(
            "--auto-memory-dir",
            help="Also set autoMemoryDirectory in .claude/settings.local.json to the memory folder, so "
            "Claude Code's own memory writes land there.",
        ),
    ] = False,
    command: CommandOption = DEFAULT_COMMAND,
    project: ProjectOption = None,
    prompt_recall: Annotated[
        bool,
        typer.Option(
            "--prompt-recall/--no-prompt-recall",
            help="Also install the UserPromptSubmit hook, which adds the memories recalled for each prompt "
            "(nothing when none passes recall's gate). --no-prompt-recall leaves it out, or takes it out.",
        ),
    ] = True,
    format: FormatOption = OutputFormat.text,
) -> None:
    """Merge memdir's SessionStart, UserPromptSubmit and Stop hooks into a Claude Code settings file.

    Everything else in the file is kept (other keys, other hooks, key order); a file that is not
    valid JSON is refused, never overwritten. Running it again changes nothing; a memdir hook
    already there is replaced where it stands.
    """
    st = state(ctx)
    folder = _auto_memory_folder(st) if auto_memory_dir else None
    # Before the change: where memories are now, for the note below (for this directory's project).
    here = project is None or _project(st, project) == project_root(st.cwd)
    note = elsewhere_note(folder_survey(st)) if here else None
    try:
        changes = install_hooks(
            scope,
            _project(st, project),
            os.environ,
            command=command,
            auto_memory_dir=folder,
            dry_run=dry_run,
            prompt_recall=prompt_recall,
        )
    except SettingsConflict as exc:
        fail(str(exc), REFUSED)
    ignored = [keep_out_of_git(c.path, dry_run=dry_run) for c in changes if _local_written(c)]
    _report(st, changes, dry_run, "already up to date; nothing changed", format, ignored)
    _check_program(st, command)
    plugins = installed_plugins(os.environ, _project(st, project))
    if plugins:
        st.warn(
            f"the memdir plugin is installed ({', '.join(plugins)}): Claude Code runs its hooks beside these, so "
            "every session would get the index and each recall twice; keep one (`memdir hooks uninstall` or "
            "`/plugin uninstall`)"
        )
    if not dry_run and any(c.changed for c in changes) and format is OutputFormat.text:
        hooks = ", ".join(f"{h.event}: `{h.command}`" for h in memdir_hooks(command, prompt_recall=prompt_recall))
        st.say(f"Claude Code will run {hooks}; new sessions pick them up.")
        if folder is not None:
            st.say(f"Claude Code's own memory goes to {folder} (autoMemoryDirectory, local settings).")
    if note is not None:
        st.warn(note)


def _local_written(change: SettingsChange) -> bool:
    """A `.claude/settings.local.json` that install writes (or would): git must leave it out."""
    return change.path.name == "settings.local.json" and change.after is not None and change.changed


@hooks_app.command()
def uninstall(
    ctx: typer.Context,
    scope: ScopeOption = SettingsScope.local,
    dry_run: DryRunOption = False,
    auto_memory_dir: Annotated[
        bool,
        typer.Option(
            "--auto-memory-dir",
            help="Also remove autoMemoryDirectory from .claude/settings.local.json when it points at the memory "
            "folder.",
        ),
    ] = False,
    command: CommandOption = DEFAULT_COMMAND,
    project: ProjectOption = None,
    format: FormatOption = OutputFormat.text,
) -> None:
    """Remove memdir's hooks from a Claude Code settings file, and only those.

    Matcher groups, event lists and the `hooks` object are removed when memdir's entries were all
    they held; everything else stays as it was.
    """
    st = state(ctx)
    folder = st.location.path.resolve() if auto_memory_dir else None
    changes = uninstall_hooks(
        scope, _project(st, project), os.environ, command=command, auto_memory_dir=folder, dry_run=dry_run
    )
    if not changes and format is OutputFormat.text:
        st.say("No settings file there; nothing to remove.")
    _report(st, changes, dry_run, "nothing of memdir's there; nothing changed", format)


@hook_app.command("session-start")
def session_start(ctx: typer.Context) -> None:
    """SessionStart hook: re-index the memory folder, print the index as the session's context.

    Reads Claude Code's hook JSON on stdin and resolves the folder from its `cwd`. Prints
    {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": ...}}, or nothing
    when there is no folder. Always exits 0; problems are one line each on stderr.
    """
    raise typer.Exit(run_hook(SESSION_START, state(ctx)))


@hook_app.command("user-prompt-submit")
def user_prompt_submit(ctx: typer.Context) -> None:
    """UserPromptSubmit hook: add the memories recalled for the prompt to the model's context.

    Reads Claude Code's hook JSON on stdin (its `prompt` is the query) and runs `memdir recall` on
    it. Prints {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": ...}}
    with the chosen memories in full, or nothing when none passes recall's gate, when there is no
    folder or with `context.recall-on-prompt = false`. Always exits 0; problems are one line each on
    stderr.
    """
    raise typer.Exit(run_hook(USER_PROMPT_SUBMIT, state(ctx)))


@hook_app.command("stop")
def stop(ctx: typer.Context) -> None:
    """Stop hook: stage the session's transcript and start a detached `memdir extract` on it.

    The extraction runs in the background (with ANTHROPIC_API_KEY set and `extract.on-stop` on) and
    logs to .memdir/; the hook returns at once and never prints into the model's context.

    One line per session (session_id, transcript_path, cwd, recorded_at) in
    .memdir/pending-extractions.jsonl, at most 200; an extraction done with a transcript takes its
    line away. When nothing extracts it, the first session staged prints {"systemMessage": ...} for
    Claude Code to show the user, once, naming `memdir extract --pending`. Always exits 0; problems
    are one line each on stderr.
    """
    raise typer.Exit(run_hook(STOP, state(ctx)))

"""`memdir extract` and `memdir review`: the write path from a session, and its quarantine."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from memdir.cli.errors import REFUSED, USAGE
from memdir.cli.memories import report_write
from memdir.cli.state import OutputFormat, State, fail
from memdir.cli.typer_app import FormatOption, QuarantinedNames, app, state
from memdir.core.model import plural
from memdir.folder import IndexWrite, MemoryDir
from memdir.write.transcripts import MAX_TRANSCRIPT_BYTES

review_app = typer.Typer(
    help="List the quarantined memories (the default), or accept or reject one. "
    "Quarantined memories (`source: tool`, or instruction-like text) are never indexed until accepted.",
    no_args_is_help=False,
    invoke_without_command=True,
)
app.add_typer(review_app, name="review")


def _interactive() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def _hook_request(st: State) -> tuple[MemoryDir, Path]:
    """The folder and transcript named by Stop-hook JSON on stdin."""
    from memdir.cli.fast import read_stdin
    from memdir.integrations.claude_runtime import HOOK_INPUT_LIMIT, hook_folder, parse_hook_input

    text = read_stdin(HOOK_INPUT_LIMIT)
    if text is None:
        fail(f"--hook: the hook input is over {HOOK_INPUT_LIMIT:,} bytes")
    payload, note = parse_hook_input(text)
    if note is not None:
        fail(f"--hook: {note.split(';')[0]}")
    transcript = payload.get("transcript_path")
    if not isinstance(transcript, str) or not transcript:
        fail("--hook: the hook input has no transcript_path")
    folder, notes = hook_folder(payload, dir_option=st.dir_option, env=os.environ, cwd=st.cwd, today=st.today)
    if folder is None:
        fail("--hook: " + ("; ".join(notes) or "no memory folder for this session"))
    return folder, Path(transcript)


@app.command()
def extract(
    ctx: typer.Context,
    transcript: Annotated[
        Path | None, typer.Argument(help="A Claude Code transcript (.jsonl).", show_default=False)
    ] = None,
    hook: Annotated[
        bool, typer.Option("--hook", help="Read Claude Code's Stop-hook JSON on stdin; use its transcript_path.")
    ] = False,
    pending: Annotated[
        bool,
        typer.Option(
            "--pending",
            help="Extract every session the Stop hook staged (.memdir/pending-extractions.jsonl) whose transcript "
            "is still there, and take what is done off the list.",
        ),
    ] = False,
    messages: Annotated[
        Path | None,
        typer.Option("--messages", help="A JSON list of {role, content} messages, from another harness."),
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the plan; write nothing.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Write without asking, even on a terminal.")] = False,
    model: Annotated[str | None, typer.Option("--model", help="The model (default: `extract.model`).")] = None,
    every: Annotated[
        int | None, typer.Option("--every", min=1, help="Extract only once N new user turns have piled up.")
    ] = None,
    format: FormatOption = OutputFormat.text,
) -> None:
    """Extract memories from a session's new messages through the Anthropic API.

    Only messages after the session's cursor are sent. Every candidate goes through the write path's
    screen (secrets, quarantine, duplicates, same-topic judge); everything is written at once or not
    at all, and every decision is logged to .memdir/log.jsonl. Needs ANTHROPIC_API_KEY. On a
    terminal it asks before writing unless --yes.
    """
    from memdir.write.extract import AuthFailed, ExtractError, Extractor, NoApiKey

    st = state(ctx)
    options = (("TRANSCRIPT", transcript), ("--hook", hook), ("--messages", messages), ("--pending", pending))
    given = [name for name, value in options if value]
    if len(given) != 1:
        wanted = "give one of TRANSCRIPT, --messages FILE, --hook or --pending"
        fail(wanted + (f", not {' and '.join(given)}" if given else ""))
    if pending:
        _extract_pending(st, model=model, every=every, dry_run=dry_run, yes=yes, format=format)
        return
    if hook:
        folder, path = _hook_request(st)
        kind = "transcript"
    else:
        folder = st.folder()
        given_path, kind = (messages, "messages") if messages is not None else (transcript, "transcript")
        assert given_path is not None
        path = given_path if given_path.is_absolute() else st.cwd / given_path
    extractor = Extractor(folder, model=model, every=every)
    confirm = _confirm(st, yes=yes, dry_run=dry_run)
    try:
        results = extractor.run(extractor.request(path, kind), dry_run=dry_run, confirm=confirm)
    except (NoApiKey, AuthFailed) as exc:
        fail(str(exc), USAGE)
    except ExtractError as exc:
        fail(str(exc), REFUSED)
    if format is OutputFormat.json:
        st.write_json({"runs": [result_json(r) for r in results]})
        return
    _print_results(st, results, dry_run=dry_run, asked=confirm is not None)


def _confirm(st: State, *, yes: bool, dry_run: bool) -> Any:
    """The question asked before writing, on a terminal without --yes; None: write without asking."""
    if yes or dry_run or not _interactive():
        return None

    def confirm(plan: Any) -> bool:
        print_plan(st, plan)
        return typer.confirm("Write these memories?", default=False, err=True)

    return confirm


def _extract_pending(
    st: State, *, model: str | None, every: int | None, dry_run: bool, yes: bool, format: OutputFormat
) -> None:
    """`extract --pending`: every staged session, each as `extract TRANSCRIPT` would do it."""
    from memdir.write.extract import AuthFailed, Extractor, NoApiKey
    from memdir.write.pending import pending_path, read_pending

    folder = st.folder()
    extractor = Extractor(folder, model=model, every=every)
    confirm = _confirm(st, yes=yes, dry_run=dry_run)
    try:
        results, gone = extractor.run_pending(dry_run=dry_run, confirm=confirm)
    except (NoApiKey, AuthFailed) as exc:
        fail(str(exc), USAGE)
    left = len(read_pending(pending_path(folder.root)))
    if format is OutputFormat.json:
        runs = [result_json(r) for r in results]
        st.write_json({"runs": runs, "gone": [str(e.get("transcript_path")) for e in gone], "still_pending": left})
    else:
        if not results and not gone:
            st.say("No staged sessions to extract.")
        for entry in gone:
            st.warn(f"{entry.get('transcript_path')}: the transcript is gone; taken off the list")
        _print_results(st, results, dry_run=dry_run, asked=confirm is not None, each=True)
        if results or gone:
            st.say(f"{plural(left, 'session', 'sessions')} still staged" + (" (dry run)" if dry_run else ""))
    if any(r.status == "failed" for r in results):
        raise typer.Exit(REFUSED)


def _print_results(st: State, results: list[Any], *, dry_run: bool, asked: bool, each: bool = False) -> None:
    for result in results:
        if each:
            st.say(f"{result.request.path}:")
        if result.plan is not None and result.plan.session.broken_lines:
            st.warn(f"{result.plan.session.path}: {result.plan.session.broken_lines} broken lines skipped")
        if result.plan is not None and result.plan.session.skipped_bytes:
            st.warn(
                f"{result.plan.session.path}: over {MAX_TRANSCRIPT_BYTES:,} bytes; read from byte "
                f"{result.plan.session.skipped_bytes:,} on, its newest whole lines"
            )
        if result.plan is not None and (dry_run or not asked) and result.plan.verdicts:
            print_plan(st, result.plan)
        prefix = "dry run, nothing written: " if result.status == "dry-run" else ""
        st.say(prefix + result.summary)
        if result.status == "failed":
            st.error(result.summary)


def print_plan(st: State, plan: Any) -> None:
    from memdir.core.gauntlet import describe

    for verdict in plan.verdicts:
        st.say("  " + describe(verdict))


def result_json(result: Any) -> dict[str, Any]:
    from memdir.core.gauntlet import verdict_entry

    plan = result.plan
    return {
        "path": str(result.request.path),
        "status": result.status,
        "summary": result.summary,
        "session": plan.session.key if plan else None,
        "new_messages": plan.new_messages if plan else 0,
        "broken_lines": plan.session.broken_lines if plan else 0,
        "skipped_bytes": plan.session.skipped_bytes if plan else 0,
        "decisions": [verdict_entry(v) for v in plan.verdicts] if plan else [],
        "judged": plan.judged if plan else [],
        "written": result.written,
        "error": result.error,
    }


@review_app.callback()
def review(ctx: typer.Context, format: FormatOption = OutputFormat.text) -> None:
    """The quarantine: memories from tools or with instruction-like text, waiting for a person."""
    if ctx.invoked_subcommand is not None:
        return
    from memdir.text.sensitive import find_instructions
    from memdir.write.review import quarantined, would_supersede

    st = state(ctx)
    folder = st.folder()
    waiting = quarantined(folder)
    rows: list[dict[str, Any]] = []
    for memory in waiting:
        found = find_instructions(memory.doc.text)
        rows.append(
            {
                "path": memory.path,
                "name": memory.name,
                "type": memory.raw_type,
                "description": memory.description,
                "source": str(memory.fields.get("source") or "") or None,
                "instruction_like": [hit.masked for hit in found],
                "would_supersede": would_supersede(memory),
            }
        )
    if format is OutputFormat.json:
        st.write_json({"folder": str(folder.root), "quarantined": rows})
        return
    if not rows:
        st.say("Nothing in quarantine.")
        return
    for row in rows:
        flags = [f"source: {row['source']}"] if row["source"] else []
        flags += [f"instruction-like: {phrase!r}" for phrase in row["instruction_like"][:2]]
        flags += [f"accepting it supersedes {row['would_supersede']}"] if row["would_supersede"] else []
        st.write(f"{row['path']}  {row['description']}" + (f"  [{'; '.join(flags)}]" if flags else "") + "\n")
    st.say(f"{len(rows)} quarantined; `memdir show NAME` to read one, `memdir review accept|reject NAME` to decide")


@review_app.command("accept")
def accept(
    ctx: typer.Context,
    names: QuarantinedNames = None,
    all_: Annotated[bool, typer.Option("--all", help="Accept every quarantined memory.")] = False,
    format: FormatOption = OutputFormat.text,
) -> None:
    """Let quarantined memories in: their `status` is removed and they are indexed.

    All of them are checked before any is written; one that cannot be accepted leaves the quarantine
    as it was.
    """
    from memdir.write.review import accept_all, accept_many

    st = state(ctx)
    names = _names_or_all(names, all_)
    folder = st.folder()
    accepted = accept_all(folder) if all_ else accept_many(folder, names)
    if not accepted:
        _nothing_in_quarantine(st, "accepted", format)
        return
    rows = [(memory.path, memory.fields.get("supersedes") or None) for memory, _ in accepted]
    if format is OutputFormat.text:
        for path, replaced in rows:
            superseding = f", and {replaced} is superseded by it" if replaced else ""
            st.say(f"Accepted {path}; it is indexed now{superseding}")
    payload = {"accepted": [{"path": path, "superseded": replaced} for path, replaced in rows]}
    _after_writes(st, [write for _, write in accepted], "accepted", payload if format is OutputFormat.json else None)


@review_app.command("reject")
def reject(
    ctx: typer.Context,
    names: QuarantinedNames = None,
    all_: Annotated[bool, typer.Option("--all", help="Reject every quarantined memory.")] = False,
    purge: Annotated[bool, typer.Option("--purge", help="Delete the files instead of archiving them.")] = False,
    format: FormatOption = OutputFormat.text,
) -> None:
    """Throw quarantined memories out: into .archive/ (or deleted with --purge).

    Each rejection is remembered (.memdir/rejected.jsonl), so extraction does not quarantine the
    same memory again.
    """
    from memdir.write.review import reject_all, reject_many

    st = state(ctx)
    names = _names_or_all(names, all_)
    folder = st.folder()
    rejected = reject_all(folder, purge=purge) if all_ else reject_many(folder, names, purge=purge)
    if not rejected:
        _nothing_in_quarantine(st, "rejected", format)
        return
    if format is OutputFormat.text:
        for path, destination, _ in rejected:
            st.say(f"Rejected {path}" + (f" -> {st.show_path(destination)}" if destination else " (deleted)"))
    payload = {"rejected": [{"path": path, "archived_to": str(dest) if dest else None} for path, dest, _ in rejected]}
    _after_writes(st, [write for _, _, write in rejected], "rejected", payload if format is OutputFormat.json else None)


def _names_or_all(names: list[str] | None, all_: bool) -> list[str]:
    if all_ and names:
        fail("give NAME... or --all, not both")
    if not all_ and not names:
        fail("give the NAME of a quarantined memory, or --all")
    return names or []


def _nothing_in_quarantine(st: State, key: str, format: OutputFormat) -> None:
    if format is OutputFormat.json:
        st.write_json({key: []})
    else:
        st.say("Nothing in quarantine.")


def _after_writes(st: State, writes: list[IndexWrite], done: str, payload: dict[str, Any] | None) -> None:
    """What the last index write says (or the first that was refused), after several review writes."""
    write = next((w for w in writes if w.result.refused is not None), writes[-1])
    report_write(st, write, f"{plural(len(writes), 'memory', 'memories')} {done}", payload)

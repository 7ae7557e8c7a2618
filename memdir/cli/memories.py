"""`memdir add/list/show/edit/rm`: write, read and retire single memories."""

from __future__ import annotations

import datetime as dt
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from memdir.cli.complete import memory_names
from memdir.cli.editor import edit_text
from memdir.cli.errors import REFUSED, WRITTEN_NOT_INDEXED
from memdir.cli.index import index_summary, report_index
from memdir.cli.state import OutputFormat, State, fail
from memdir.cli.typer_app import FormatOption, MemoryName, app, state
from memdir.core.errors import InvalidMemory, MemoryChanged
from memdir.core.gauntlet import SOURCES, Action, Candidate, Verdict, WriteRefused, screened_text
from memdir.core.model import (
    FrontmatterError,
    MemoryType,
    NewMemory,
    absolutize_text,
    parse_document,
    plural,
)
from memdir.core.reports import memory_list
from memdir.core.templates import editor_text, unfilled_hints
from memdir.folder import IndexWrite, MemoryDir
from memdir.text.outward import as_written, dumps

if TYPE_CHECKING:
    from memdir.text.dates import DateSpan


def _interactive() -> bool:
    """Whether a person is at a terminal, so $EDITOR may be opened."""
    return sys.stdin.isatty() and sys.stdout.isatty()


def _parse_day(value: str, option: str, today: dt.date) -> dt.date:
    from memdir.text.dates import parse_day  # a large grammar; only `add` needs it

    day = parse_day(value, today)
    if day is not None:
        return day
    fail(f"{option} must be a date (YYYY-MM-DD) or a phrase like 'next month', not {value!r}")


def _ttl_expires(ttl: str | None, day: dt.date) -> dt.date | None:
    from memdir.lifecycle.prune import expires_after  # raises InvalidTtl, a one-line usage error

    return expires_after(ttl, day) if ttl is not None else None


def _report_dates(st: State, conversions: list[tuple[str, DateSpan]]) -> None:
    for field_name, span in conversions:
        st.say(f"{field_name}: '{span.phrase}' -> {span.resolved.isoformat()}")


def report_write(st: State, write: IndexWrite, done: str, json: dict[str, Any] | None = None) -> None:
    """Report the re-index after a write that `done` describes ("user_b.md is written"). When
    MEMORY.md could not take it, say both and exit WRITTEN_NOT_INDEXED: the file changed, the
    index did not, and `memdir index` catches up once MEMORY.md can be rewritten.

    With `json` (the command's --format json), that payload is printed with the index run under
    "index" instead; the refusal is in `index.refused` and on stderr, and the exit code is the same."""
    if json is not None:
        st.write_json({**json, "index": index_summary(write.result)})
        if write.result.refused is not None:
            st.error(f"{done}, but MEMORY.md is not updated: {write.result.refused}")
    else:
        report_index(st, write, "updated" if write.changed else "unchanged", done)
    if write.result.refused is not None:
        raise typer.Exit(WRITTEN_NOT_INDEXED)


def _json_if(format: OutputFormat, payload: dict[str, Any]) -> dict[str, Any] | None:
    return payload if format is OutputFormat.json else None


@app.command()
def add(
    ctx: typer.Context,
    type: Annotated[
        MemoryType,
        typer.Argument(help="user, feedback, project or reference.", case_sensitive=False, show_default=False),
    ],
    name: Annotated[str, typer.Argument(help="Short name; the file becomes `<type>_<slug>.md`.", show_default=False)],
    description: Annotated[
        str | None, typer.Option("--description", "-d", help="The one-line index hook (at most 150 characters).")
    ] = None,
    why: Annotated[
        str | None, typer.Option("--why", help="Why it holds; feedback and project memories should say it.")
    ] = None,
    how: Annotated[
        str | None,
        typer.Option("--how", help="When and where it applies; feedback and project memories should say it."),
    ] = None,
    body: Annotated[str | None, typer.Option("--body", help="The memory's text; '-' reads standard input.")] = None,
    importance: Annotated[
        float | None,
        typer.Option("--importance", min=0.0, max=1.0, help="0..1; the index leaves out low values first."),
    ] = None,
    expires: Annotated[
        str | None, typer.Option("--expires", help="YYYY-MM-DD or a phrase like 'next month'; never indexed after.")
    ] = None,
    ttl: Annotated[
        str | None,
        typer.Option("--ttl", help="Time to live, e.g. 14d, 2w, 6m, 1y: becomes `expires`, counted from --today."),
    ] = None,
    today: Annotated[
        str | None,
        typer.Option(
            "--today",
            help="When the text was written (YYYY-MM-DD or a phrase like 'yesterday'): "
            "the anchor for its relative dates.",
        ),
    ] = None,
    source: Annotated[
        str | None,
        typer.Option(
            "--source",
            help="Where the fact came from: user, agent or tool. `tool` (a file, page or tool output) is "
            "quarantined until `memdir review accept`.",
        ),
    ] = None,
    supersedes: Annotated[
        str | None,
        typer.Option(
            "--supersedes",
            help="A memory this one replaces: it is marked superseded and leaves the index.",
            autocompletion=memory_names,
        ),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Add it even when it says the same as a memory.")] = False,
    no_dates: Annotated[
        bool,
        typer.Option(
            "--no-dates",
            help="Keep every text as typed: no relative date becomes an ISO date. --today and --expires "
            "still take phrases.",
        ),
    ] = False,
    format: FormatOption = OutputFormat.text,
) -> None:
    """Write a new memory from its type's template and re-index.

    Relative dates in every text ("tomorrow", "next Thursday") become ISO dates counted from
    --today, unless --no-dates; code, identifiers, calls and quoted labels (`tomorrow()`,
    next_week, the "Next Week" button) are left as they are. With no --body/--why/--how on a
    terminal, $EDITOR opens on the template.
    The write path's screen runs first (docs/extract.md): secrets are redacted, `--source tool` and
    instruction-like text are quarantined, a near-duplicate is skipped and a memory on the same
    topic is named.
    """
    st = state(ctx)
    folder = st.folder()
    if source is not None and source not in SOURCES:
        fail(f"--source must be one of {', '.join(SOURCES)}, not {source!r}")
    if ttl is not None and expires is not None:
        fail("give --expires or --ttl, not both")
    day = _parse_day(today, "--today", st.today) if today else st.today
    if body == "-":
        try:
            body = sys.stdin.buffer.read().decode("utf-8")
        except UnicodeDecodeError as exc:
            fail(f"standard input is not valid UTF-8 (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})")
    new = NewMemory(
        type=type,
        name=name.strip(),
        description=description or "",
        body=body or "",
        why=why or "",
        how=how or "",
        created=day,
        importance=importance,
        expires=_parse_day(expires, "--expires", day) if expires else _ttl_expires(ttl, day),
    )
    if body is None and why is None and how is None and _interactive() and format is OutputFormat.text:
        _add_in_editor(st, folder, new, None if no_dates else day, Candidate(new, source), supersedes, force)
        return
    if not new.description.strip():
        fail("--description/-d is required: it is the line the index shows")
    if not no_dates:
        _report_dates(st, new.absolutize_dates())
    if not new.body.strip():
        new.body = new.description
    new.validate()
    verdict = _screened(st, folder, Candidate(new, source), supersedes, force)
    if not verdict.writes:
        fail(str(WriteRefused(verdict)), REFUSED)
    memory, write = folder.store(verdict, command="add")
    shown = st.show_path(folder.root / memory.path)
    superseded = folder.get(memory.fields["supersedes"]).path if "supersedes" in memory.fields else None
    if format is OutputFormat.text:
        st.say(f"Added {shown}")
        if superseded is not None:  # a quarantined memory's waits for `memdir review accept`
            st.say(f"Superseded {superseded} (it leaves the index)")
    if type.needs_why_and_how and not (new.why.strip() and new.how.strip()):
        st.warn(f"{type.value} memories should say --why and --how; `memdir lint` will flag it")
    payload = {
        "path": memory.path,
        "name": memory.name,
        "type": memory.raw_type,
        "action": verdict.action.value,
        "reasons": list(verdict.reasons),
        "superseded": superseded,
    }
    report_write(st, write, f"{shown} is written", _json_if(format, payload))


def _screened(
    st: State, folder: MemoryDir, candidate: Candidate, supersedes: str | None, force: bool, command: str = "add"
) -> Verdict:
    """The write path's screen for `add` and `edit` (MemoryDir.screen), and what people are told of it."""
    verdict = folder.screen(candidate, supersedes=supersedes, force=force, command=command)
    if not verdict.writes:
        return verdict
    new, target = candidate.memory, verdict.supersedes
    if verdict.redacted:
        st.warn(f"{', '.join(sorted(set(verdict.redacted)))} redacted before writing; keep secrets out of memory")
    for value in dict.fromkeys(verdict.placeholders):
        st.say(f"{value} looks like a placeholder, kept as written")
    if verdict.action is Action.QUARANTINE:
        why = "; ".join(r for r in verdict.reasons if not r.startswith("redacted"))
        st.warn(f"quarantined ({why}): not indexed until `memdir review accept {new.name}`")
        if target is not None:
            st.warn(f"{target} stays in the index until then; accepting {new.name!r} supersedes it")
    nearest = [other for other in verdict.same_topic if other.existing and other.path != target]
    for other in nearest[:3]:
        st.warn(f"same topic as {other.path} ({other.reason}); if it replaces it, add with --supersedes {other.path}")
    if len(nearest) > 3:
        st.warn(f"... and {len(nearest) - 3} more memories on the same topic (`memdir lint` lists pairs)")
    return verdict


def _edited(text: str, template: NewMemory) -> NewMemory:
    """The memory a file edited from `template` holds, as the screen compares it."""
    doc = parse_document(text)
    data = doc.data
    words = {key: " ".join(str(data.get(key) or "").split()) for key in ("name", "description", "type")}
    kinds = {t.value: t for t in MemoryType}
    return NewMemory(
        type=kinds.get(words["type"].lower(), template.type),
        name=words["name"] or template.name,
        description=words["description"],
        body=doc.body,
        created=template.created,
    )


def _add_in_editor(
    st: State, folder: MemoryDir, new: NewMemory, dates_from: dt.date | None, candidate: Candidate,
    supersedes: str | None, force: bool,
) -> None:  # fmt: skip
    """`add` through $EDITOR; relative dates are converted counting from `dates_from`, unless None."""
    edited = edit_text(editor_text(new))
    if edited is None:
        fail("editor closed without saving; nothing written", REFUSED)
    if unfilled_hints(edited):
        draft = folder.save_draft(new.file_name, edited)
        hints = ", ".join(unfilled_hints(edited))
        fail(f"the template still has <hints> in {hints}; nothing written (draft kept at {draft})")
    try:
        if dates_from is not None:
            edited, conversions = absolutize_text(edited, dates_from)
            _report_dates(st, conversions)
        verdict = _screened(st, folder, Candidate(_edited(edited, new), candidate.source), supersedes, force)
        if not verdict.writes:
            draft = folder.save_draft(new.file_name, screened_text(edited, verdict))
            fail(f"{WriteRefused(verdict)}; nothing written (draft kept at {draft})", REFUSED)
        memory, write = folder.store(verdict, text=edited, command="add")
    except (InvalidMemory, FrontmatterError) as exc:
        draft = folder.save_draft(new.file_name, edited)
        fail(f"{exc}; nothing written (draft kept at {draft})")
    shown = st.show_path(folder.root / memory.path)
    st.say(f"Added {shown}")
    report_write(st, write, f"{shown} is written")


def _jsonable(value: Any) -> Any:
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


@app.command("list")
def list_memories(
    ctx: typer.Context,
    type: Annotated[
        MemoryType | None, typer.Option("--type", "-t", help="Only memories of this type.", case_sensitive=False)
    ] = None,
    format: FormatOption = OutputFormat.text,
) -> None:
    """List the memories in the folder."""
    st = state(ctx)
    folder = st.folder()
    scan = folder.scan()
    memories = [m for m in scan.memories if type is None or m.type is type]
    indexed = {m.path for m in folder.plan_index(scan=scan).entries}
    if format is OutputFormat.json:
        payload = memory_list(folder.root, memories, scan.problems, indexed)
        st.write_json(payload)
        return
    from rich.table import Table

    table = Table(box=None, pad_edge=False, header_style="bold")
    table.add_column("type", no_wrap=True)
    table.add_column("name", overflow="fold", max_width=32)
    table.add_column("updated", no_wrap=True)
    table.add_column("description", overflow="fold", ratio=1)
    for m in sorted(memories, key=lambda m: (m.raw_type or "~", m.title.casefold())):
        changed = m.last_changed.isoformat() if m.last_changed else ""
        flag = "" if m.path in indexed else "  [not indexed]"
        table.add_row(m.raw_type or "?", m.title + flag, changed, m.description)
    st.out.print(table)
    st.say(
        plural(len(memories), "memory", "memories")
        + (
            f"; {plural(len(scan.problems), 'file', 'files')} could not be read (see `memdir lint`)"
            if scan.problems
            else ""
        )
    )


@app.command()
def show(
    ctx: typer.Context,
    name: MemoryName,
    format: FormatOption = OutputFormat.text,
    redact: Annotated[
        bool, typer.Option("--redact", help="Replace secrets (keys, tokens, passwords) with `[REDACTED:<kind>]`.")
    ] = False,
) -> None:
    """Print one memory file as it is on disk (with --redact, without its secrets).

    `show` is the one command that prints a file's secrets (every other command masks them);
    --redact replaces them. Into a pipe or a file it writes the file's bytes unchanged; on a
    terminal it escapes control characters and invisible bidi and zero-width ones (`\x1b`,
    `\u202e`), which a terminal would obey or a reader not see. --format json escapes them as JSON does.
    """
    from memdir.text.sensitive import find_secrets
    from memdir.text.sensitive import redact as redacted

    st = state(ctx)
    folder = st.folder()
    found = folder.find(name)
    path = folder.root / found.path
    text = path.read_bytes().decode("utf-8", "replace") if path.is_file() or format is OutputFormat.text else ""
    # A field's value alone may not look secret (`password: hunter2x9Q`): what was found in the
    # whole file is masked wherever it appears.
    secrets = {text[h.start : h.end]: h.kind for h in find_secrets(text)} if redact else {}

    def clean(value: Any) -> Any:
        if not redact:
            return value
        if isinstance(value, str):
            value = redacted(value)
            for secret, kind in secrets.items():
                value = value.replace(secret, f"[REDACTED:{kind}]")
            return value
        if isinstance(value, dict):
            return {clean(k): clean(v) for k, v in value.items()}
        return [clean(v) for v in value] if isinstance(value, list) else value

    if format is OutputFormat.json:
        payload: dict[str, Any] = {"path": found.path}
        if found.memory is not None:
            payload |= {"fields": clean(_jsonable(found.memory.fields)), "body": clean(found.memory.body)}
        else:
            payload |= {"problem": found.problem.message if found.problem else None}
        st.write_raw(dumps(payload, mask=False) + "\n")  # as it is: --redact is how to leave secrets out
        return
    if found.problem is not None:
        st.warn(f"{found.path} {found.problem.message}")
    st.write_raw(as_written(clean(text), terminal=sys.stdout.isatty()))


@app.command()
def edit(
    ctx: typer.Context,
    name: MemoryName,
    format: FormatOption = OutputFormat.text,
) -> None:
    """Open a memory in $EDITOR, then validate it, set `updated` and re-index.

    An edit that does not parse is not saved over the memory; it is kept as a draft in .memdir/.
    """
    st = state(ctx)
    folder = st.folder()
    found = folder.find(name)
    path = folder.root / found.path
    try:
        original = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        fail(f"{found.path} is not valid UTF-8; fix its encoding before editing it here")
    edited = edit_text(original)
    if edited is None or edited == original:
        if format is OutputFormat.json:
            st.write_json({"path": found.path, "changed": False, "index": None})
        st.say("No changes.")
        return
    try:
        verdict = _screened(st, folder, folder.edited(found.path, edited, expected=original), None, False, "edit")
        if not verdict.writes:
            draft = folder.save_draft(found.path, edited)
            fail(f"{WriteRefused(verdict)}; {found.path} left as it was (your edit is kept at {draft})", REFUSED)
        memory, write = folder.store(verdict, command="edit")
    except InvalidMemory as exc:
        draft = folder.save_draft(found.path, edited)
        fail(f"{exc}; {found.path} left as it was (your edit is kept at {draft})")
    except MemoryChanged as exc:
        draft = folder.save_draft(found.path, edited)
        fail(f"{exc} (your edit is kept at {draft})", REFUSED)
    shown = st.show_path(folder.root / memory.path)
    if format is OutputFormat.text:
        st.say(f"Saved {shown}")
    report_write(st, write, f"{shown} is saved", _json_if(format, {"path": memory.path, "changed": True}))


@app.command()
def rm(
    ctx: typer.Context,
    name: MemoryName,
    purge: Annotated[
        bool,
        typer.Option(
            "--purge",
            help="Delete the file instead of archiving it, and its text from .memdir/ (index history, "
            "recall log, caches, drafts; its secrets are masked in the decision log).",
        ),
    ] = False,
    format: FormatOption = OutputFormat.text,
) -> None:
    """Retire a memory: move it into .archive/ (or delete it with --purge) and re-index.

    --purge is for a memory that must be gone, such as one holding a key: besides the file, it takes
    what memdir kept of it out of .memdir/: its lines in MEMORY.md.prev and MEMORY.md.history, the
    recalls in recall.jsonl that name it, the parse cache and recall index (rebuilt on the next run)
    and its drafts; its secrets are masked where log.jsonl quotes them. A NAME that matches no
    memory in the folder is looked for in .archive/ (where `rm` and `prune` put them; or name the
    file: `.archive/x.md`), so an archived key can be purged too. Git history is another matter: a
    committed file stays in it until the history is rewritten.
    """
    st = state(ctx)
    folder = st.folder()
    path, destination, write = folder.remove(name, purge=purge)
    if format is OutputFormat.text:
        st.say(f"Deleted {path}" if destination is None else f"Archived {path} -> {st.show_path(destination)}")
    payload = {"path": path, "archived_to": str(destination) if destination else None}
    report_write(st, write, f"{path} is {'deleted' if destination is None else 'archived'}", _json_if(format, payload))

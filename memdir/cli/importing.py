"""`memdir import`: memories from another folder, or notes kept by hand (`--llm`), through the write path."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from memdir.cli.errors import REFUSED, USAGE
from memdir.cli.memories import report_write
from memdir.cli.state import OutputFormat, State, fail
from memdir.cli.typer_app import FormatOption, app, state
from memdir.core.model import plural
from memdir.core.reports import index_summary


@app.command("import")
def import_memories(
    ctx: typer.Context,
    source: Annotated[
        Path,
        typer.Argument(
            help="The folder to bring memories from; with --llm, a file of notes (MEMORY.md, CLAUDE.md).",
            show_default=False,
        ),
    ],
    move: Annotated[
        bool,
        typer.Option(
            "--move",
            help="Take what was brought over (and what was already here word for word) out of SOURCE: "
            "into its .archive/, its MEMORY.md re-indexed without them.",
        ),
    ] = False,
    supersede: Annotated[
        bool,
        typer.Option(
            "--supersede",
            help="A memory whose name is taken here by one that says something else replaces that one "
            "(under the name `NAME-2`) instead of being refused.",
        ),
    ] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Say what would happen; write nothing.")] = False,
    llm: Annotated[
        bool,
        typer.Option(
            "--llm",
            help="SOURCE is a file of notes kept by hand: turn it into typed memories through the Anthropic API, "
            "as `extract` does. Needs ANTHROPIC_API_KEY.",
        ),
    ] = False,
    section: Annotated[
        str | None, typer.Option("--section", help="With --llm: only the part of SOURCE under this heading.")
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", help="With --llm: the model (default: `extract.model`).")
    ] = None,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="With --llm: write without asking, even on a terminal.")
    ] = False,
    format: FormatOption = OutputFormat.text,
) -> None:
    """Bring memories from another folder into this one, through the write path.

    SOURCE is another memory folder: Claude Code's own (`memdir where` names it), or another
    repository's. Each memory in it goes through the screen `add` uses (secrets redacted, what a tool
    read and instruction-like text quarantined, near-duplicates and rejected memories skipped), all
    are written at once or none, and MEMORY.md is re-indexed once. A memory keeps its file name,
    name, type, description, body and every other field; one that states no date gets `updated:`
    set to its file's modification date, so it does not look written today. SOURCE's MEMORY.md is not
    copied: the index here lists the memories by their frontmatter. Nothing in SOURCE changes unless
    --move.

    A memory already here (same name, type, description and body) is skipped, so importing twice
    adds nothing. A same-name memory that says something else is refused, or replaces the one here
    with --supersede; a file that is not a memory is skipped, one that does not load is refused.
    Exit 1 when anything was refused (the rest is imported), 3 when MEMORY.md could not take the
    change.

    With --llm, SOURCE is a file of notes (a legacy MEMORY.md of bullets, a CLAUDE.md, or its
    --section): the model turns it into typed memories through extraction's prompt, screen and
    judge (docs/extract.md). Lines that only link to files beside it are an index and are left out.
    """
    st = state(ctx)
    if not llm and (section is not None or model is not None or yes):
        given = [name for name, value in (("--section", section), ("--model", model), ("--yes", yes)) if value]
        fail(f"{' and '.join(given)} go with --llm")
    if llm and (move or supersede):
        fail("--move and --supersede are for a folder of memory files, not --llm")
    folder = st.folder()
    path = source if source.is_absolute() else st.cwd / source
    if llm:
        _import_notes(st, folder, path, section, model, dry_run, yes, format)
        return
    from memdir.write.importing import import_folder

    result = import_folder(folder, path, move=move, supersede=supersede, dry_run=dry_run)
    plan = result.plan
    if format is OutputFormat.json:
        payload = _folder_json(result, folder.root, move)
    else:
        payload = None
        _print_folder(st, result, move)
    if result.write is not None:
        written = sum(item.writes for item in plan.items)
        report_write(st, result.write, f"{plural(written, 'memory is', 'memories are')} imported", payload)
    elif payload is not None:
        st.write_json(payload)
    if plan.refused:
        raise typer.Exit(REFUSED)


_WOULD = {"imported": "import", "quarantined": "quarantine", "skipped": "skip", "refused": "refuse"}  # in a dry run


def _print_folder(st: State, result: Any, move: bool) -> None:
    from memdir.write.importing import Outcome

    plan = result.plan
    shown = st.show_path(plan.source)
    for item in plan.items:
        what = f"would {_WOULD[item.outcome.value]}" if result.dry_run else item.outcome.value
        why = "; ".join(item.reasons)
        if item.writes:
            into = "" if item.path == item.source else f" as {item.path}"
            line = f"{what} {item.source}{into}" + (f" ({why})" if why else "")
        else:
            line = f"{what} {item.source}: {why}"
        if item.outcome is Outcome.REFUSED:
            st.error(line)  # shown under --quiet too: the exit code says something was refused
        else:
            st.say(f"  {line}")
    near = [i for i in plan.items if i.writes and i.verdict and any(n.existing for n in i.verdict.same_topic)]
    if near:
        what = plural(len(near), "memory", "memories")
        st.warn(f"{what} brought over on the same topic as a memory here; `memdir lint` lists the pairs")
    if plan.count(Outcome.QUARANTINED) and not result.dry_run:
        st.warn("quarantined memories are not indexed until `memdir review accept NAME` (`memdir review` lists them)")
    prefix = "dry run, nothing written: " if result.dry_run else ""
    st.say(f"{prefix}{plan.summary()} from {shown}")
    if move:
        leaving = [item.source for item in plan.items if item.leaves_source]
        if result.dry_run:
            st.say(f"--move would take {len(leaving)} out of {shown} (into its .archive/) and drop their index lines")
        elif result.moved:
            st.say(f"moved {len(result.moved)} out of {shown} (into its .archive/); its MEMORY.md no longer lists them")
        kept = [item.source for item in plan.items if not item.leaves_source]
        if kept:
            st.say(f"left in {shown}: {len(kept)} not brought over")


def _folder_json(result: Any, root: Path, move: bool) -> dict[str, Any]:
    from memdir.write.importing import Outcome

    plan = result.plan
    rows = []
    for item in plan.items:
        verdict = item.verdict
        rows.append(
            {
                "source": item.source,
                "outcome": item.outcome.value,
                "path": item.path,
                "name": item.name,
                "type": item.type,
                "reasons": item.reasons,
                "already_here": item.present,
                "duplicate_of": verdict.duplicate_of if verdict is not None and not item.writes else None,
                "supersedes": verdict.supersedes if verdict is not None and item.writes else None,
                "redacted": sorted(set(verdict.redacted)) if verdict is not None else [],
                "same_topic": [n.path for n in verdict.same_topic if n.existing] if verdict is not None else [],
                "moved": item.source in result.moved,
            }
        )
    return {
        "from": str(plan.source),
        "into": str(root),
        "dry_run": result.dry_run,
        "move": move,
        "counts": {outcome.value: plan.count(outcome) for outcome in Outcome},
        "memories": rows,
        "moved": result.moved,
        "source_index": index_summary(result.source_index.result) if result.source_index is not None else None,
        "index": None,  # the folder's re-index, when something was written
    }


def _interactive() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def _import_notes(
    st: State, folder: Any, path: Path, section: str | None, model: str | None, dry_run: bool, yes: bool,
    format: OutputFormat,
) -> None:  # fmt: skip
    """`import --llm`: the notes in `path` made memories by an extraction run of kind `document`."""
    from memdir.cli.extract import print_plan, result_json
    from memdir.core.gauntlet import Action
    from memdir.write.extract import AuthFailed, ExtractError, Extractor, NoApiKey, Request
    from memdir.write.importing import NotesError

    extractor = Extractor(folder, model=model)
    request = Request(path, "document", model=extractor.model, section=section)
    confirm = None
    if not yes and not dry_run and _interactive() and format is OutputFormat.text:

        def confirm(plan: Any) -> bool:
            print_plan(st, plan)
            return typer.confirm("Write these memories?", default=False, err=True)

    try:
        results = extractor.run(request, dry_run=dry_run, confirm=confirm)
    except (NoApiKey, AuthFailed, NotesError) as exc:
        fail(str(exc), USAGE)
    except ExtractError as exc:  # the API failed, or the write did: nothing was changed
        fail(str(exc), REFUSED)
    refused = any(v.action is Action.REFUSE for r in results if r.plan for v in r.plan.verdicts)
    if format is OutputFormat.json:
        st.write_json({"runs": [result_json(r) | {"note": r.plan.note if r.plan else ""} for r in results]})
    else:
        for result in results:
            if result.plan is not None and result.plan.note:
                st.say(result.plan.note)
            if result.plan is not None and (dry_run or confirm is None) and result.plan.verdicts:
                print_plan(st, result.plan)
            st.say(("dry run, nothing written: " if result.status == "dry-run" else "") + result.summary)
            if result.status == "failed":
                st.error(result.summary)
    if refused:
        raise typer.Exit(REFUSED)

"""`memdir context`: print what to inject at session start (the index plus the memories that always load),
and with `--for TASK` the memories recall finds relevant to a task."""

from __future__ import annotations

from typing import Annotated

import typer

from memdir.cli.typer_app import FORMAT_FALLBACK, app, resolve_format, state
from memdir.core.model import plural
from memdir.read.context import RECALLED, ContextFormat, render_context

_SHOWN_NAMES = 10  # past this many, left-out memories are counted rather than named


@app.command()
def context(
    ctx: typer.Context,
    format: Annotated[
        ContextFormat,
        typer.Option(
            "--format",
            "-f",
            help=f"markdown (MEMORY.md, then full texts), xml or json {FORMAT_FALLBACK}: see docs/context.md.",
            callback=resolve_format,
        ),
    ] = ContextFormat.MARKDOWN,
    budget: Annotated[
        int | None,
        typer.Option(
            "--budget",
            min=1,
            help="Most bytes to print (UTF-8), else `context.budget` in the config, else no limit. "
            "Whole entries and memories are left out, never cut.",
            show_default=False,
        ),
    ] = None,
    no_index: Annotated[
        bool,
        typer.Option("--no-index", help="Leave the index out, for harnesses that load MEMORY.md themselves."),
    ] = False,
    task: Annotated[
        str | None,
        typer.Option(
            "--for",
            help="A task: the memories `memdir recall TASK` returns are added in full after the pinned ones, "
            "each with its age.",
            show_default=False,
        ),
    ] = None,
    k: Annotated[
        int | None,
        typer.Option(
            "-k", "--limit", min=1, help="With --for: most memories to recall (else `recall.k`, 5).", show_default=False
        ),
    ] = None,
) -> None:
    """Print the context for a new session: the index, then the memories marked to always load.

    A memory always loads with `pin: true`, or with an importance at or above `context.pin-importance`
    (0.9 unless configured). The size and an estimated token count go to stderr, with what the
    budget left out. With --for TASK, the memories recalled for TASK follow, best first, each with
    its age ("This memory is N days old; verify before asserting it as fact."); the recall is
    logged to .memdir/recall.jsonl like any other. Nothing else is written.
    """
    if k is not None and task is None:
        raise typer.BadParameter("-k only applies with --for TASK", param_hint="-k")
    st = state(ctx)
    folder = st.folder()
    recalled = []
    scan = None
    if task is not None:
        from memdir.read.context import pinned_memories
        from memdir.read.recall import recall, recalled_memories

        scan = folder.scan()  # read once, for the pinned memories here and the context below
        found = recall(folder, task, k=k, already=[m.path for m in pinned_memories(folder, scan)])
        st.warn_unreadable(found.unreadable, "recall did not search them")
        if found.log_error:
            st.warn(f"recall not logged: {found.log_error}")
        recalled = recalled_memories(folder, found)
        if not recalled:
            why = found.gate.why(found.settings) if found.gate and not found.passed_gate else "no match is relevant"
            st.say(f"recall: nothing relevant to the task ({why})")
    result = render_context(folder, format, budget, include_index=not no_index, recalled=recalled, scan=scan)
    st.write(result.text)
    if result.index_refused is not None:
        st.warn(f"MEMORY.md is used as it is: {result.index_refused}")
    st.say(
        f"context: {result.bytes:,} bytes, about {result.estimated_tokens:,} tokens "
        f"({plural(len(result.entries), 'index entry', 'index entries')}, "
        f"{plural(len(result.loaded), 'memory', 'memories')} in full"
        + (f", {sum(1 for b in result.loaded if b.reason == RECALLED)} of them recalled for the task)" if task else ")")
    )
    for part, one, many in (("entry", "index entry", "index entries"), ("body", "memory in full", "memories in full")):
        gone = [item for item in result.left_out if item.part == part and item.cause == "budget"]
        if gone:
            names = ", ".join(item.memory.title for item in gone[:_SHOWN_NAMES])
            more = f" and {len(gone) - _SHOWN_NAMES} more" if len(gone) > _SHOWN_NAMES else ""
            limit = f"{result.budget or 0:,}-byte budget"
            st.say(f"left out to fit the {limit}: {plural(len(gone), one, many)} ({names}{more})")
    if result.missing:  # the text says so too, for the agent
        st.say(f"left out, their files gone: {', '.join(result.missing)} (`memdir index --drop-missing` removes them)")

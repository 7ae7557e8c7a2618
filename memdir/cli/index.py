"""`memdir index`: regenerate MEMORY.md, check it, or print it."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from memdir.cli.app import FormatOption, OutputFormat, State, app, state
from memdir.index import IndexResult


def index_summary(result: IndexResult) -> dict[str, Any]:
    """The stable JSON shape of an index run (also used by `add`, `edit`, `rm`)."""
    return {
        "entries": len(result.entries),
        "lines": result.lines,
        "bytes": result.bytes,
        "hand_written_lines": result.hand_lines,
        "left_out": [
            {
                "path": left.memory.path,
                "reason": left.reason,
                "importance": left.memory.importance,
                "date": left.memory.last_changed.isoformat() if left.memory.last_changed else None,
            }
            for left in result.left_out
        ],
        "excluded": [{"path": e.memory.path, "reason": e.reason} for e in result.excluded],
        "rewritten": result.rewritten,
        "refused": result.refused,
    }


def report_index(st: State, result: IndexResult, verb: str) -> None:
    """Tell people what the index holds, what was left out and why."""
    if result.refused is not None:
        st.err.print(f"memdir: MEMORY.md not written: {result.refused}", markup=False, style="red")
        return
    st.say(f"MEMORY.md {verb}: {len(result.entries)} entries, {result.lines} lines, {result.bytes:,} bytes.")
    if result.rewritten and verb != "unchanged":
        st.say(
            f"Rewrote {len(result.rewritten)} entries from their memories' frontmatter "
            "(the previous MEMORY.md is kept in .memdir/MEMORY.md.prev)."
        )
    if result.left_out:
        st.warn(f"left out {len(result.left_out)} memories to fit the caps (least valuable first):")
        for left in result.left_out:
            st.say(f"  {left.memory.path} ({left.reason}, importance {left.memory.importance:g})")
    if result.excluded and not st.quiet:
        reasons = ", ".join(sorted({e.reason.split(" ")[0] for e in result.excluded}))
        st.say(f"Not indexed by policy: {len(result.excluded)} ({reasons}).")


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
    st = state(ctx)
    folder = st.folder()
    if check or stdout:
        result = folder.plan_index(drop_missing=drop_missing)
        current = folder.read_index()
        changed = result.refused is None and result.text != current
    else:
        write = folder.write_index(drop_missing=drop_missing)
        result, changed = write.result, write.changed
    if format is OutputFormat.json:
        payload = {"path": str(folder.index_path), "changed": changed, **index_summary(result)}
        st.write(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")
    elif stdout:
        st.write(result.text)
    if format is OutputFormat.text:
        if check:
            if result.refused is None:
                st.say("MEMORY.md is out of date; run `memdir index`." if changed else "MEMORY.md is up to date.")
            else:
                report_index(st, result, "")
        else:
            report_index(st, result, ("would be " if stdout else "") + ("written" if changed else "unchanged"))
    if result.refused is not None or (check and changed):
        raise typer.Exit(1)

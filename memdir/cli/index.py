"""`memdir index`: regenerate MEMORY.md, check it, or print it. No typer here: see cli/fast.py."""

from __future__ import annotations

from memdir.cli.state import OutputFormat, State
from memdir.core.index import entry_target
from memdir.core.model import plural
from memdir.core.reports import index_summary
from memdir.folder import IndexWrite

LEFT_OUT_SHOWN = 20
__all__ = ["index_summary", "report_index", "run_index"]  # index_summary: for add, edit, rm


def report_index(st: State, write: IndexWrite, verb: str, done: str | None = None) -> None:
    """Tell people what the index holds, what was left out, and which files could not be read.
    `done` says what a command wrote before re-indexing ("user_b.md is written"): when MEMORY.md
    refuses the change, the one error line says both, even under --quiet."""
    result = write.result
    st.warn_unreadable([(p.path, p.message) for p in write.unreadable], "the index leaves them out")
    if write.history_error is not None:
        st.warn(f"the lines this rewrite removed are not kept in .memdir/ ({write.history_error})")
    if result.refused is not None:
        what = f"{done}, but MEMORY.md is not updated" if done else "MEMORY.md not written"
        st.error(f"{what}: {result.refused}")
        return
    st.say(f"MEMORY.md {verb}: {result.size_note()}.")
    if result.rewritten and write.changed:
        report_rewritten(st, write)
    if result.dead_dropped:
        st.warn(
            f"dropped {plural(len(result.dead_dropped), 'entry', 'entries')} linking files that no longer exist, "
            "to make room (the lines are kept in .memdir/MEMORY.md.history):"
        )
        for line in result.dead_dropped[:LEFT_OUT_SHOWN]:
            st.say(f"  {line}")
        if len(result.dead_dropped) > LEFT_OUT_SHOWN:
            st.say(f"  ... and {len(result.dead_dropped) - LEFT_OUT_SHOWN:,} more (kept in .memdir/MEMORY.md.history)")
    if result.dead:
        targets = _dead_targets(result.dead)
        shown = ", ".join(targets[:LEFT_OUT_SHOWN])
        if len(targets) > LEFT_OUT_SHOWN:
            shown += f", and {len(targets) - LEFT_OUT_SHOWN:,} more"
        st.warn(
            f"{plural(len(result.dead), 'entry links a file that', 'entries link files that')} "
            f"{'no longer exists' if len(result.dead) == 1 else 'no longer exist'} ({shown}); kept while everything "
            "fits, dropped first when the caps bind; `memdir index --drop-missing` removes them now"
        )
    if result.left_out:
        st.warn(
            f"left out {plural(len(result.left_out), 'memory', 'memories')} to fit the caps (least valuable first):"
        )
        # A hook's log is no place for ten thousand lines; the JSON output lists every one.
        for left in result.left_out[:LEFT_OUT_SHOWN]:
            st.say(f"  {left.memory.path} ({left.reason}, importance {left.memory.importance:g})")
        if len(result.left_out) > LEFT_OUT_SHOWN:
            more = len(result.left_out) - LEFT_OUT_SHOWN
            st.say(f"  ... and {more:,} more (`memdir index --check --format json` lists them all)")
    if result.withheld:
        # Printed masked, as every path is: the file name is the leak.
        st.warn(
            f"left {plural(len(result.withheld), 'memory', 'memories')} out of MEMORY.md: "
            f"{'its file name holds' if len(result.withheld) == 1 else 'their file names hold'} a secret, which a link "
            "would copy into every session; rename the file, and rotate the key (lint S009):"
        )
        for withheld in result.withheld[:LEFT_OUT_SHOWN]:
            st.say(f"  {withheld.memory.path}")
        if len(result.withheld) > LEFT_OUT_SHOWN:
            more = len(result.withheld) - LEFT_OUT_SHOWN
            st.say(f"  ... and {more:,} more (`memdir lint --select S009` lists them all)")
    if result.excluded and not st.quiet:
        reasons = ", ".join(sorted({e.reason.split(" ")[0] for e in result.excluded}))
        st.say(f"Not indexed by policy: {len(result.excluded)} ({reasons}).")


def report_rewritten(st: State, write: IndexWrite) -> None:
    """Say which entry lines took their memory's frontmatter text. On the first run in a folder
    (often the session-start hook, where nobody watches) name each line and the way back."""
    rewritten = write.result.rewritten
    count = plural(len(rewritten), "existing entry line", "existing entry lines")
    if not write.first_run:
        st.say(f"Replaced {count} with their memories' frontmatter (old lines are kept in .memdir/MEMORY.md.history).")
        return
    whose = "its memory's" if len(rewritten) == 1 else "their memories'"
    st.warn(f"replaced {count} with the text of {whose} frontmatter:")
    for line in rewritten[:LEFT_OUT_SHOWN]:
        st.say(f"  {line}")
    if len(rewritten) > LEFT_OUT_SHOWN:
        st.say(f"  ... and {len(rewritten) - LEFT_OUT_SHOWN:,} more")
    st.say(
        "  To keep your own wording instead: copy .memdir/MEMORY.md.prev back over MEMORY.md, add\n"
        '  `[index]` `entry-text = "keep"` to .memdir.toml (or [tool.memdir.index] in pyproject.toml),\n'
        "  and run `memdir index` again. Every replaced line is also in .memdir/MEMORY.md.history."
    )


def _dead_targets(lines: list[str]) -> list[str]:
    targets = [entry_target(line) for line in lines]
    return [target for target in targets if target is not None]


def run_index(st: State, *, check: bool, stdout: bool, drop_missing: bool, format: OutputFormat) -> int:
    """`memdir index` with its options parsed (by typer, or by cli/fast.py); returns the exit code."""
    folder = st.folder()
    write = folder.write_index(drop_missing=drop_missing, dry_run=check or stdout)
    result = write.result
    if format is OutputFormat.json:
        payload = {"path": str(folder.index_path), "changed": write.changed, **index_summary(result)}
        st.write_json(payload)
    elif stdout:
        st.write(result.text)
    if format is OutputFormat.text:
        if check and result.refused is None:
            st.say("MEMORY.md is out of date; run `memdir index`." if write.changed else "MEMORY.md is up to date.")
        else:
            verb = ("would be " if stdout else "") + ("written" if write.changed else "unchanged")
            report_index(st, write, verb)
    return 1 if result.refused is not None or (check and write.changed) else 0

"""`memdir prune/consolidate/history/stats`: a memory folder over time (docs/lifecycle.md).

Thin over memdir/lifecycle/ (prune.py, consolidate.py, stats.py): they decide and write; this
module parses options, asks before applying, and prints.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from memdir.cli.errors import REFUSED, USAGE
from memdir.cli.index import index_summary, report_index
from memdir.cli.state import OutputFormat, State, fail
from memdir.cli.typer_app import AnyMemoryName, FormatOption, app, state
from memdir.core.model import plural

if TYPE_CHECKING:
    from memdir.folder import IndexWrite
    from memdir.lifecycle.consolidate import ConsolidationPlan
    from memdir.lifecycle.stats import FolderStats

DryRunOption = Annotated[bool, typer.Option("--dry-run", "-n", help="Show what would change; change nothing.")]


def _dump(st: State, payload: dict[str, Any]) -> None:
    st.write_json(payload)


def _reindexed(st: State, write: IndexWrite | None) -> None:
    if write is None:
        return
    report_index(st, write, "updated" if write.changed else "unchanged")
    if write.result.refused is not None:
        raise typer.Exit(REFUSED)


# --- prune ---------------------------------------------------------------------------------------


@app.command()
def prune(ctx: typer.Context, dry_run: DryRunOption = False, format: FormatOption = OutputFormat.text) -> None:
    """Move expired and superseded memories into .archive/ and re-index; nothing is deleted.

    Each archived file gets `archived: <date>` and `archived_reason` in its frontmatter, and the move
    is logged to .memdir/log.jsonl (`memdir history` shows it). A superseded memory whose successor is
    not in the folder is kept.
    """
    from memdir.lifecycle.prune import prune as run_prune

    st = state(ctx)
    folder = st.folder()
    result = run_prune(folder, dry_run=dry_run)
    if format is OutputFormat.json:
        _dump(
            st,
            {
                "dry_run": result.dry_run,
                "archived": [
                    {"path": i.path, "reason": i.kind, "detail": i.reason, "to": i.destination,
                     "superseded_by": i.superseded_by}
                    for i in result.moved
                ],
                "kept": [{"path": k.path, "why": k.why} for k in result.kept],
                "index": index_summary(result.index.result) if result.index else None,
                "error": result.error,
            },
        )  # fmt: skip
        if result.error is not None:
            fail(result.error)
        if result.index is not None and result.index.result.refused is not None:
            raise typer.Exit(REFUSED)
        return
    verb = "would archive" if dry_run else "archived"
    for item in result.moved:
        st.write(f"{verb} {item.path} -> {item.destination} ({item.reason})\n")
    for kept in result.kept:
        st.say(f"kept {kept.path}: {kept.why}")
    if result.error is not None:  # said first: a refused index must not hide it
        moved = "the memories listed above as archived were moved" if result.moved else "nothing was moved"
        st.error(f"{result.error}; {moved}")
        _reindexed(st, result.index)
        raise typer.Exit(USAGE)
    if not result.moved and result.kept:  # superseded memories remain: say why, never that there are none
        which = "the superseded memory above is" if len(result.kept) == 1 else "the superseded memories above are"
        st.say(f"Nothing to move into .archive/: {which} kept.")
    elif not result.moved:
        st.say("Nothing to prune: no memory is expired or superseded.")
    elif dry_run:
        st.say(f"{plural(len(result.moved), 'memory', 'memories')} would be archived; run `memdir prune` to do it.")
    else:
        st.say(
            f"Archived {plural(len(result.moved), 'memory', 'memories')} into {st.show_path(folder.root / '.archive')}."
        )
    _reindexed(st, result.index)


# --- consolidate ---------------------------------------------------------------------------------


def _plan_json(plan: ConsolidationPlan) -> dict[str, Any]:
    return {
        "llm": plan.llm,
        "model": plan.model,
        "clusters": [
            {
                "members": c.members,
                "keeper": c.keeper,
                "merged": c.merged,
                "refused": c.refused,
                "changes": [{"path": ch.path, "new": ch.before is None} for ch in c.changes],
            }
            for c in plan.clusters
        ],
        "diff": plan.diff(),
    }


def _describe_plan(st: State, plan: ConsolidationPlan) -> None:
    for cluster in plan.clusters:
        members = ", ".join(cluster.members)
        if cluster.refused is not None:
            st.say(f"{members}: {cluster.refused}")
        elif cluster.merged:
            st.say(f"{members}: merge into a new memory {cluster.merged}; all of them become superseded by it")
        else:
            others = [m for m in cluster.members if m != cluster.keeper]
            st.say(f"{members}: keep {cluster.keeper}; {', '.join(others)} superseded by it")


@app.command()
def consolidate(
    ctx: typer.Context,
    dry_run: DryRunOption = False,
    llm: Annotated[
        bool,
        typer.Option("--llm", help="Let a model write each cluster's merged text (needs ANTHROPIC_API_KEY)."),
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Apply without asking.")] = False,
    model: Annotated[
        str | None, typer.Option("--model", help="The model for --llm (else `extract.model`).", show_default=False)
    ] = None,
    format: FormatOption = OutputFormat.text,
) -> None:
    """Fold near-duplicate memories into one per cluster; show the diff, apply with --yes.

    Offline, the most informative memory of each cluster is kept and the others get `status:
    superseded` and `superseded_by` (their files stay; `memdir prune` archives them). With --llm a
    model writes the merged text into a new memory that supersedes them all. Memories whose numbers
    or dates differ are never merged. On a terminal, without --yes, it asks before writing; two runs
    never overlap.
    """
    from memdir.lifecycle.consolidate import ConsolidateBusy
    from memdir.lifecycle.consolidate import consolidate as run

    st = state(ctx)
    folder = st.folder()
    interactive = sys.stdin.isatty() and sys.stdout.isatty() and format is OutputFormat.text
    apply = not dry_run and (yes or interactive)

    def confirm(plan: ConsolidationPlan) -> bool:
        _show(st, plan, format)
        return yes or typer.confirm("Apply these changes?", default=False, err=True)

    try:
        result = run(folder, apply=apply, llm=llm, model=model, confirm=confirm)
    except ConsolidateBusy as exc:
        fail(str(exc), REFUSED)
    plan = result.plan
    if not apply or not plan.changes:  # confirm() did not run: show the plan here
        _show(st, plan, format)
    if format is OutputFormat.json:
        _dump(st, {"dry_run": dry_run, "applied": result.applied, **_plan_json(plan)} | _index_json(result.index))
    if not plan.changes:
        st.say("Nothing to consolidate." if not plan.clusters else "Nothing to apply.")
    elif result.applied:
        st.say(f"Applied: {plural(len(plan.changes), 'file', 'files')} written.")
        if format is OutputFormat.text:
            _reindexed(st, result.index)
    elif dry_run:
        st.say("Dry run: nothing written.")
    elif not apply:
        st.say("Nothing written: pass --yes to apply (or run on a terminal to be asked).")
    else:
        st.say("Nothing written.")


def _index_json(write: IndexWrite | None) -> dict[str, Any]:
    return {"index": index_summary(write.result) if write is not None else None}


def _show(st: State, plan: ConsolidationPlan, format: OutputFormat) -> None:
    if format is OutputFormat.json:
        return
    _describe_plan(st, plan)
    st.write(plan.diff())


# --- history -------------------------------------------------------------------------------------


@app.command()
def history(
    ctx: typer.Context,
    name: AnyMemoryName,
    format: FormatOption = OutputFormat.text,
) -> None:
    """What happened to a memory: created, updated, superseded, archived, and every logged decision.

    Read from its frontmatter, the supersede chain (both ways), .memdir/log.jsonl and .archive/.
    Archived memories, and names only the log knows (a skipped duplicate), are found too.
    """
    from memdir.lifecycle.prune import describe
    from memdir.lifecycle.prune import history as read_history

    st = state(ctx)
    found = read_history(st.folder(), name)
    if format is OutputFormat.json:
        _dump(
            st,
            {
                "name": found.name,
                "path": found.path,
                "state": found.state,
                "superseded_by": found.superseded_by,
                "supersedes": found.supersedes,
                "events": [
                    {"when": e.when, "what": e.what, "detail": e.detail, "source": e.source} for e in found.events
                ],
            },
        )
        return
    st.write(f"{found.name} ({found.path or 'never stored'}): {found.state}\n")
    if found.superseded_by:
        st.write(f"superseded by: {' -> '.join(found.superseded_by)}\n")
    if found.supersedes:
        st.write(f"supersedes: {', '.join(found.supersedes)}\n")
    for line in describe(found.events):
        st.write(line.rstrip() + "\n")


# --- stats ---------------------------------------------------------------------------------------

_BAR_WIDTH = 30


def _bar(used: int, cap: int, tty: bool) -> str:
    share = used / cap if cap else 0.0
    if not tty:
        return f"{used:,} / {cap:,} ({share:.0%})"
    filled = min(_BAR_WIDTH, round(share * _BAR_WIDTH))
    return f"[{'█' * filled}{'·' * (_BAR_WIDTH - filled)}] {used:,} / {cap:,} ({share:.0%})"


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


@app.command()
def stats(
    ctx: typer.Context,
    within: Annotated[int, typer.Option("--within", min=1, help="Days ahead that count as expiring soon.")] = 14,
    format: FormatOption = OutputFormat.text,
) -> None:
    """Counts by type and status, index headroom, ages, what expires soon, recall and cleanup figures.

    Recall figures come from .memdir/recall.jsonl (every `memdir recall`), cleanup from prune's
    entries in .memdir/log.jsonl. docs/lifecycle.md documents the JSON shape.
    """
    from memdir.lifecycle.stats import folder_stats

    st = state(ctx)
    figures = folder_stats(st.folder(), expiring_days=within)
    if format is OutputFormat.json:
        _dump(st, figures.to_json())
        return
    _print_stats(st, figures, sys.stdout.isatty())


def _print_stats(st: State, f: FolderStats, tty: bool) -> None:
    def counts(values: dict[str, int]) -> str:
        return ", ".join(f"{key} {n:,}" for key, n in values.items() if n) or "none"

    lines = [
        f"memories   {f.memories:,} ({counts(f.by_type)})",
        f"status     {counts(f.by_status)}; {f.archived:,} in .archive/",
    ]
    if f.unreadable:
        lines.append(f"unreadable {plural(len(f.unreadable), 'file', 'files')} (`memdir lint` explains):")
        lines += [f"           {path}: {why}" for path, why in f.unreadable]
    index = f.index
    if index.refused:
        lines.append(f"index      cannot be written: {index.refused}")
    else:
        lines.append(
            f"index      {plural(index.entries, 'entry', 'entries')}"
            + (f", {index.left_out:,} left out" if index.left_out else "")
        )
        lines.append(f"  lines    {_bar(index.lines, index.max_lines, tty)}")
        lines.append(f"  bytes    {_bar(index.bytes, index.max_bytes, tty)}")
    lines.append(f"age        {counts(f.ages)}")
    if any(f.age_sources.get(source, 0) for source in ("mtime", "git", "none")):  # say when not all are dated
        lines.append(f"  from     {counts(f.age_sources)}")
    soon = ", ".join(f"{e.path} ({e.expires.isoformat()})" for e in f.expiring[:5])
    more = f" and {len(f.expiring) - 5} more" if len(f.expiring) > 5 else ""
    lines.append(
        f"expiring   {len(f.expiring)} within {f.expiring_within_days} days" + (f": {soon}{more}" if soon else "")
    )
    r = f.recall
    if r.recalls:
        average = "-" if r.average_returned is None else f"{r.average_returned:.1f}"
        distinct = plural(r.distinct_recalled, "distinct memory", "distinct memories")
        lines.append(
            f"recall     {plural(r.recalls, 'recall', 'recalls')}; hit rate {_rate(r.hit_rate)}, {average} returned on "
            f"average, empty {_rate(r.empty_rate)}; {distinct} recalled"
        )
    else:
        lines.append("recall     no recalls logged yet")
    expired, superseded = f.cleanup["expired"], f.cleanup["superseded"]
    lines.append(f"cleanup    prune archived {expired:,} expired and {superseded:,} superseded memories")
    st.write("\n".join(lines) + "\n")
    for note in f.notes:
        st.warn(note)

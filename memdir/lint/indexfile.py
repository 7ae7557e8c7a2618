"""I: MEMORY.md. Whether the index on disk is the one memdir would write, and fits its caps."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from memdir.core.index import (
    ENTRY_MAX,
    MAX_BYTES,
    MAX_LINES,
    Resolver,
    count_lines,
    entry_target,
    find_links,
    render_entry,
    split_lines,
)
from memdir.core.model import INDEX_NAME
from memdir.lint.registry import Applicability, Fix, Hit, LintContext, Severity, rule

_REGENERATE = Fix(Applicability.SAFE, "regenerate MEMORY.md (`memdir index`)", regenerate_index=True)
_INDEX_FIX = "Regenerates MEMORY.md as `memdir index` does, keeping every hand-written line (safe)."


@rule(
    "I001", "stale-index", Severity.ERROR,
    "Finds a MEMORY.md that is not what `memdir index` would write.",
    why="""MEMORY.md is generated from the memory files. When it drifts (a memory added, edited or
    removed by hand) the agent starts its sessions from a wrong picture: missing memories,
    outdated descriptions, entries for superseded facts. In CI, `memdir index --check` fails on
    the same condition.""",
    example="- [lint-before-commit](feedback_lint.md) — Run the linter before commits\n"
    "  (while the file now says: Run npm run lint before every commit)",
    instead="- [lint-before-commit](feedback_lint.md) — Run npm run lint before every commit",
    fix=_INDEX_FIX,
    fixable=Applicability.SAFE,
)  # fmt: skip
def stale_index(ctx: LintContext) -> Iterator[Hit]:
    if ctx.index_problem is not None or ctx.index.refused is not None:
        return
    current = ctx.index_text or ""
    if current == ctx.index.text:
        return
    old, new = split_lines(current), split_lines(ctx.index.text)
    removed = sum((Counter(old) - Counter(new)).values())
    added = sum((Counter(new) - Counter(old)).values())
    first = next((i for i, (a, b) in enumerate(zip(old, new, strict=False), 1) if a != b), min(len(old), len(new)) + 1)
    if ctx.index_text is None:
        yield Hit(INDEX_NAME, None, f"MEMORY.md is missing; `memdir index` would write {len(new)} lines", _REGENERATE)
    else:
        message = f"out of date: `memdir index` would add {added} and remove {removed} lines"
        yield Hit(INDEX_NAME, first, message, _REGENERATE)


@rule(
    "I002", "broken-index-link", Severity.ERROR,
    "Finds links in MEMORY.md to files that do not exist.",
    why="""A link in the index that leads nowhere sends the agent looking for a memory that is gone,
    or was never written (a template left as `{module}_project.md`). memdir keeps such lines
    while everything fits, because a person may have written them; when the caps bind they go
    first, so that a dead line never costs a live memory its place. A memory that was renamed
    or moved takes over its old line. URLs are not checked.""",
    example="- [old-deploy](project_old-deploy.md) — We deploy to Heroku   (the file was deleted)",
    instead="Delete the line, or point it at the memory that replaced the old one.",
    fix="""Removes list entries whose file is gone, as `memdir index --drop-missing` does (unsafe:
    it removes a line a person may have written; the line is kept in .memdir/MEMORY.md.history).
    Links inside prose are left for a person.""",
    fixable=Applicability.UNSAFE,
)  # fmt: skip
def broken_link(ctx: LintContext) -> Iterator[Hit]:
    if ctx.index_text is None:
        return
    lines = split_lines(ctx.index_text)
    resolve = Resolver(m.path for m in ctx.scan.memories)  # `User_A.md` lists user_a.md, as index reads it
    for link in find_links(ctx.index_text):
        if link.target is not None and resolve(link.target) is None and not (ctx.root / link.target).exists():
            droppable = entry_target(lines[link.line - 1]) == link.target
            fix = (
                Fix(Applicability.UNSAFE, f"remove the entry for {link.raw_target}", drop_missing=True)
                if droppable
                else None
            )
            yield Hit(INDEX_NAME, link.line, f"links to {link.raw_target}, which does not exist", fix)


@rule(
    "I003", "unindexed-memory", Severity.ERROR,
    "Finds memories that belong in the index but are not listed in MEMORY.md.",
    why="""A memory missing from the index is invisible: the agent reads MEMORY.md at the start of a
    session and never learns the file exists. Memories left out on purpose to fit the caps are
    reported by I005 instead. A memory linked inside a sentence (`details: [x](./x.md)`) is
    listed; a link inside another memory's entry (its description, say) is not, since memdir
    rewrites that line and the link goes with it. `memdir index` reads links the same way.""",
    example="feedback_lint.md exists, MEMORY.md has no line linking it",
    instead="- [lint-before-commit](feedback_lint.md) — Run npm run lint before every commit",
    fix=_INDEX_FIX,
    fixable=Applicability.SAFE,
)  # fmt: skip
def unindexed_memory(ctx: LintContext) -> Iterator[Hit]:
    if ctx.index_text is None and ctx.index_problem is not None:
        return
    # Listed means what `memdir index` read as listed when it planned the index: one definition.
    for memory in ctx.index.entries:
        if memory.path not in ctx.index.listed:
            yield Hit(memory.path, None, "not listed in MEMORY.md; run `memdir index`", _REGENERATE)


@rule(
    "I004", "index-over-cap", Severity.ERROR,
    f"Finds a MEMORY.md over {MAX_LINES} lines or {MAX_BYTES:,} bytes.",
    why=f"""Claude Code loads only the first {MAX_LINES} lines and {MAX_BYTES:,} bytes of MEMORY.md
    and silently drops the rest, so whatever sits at the end never reaches the agent. `memdir
    index` always writes an index within the caps by leaving out the least valuable entries; it
    will not cut hand-written text.""",
    example="MEMORY.md with 240 entry lines",
    instead="""An index within the caps (`memdir index` leaves out the least valuable entries),
    and hand-written notes moved into memory files.""",
    fix=_INDEX_FIX + " When hand-written text alone is over a cap, nothing is written.",
    fixable=Applicability.SAFE,
)  # fmt: skip
def index_over_cap(ctx: LintContext) -> Iterator[Hit]:
    if ctx.index.refused is not None:
        yield Hit(INDEX_NAME, None, ctx.index.refused)
        return
    if ctx.index_text is None:
        return
    caps = ctx.caps
    lines, size = count_lines(ctx.index_text), len(ctx.index_text.encode("utf-8"))
    if lines > caps.max_lines:
        cut = f"everything after line {caps.max_lines} is cut off when the agent reads it"
        yield Hit(INDEX_NAME, caps.max_lines + 1, f"{lines} lines: {cut}", _REGENERATE)
    if size > caps.max_bytes:
        cut = f"everything after byte {caps.max_bytes:,} is cut off when the agent reads it"
        yield Hit(INDEX_NAME, None, f"{size:,} bytes: {cut}", _REGENERATE)


@rule(
    "I005", "left-out-memory", Severity.WARNING,
    "Finds memories left out of MEMORY.md to keep the index within its caps.",
    why="""When the memories do not all fit, `memdir index` leaves out the least valuable (lowest
    `importance`, then oldest) rather than let the reader cut the tail blindly. A left-out
    memory is still in the folder but the agent is not told about it. An entry too long to ever
    fit in the room the hand-written text leaves is named as such.""",
    example="240 memories, of which 40 do not fit in 200 lines",
    instead="""Raise the `importance` of what must be seen, archive memories that no longer matter
    (`memdir rm`), or shorten descriptions.""",
)  # fmt: skip
def left_out_memory(ctx: LintContext) -> Iterator[Hit]:
    for left in ctx.index.left_out:
        memory = left.memory
        changed = memory.last_changed.isoformat() if memory.last_changed else "undated"
        yield Hit(
            memory.path, None, f"left out of MEMORY.md ({left.reason}; importance {memory.importance:g}, {changed})"
        )


@rule(
    "I006", "long-index-entry", Severity.INFO,
    f"Finds index entries (list items linking a file) over {ENTRY_MAX} characters.",
    why=f"""Each index line is read at the start of every session. Past {ENTRY_MAX} characters an
    entry is a summary, not a hook, and takes the room of other memories within the caps. A long
    description is reported by F008 on the memory itself; this rule finds entries written or
    edited by hand. Off by default: 14 of 39 real folders have such lines, mostly a little over
    the limit; turn it on with `--extend-select I006` or `extend-select` in the config.""",
    example="- [deploy](project_deploy.md) — We deploy to Fly.io from main; staging is web-staging, "
    "previews get Neon branches, and the runbook is in Notion under Ops",
    instead="- [deploy](project_deploy.md) — We deploy to Fly.io from main; staging and previews are separate apps",
    default=False,  # a third of real folders have such lines; enforce it with --extend-select I006
)  # fmt: skip
def long_index_entry(ctx: LintContext) -> Iterator[Hit]:
    if ctx.index_text is None:
        return
    # An entry memdir writes is as long as the memory's description makes it: F008's business. They
    # are rendered only when a line is long: most indexes have none, and rendering takes a while.
    generated: set[str] | None = None
    for number, line in enumerate(split_lines(ctx.index_text), start=1):
        if len(line) <= ENTRY_MAX or entry_target(line) is None:
            continue
        if generated is None:
            generated = {render_entry(m) for m in ctx.scan.memories if m.type is not None}
        if line.strip() not in generated:
            yield Hit(INDEX_NAME, number, f"entry is {len(line)} characters (limit {ENTRY_MAX})")


@rule(
    "I007", "excluded-memory-indexed", Severity.ERROR,
    "Finds superseded, quarantined, archived or expired memories still listed in MEMORY.md.",
    why="""A superseded memory says what is no longer true; a quarantined one was read in a tool's
    output and never confirmed. Listed in the index, the agent meets them at every session start
    as if they were current.""",
    example="- [deploy-heroku](project_deploy-heroku.md) — We deploy to Heroku   (status: superseded)",
    instead="Only the memory that superseded it is listed.",
    fix=_INDEX_FIX,
    fixable=Applicability.SAFE,
)  # fmt: skip
def excluded_memory_indexed(ctx: LintContext) -> Iterator[Hit]:
    if ctx.index_text is None:
        return
    lines = {link.target: link.line for link in reversed(find_links(ctx.index_text))}
    for excluded in ctx.index.excluded:
        line = lines.get(excluded.memory.path)
        if line is not None:
            message = f"MEMORY.md still lists {excluded.memory.path}, which is {excluded.reason}"
            yield Hit(INDEX_NAME, line, message, _REGENERATE)

"""I: MEMORY.md. Whether the index on disk is the one memdir would write, and fits its caps."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from memdir.index import MAX_BYTES, MAX_LINES, count_lines, find_links, split_lines
from memdir.lint.registry import Hit, LintContext, Severity, rule
from memdir.model import INDEX_NAME


@rule(
    "I001", "stale-index", Severity.ERROR,
    "MEMORY.md is not what `memdir index` would write.",
    """MEMORY.md is generated from the memory files. When it drifts (a memory added, edited or
    removed by hand) the agent starts its sessions from a wrong picture: missing memories,
    outdated descriptions, entries for superseded facts. Run `memdir index` (safe fix: it keeps
    every hand-written line). In CI, `memdir index --check` fails on the same condition.""",
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
        yield INDEX_NAME, None, f"MEMORY.md is missing; `memdir index` would write {len(new)} lines"
    else:
        yield INDEX_NAME, first, f"out of date: `memdir index` would add {added} and remove {removed} lines"


@rule(
    "I002", "broken-index-link", Severity.ERROR,
    "MEMORY.md links to a file that does not exist.",
    """A link in the index that leads nowhere sends the agent looking for a memory that is gone, or
    was never written (a template left as `{module}_project.md`). memdir keeps such lines because
    a person may have written them; fix the target or delete the line (`memdir index
    --drop-missing` removes list entries whose file is gone). URLs are not checked.""",
)  # fmt: skip
def broken_link(ctx: LintContext) -> Iterator[Hit]:
    if ctx.index_text is None:
        return
    for link in find_links(ctx.index_text):
        if link.target is not None and not (ctx.root / link.target).exists():
            yield INDEX_NAME, link.line, f"links to {link.raw_target}, which does not exist"


@rule(
    "I003", "unindexed-memory", Severity.ERROR,
    "A memory that belongs in the index is not listed in MEMORY.md.",
    """A memory missing from the index is invisible: the agent reads MEMORY.md at the start of a
    session and never learns the file exists. Run `memdir index` (safe fix). Memories left out
    on purpose to fit the caps are reported by I005 instead.""",
)  # fmt: skip
def unindexed_memory(ctx: LintContext) -> Iterator[Hit]:
    if ctx.index_text is None and ctx.index_problem is not None:
        return
    linked = {link.target for link in find_links(ctx.index_text or "")}
    for memory in ctx.index.entries:
        if memory.path not in linked:
            yield memory.path, None, "not listed in MEMORY.md; run `memdir index`"


@rule(
    "I004", "index-over-cap", Severity.ERROR,
    f"MEMORY.md is over {MAX_LINES} lines or {MAX_BYTES:,} bytes.",
    f"""Claude Code loads only the first {MAX_LINES} lines and {MAX_BYTES:,} bytes of MEMORY.md and
    silently drops the rest, so whatever sits at the end never reaches the agent. `memdir index`
    always writes an index within the caps by leaving out the least valuable entries; it will not
    cut hand-written text, so when that alone is too long, move some of it into memory files.""",
)  # fmt: skip
def index_over_cap(ctx: LintContext) -> Iterator[Hit]:
    if ctx.index.refused is not None:
        yield INDEX_NAME, None, ctx.index.refused
        return
    if ctx.index_text is None:
        return
    caps = ctx.caps
    lines, size = count_lines(ctx.index_text), len(ctx.index_text.encode("utf-8"))
    if lines > caps.max_lines:
        cut = f"everything after line {caps.max_lines} is cut off when the agent reads it"
        yield INDEX_NAME, caps.max_lines + 1, f"{lines} lines: {cut}"
    if size > caps.max_bytes:
        yield (
            INDEX_NAME,
            None,
            f"{size:,} bytes: everything after byte {caps.max_bytes:,} is cut off when the agent reads it",
        )


@rule(
    "I005", "left-out-memory", Severity.WARNING,
    "A memory is left out of MEMORY.md to keep the index within its caps.",
    """When the memories do not all fit, `memdir index` leaves out the least valuable (lowest
    `importance`, then oldest) rather than let the reader cut the tail blindly. A left-out memory
    is still in the folder but the agent is not told about it. Raise its `importance`, archive
    memories that no longer matter (`memdir rm`), or shorten descriptions.""",
)  # fmt: skip
def left_out_memory(ctx: LintContext) -> Iterator[Hit]:
    for left in ctx.index.left_out:
        memory = left.memory
        changed = memory.last_changed.isoformat() if memory.last_changed else "undated"
        yield memory.path, None, f"left out of MEMORY.md ({left.reason}; importance {memory.importance:g}, {changed})"

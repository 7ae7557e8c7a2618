"""F: files and frontmatter. Whether each file can be read as a memory, and has what one needs."""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from memdir.lint.registry import Hit, LintContext, Severity, rule
from memdir.model import DESCRIPTION_MAX, INDEX_NAME, MemoryType

_TYPES = ", ".join(t.value for t in MemoryType)


def _problems(ctx: LintContext, kind: str) -> Iterator[Hit]:
    for problem in ctx.scan.problems:
        if problem.kind == kind:
            yield problem.path, problem.line, problem.message


@rule(
    "F001", "missing-frontmatter", Severity.WARNING,
    "A markdown file in the memory folder has no frontmatter.",
    """A memory file starts with a YAML block between `---` lines holding at least `name`,
    `description` and `type`. A file without one is not a memory: it is never indexed, and the
    agent only finds it by chance. Add the frontmatter, or move notes that are not memories out
    of the memory folder. Example: `---\\nname: deploy-target\\ndescription: We deploy to Fly.io
    from main\\ntype: project\\n---`. No automatic fix.""",
)  # fmt: skip
def missing_frontmatter(ctx: LintContext) -> Iterator[Hit]:
    yield from _problems(ctx, "no-frontmatter")


@rule(
    "F002", "invalid-frontmatter", Severity.ERROR,
    "The frontmatter is not valid YAML, or not a mapping of fields.",
    """Broken YAML hides the whole memory: memdir cannot read its name, type or description, so it
    is not indexed (an existing index line for it is kept as written). The usual cause is an
    unquoted value containing `: ` or ` #`, which YAML reads as a nested mapping or a comment:
    `description: Note: use npm` must be `description: "Note: use npm"`. No automatic fix.""",
)  # fmt: skip
def invalid_frontmatter(ctx: LintContext) -> Iterator[Hit]:
    yield from _problems(ctx, "invalid-frontmatter")


@rule(
    "F003", "unreadable-file", Severity.ERROR,
    "A file cannot be read as text: not UTF-8, binary, too large, or a directory named `*.md`.",
    """Memory files are small UTF-8 markdown files. memdir skips anything else (and MEMORY.md
    itself if it is not UTF-8, which `memdir index` then refuses to rewrite) and names it here.
    Re-save the file as UTF-8, or move it out of the memory folder. No automatic fix.""",
)  # fmt: skip
def unreadable_file(ctx: LintContext) -> Iterator[Hit]:
    yield from _problems(ctx, "unreadable")
    index_reported = any(p.path == INDEX_NAME for p in ctx.scan.problems)  # e.g. by S001
    if ctx.index_problem is not None and not index_reported:
        yield INDEX_NAME, None, ctx.index_problem


@rule(
    "F004", "missing-name", Severity.ERROR,
    "The frontmatter has no `name`, or an empty one.",
    """`name` identifies a memory to people and to `memdir show/edit/rm`, and is the link text in
    the index; without it the index falls back to the file name. Write a short, stable name:
    `name: lint-before-commit`. No automatic fix.""",
)  # fmt: skip
def missing_name(ctx: LintContext) -> Iterator[Hit]:
    for memory in ctx.scan.memories:
        if not memory.name:
            yield memory.path, memory.line_of("name"), "no `name` (the index shows the file name instead)"


@rule(
    "F005", "missing-description", Severity.ERROR,
    "The frontmatter has no `description`, or an empty one.",
    """The description is the index hook: the one line an agent reads at the start of every session
    to decide whether the memory matters. Without it the index line is a bare link. Write one
    specific line under 150 characters: `description: Run npm run lint before every commit`.
    No automatic fix.""",
)  # fmt: skip
def missing_description(ctx: LintContext) -> Iterator[Hit]:
    for memory in ctx.scan.memories:
        if not memory.description:
            yield memory.path, memory.line_of("description"), "no `description`: the index line will be a bare link"


@rule(
    "F006", "missing-type", Severity.ERROR,
    "The frontmatter has no `type` (neither top-level nor under `metadata:`).",
    """Every memory is one of user, feedback, project or reference; the type decides what the body
    must hold and where the entry sits in the index. A memory without a type is not indexed.
    Add `type: feedback` (or whichever fits). No automatic fix.""",
)  # fmt: skip
def missing_type(ctx: LintContext) -> Iterator[Hit]:
    for memory in ctx.scan.memories:
        if memory.raw_type is None:
            prefix = memory.stem.split("_", 1)[0].lower()
            hint = f"; the file name suggests `type: {prefix}`" if prefix in {t.value for t in MemoryType} else ""
            yield memory.path, 1, f"no `type`, so it is not indexed{hint}"


@rule(
    "F007", "unknown-type", Severity.ERROR,
    "`type` is not one of user, feedback, project, reference.",
    """The type is a closed set; a custom type (`handoff`, `note`) means nothing to the agent and the
    memory is not indexed. Pick the nearest of user, feedback, project, reference: a decision or
    deadline is `project`, a rule learnt from a correction is `feedback`. No automatic fix.""",
)  # fmt: skip
def unknown_type(ctx: LintContext) -> Iterator[Hit]:
    for memory in ctx.scan.memories:
        raw = memory.raw_type
        if raw is not None and memory.type is None:
            near = difflib.get_close_matches(raw.lower(), [t.value for t in MemoryType], n=1, cutoff=0.6)
            hint = f"did you mean `{near[0]}`?" if near else f"use one of {_TYPES}"
            line = memory.line_of("metadata" if memory.type_is_nested else "type")
            yield memory.path, line, f"unknown type {raw!r}, so it is not indexed; {hint}"


@rule(
    "F008", "long-description", Severity.WARNING,
    f"The description is over {DESCRIPTION_MAX} characters.",
    f"""The description is one line of the index, which every session loads within a tight budget.
    Past {DESCRIPTION_MAX} characters it crowds out other memories and stops being a hook. Keep
    the detail in the body and the description to what decides relevance. No automatic fix.""",
)  # fmt: skip
def long_description(ctx: LintContext) -> Iterator[Hit]:
    for memory in ctx.scan.memories:
        length = len(memory.description)
        if length > DESCRIPTION_MAX:
            yield (
                memory.path,
                memory.line_of("description"),
                f"description is {length} characters (limit {DESCRIPTION_MAX})",
            )

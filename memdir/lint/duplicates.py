"""D: duplicates. Two memories that claim the same identity."""

from __future__ import annotations

from collections.abc import Iterator

from memdir.lint.registry import Hit, LintContext, Severity, rule
from memdir.model import Memory, name_key


@rule(
    "D001", "duplicate-name", Severity.ERROR,
    "Finds two memories with the same `name`, ignoring case, spacing and punctuation.",
    why="""A name picks one memory for `memdir show/edit/rm` and for the agent; two memories with one
    name are usually a fact saved twice, or a change saved beside the old version instead of over
    it. Reported on each later file, naming the first.""",
    example="feedback_lint.md and team/feedback_lint.md, both `name: lint-before-commit`",
    instead="One memory `lint-before-commit` holding both texts, or two distinct names.",
)  # fmt: skip
def duplicate_name(ctx: LintContext) -> Iterator[Hit]:
    first: dict[str, Memory] = {}
    for memory in ctx.scan.memories:
        key = name_key(memory.name) if memory.name else ""
        if not key:
            continue
        if key in first:
            yield Hit(memory.path, memory.line_of("name"), f"same name {memory.name!r} as {first[key].path}")
        else:
            first[key] = memory

"""S: security. What could leak out of, or reach into, the memory folder."""

from __future__ import annotations

from collections.abc import Iterator

from memdir.lint.registry import Hit, LintContext, Severity, rule


@rule(
    "S001", "symlink-outside-folder", Severity.ERROR,
    "A symlink in the memory folder points outside it.",
    """memdir never follows a link out of the memory folder: the target could be any file on the
    machine (a key, a config), which would then be read, indexed and shown to the agent, or
    committed by a teammate's tool. Replace the link with a copy of what should be a memory, or
    remove it. No automatic fix.""",
)  # fmt: skip
def symlink_outside(ctx: LintContext) -> Iterator[Hit]:
    for problem in ctx.scan.problems:
        if problem.kind == "symlink-outside":
            yield problem.path, None, problem.message

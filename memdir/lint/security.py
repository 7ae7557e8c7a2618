"""S: security. What could leak out of, or reach into, the memory folder."""

from __future__ import annotations

from collections.abc import Iterator

from memdir.lint.registry import Hit, LintContext, Severity, rule


@rule(
    "S001", "symlink-outside-folder", Severity.ERROR,
    "Finds symlinks in the memory folder that point outside it.",
    why="""memdir never follows a link out of the memory folder: the target could be any file on the
    machine (a key, a config), which would then be read, indexed and shown to the agent, or
    committed by a teammate's tool.""",
    example="team/shared.md -> /home/ana/.aws/credentials",
    instead="A copy of what should be a memory, inside the folder; or no link.",
)  # fmt: skip
def symlink_outside(ctx: LintContext) -> Iterator[Hit]:
    for problem in ctx.scan.problems:
        if problem.kind == "symlink-outside":
            yield Hit(problem.path, None, problem.message)

"""C: content. What should not be a memory at all, and memories past their time.

A memory holds what cannot be read off the repository: the why, the preference, the pointer.
Code, file trees, commit logs and stack traces can be (and go stale the day they are pasted).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from memdir.core.age import AgeSource
from memdir.core.model import Memory, MemoryType
from memdir.lint.registry import Hit, LintContext, Severity, at_line_starts, line_at, newline_and_body, rule

CODE_BLOCK_MAX_LINES = 15
BODY_MAX_LINES = 200  # the reader's per-memory recall cap
BODY_MAX_BYTES = 4096
RECIPE_MIN_STEPS = 6
HASHES_MIN = 3

_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})", re.MULTILINE)
_TREE = re.compile(r"^[ \t│|]*(?:├──|└──|├─|└─|\|--|`--)", re.MULTILINE)
_HASH = re.compile(r"(?<![\w/.#-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?![\w/-])(?!\.\w)")
# Where a hash can start: a _HASH match is a whole run of hex digits (one before it or after it is a
# word character), so only runs of seven or more need its test. They are found as the runs of "x"
# in a one-byte copy of the body where each hex digit is an "x" and every other character a space
# (one beyond ASCII is one "?" first, so offsets are kept): the scan for "x" skips in C, where a
# pattern such as [0-9a-f]{7,} stopped at every a, b, c, d, e and f of the prose.
_HEX_MARKS = bytes(ord("x") if chr(byte) in "0123456789abcdef" else ord(" ") for byte in range(256))
_MARKED_RUN = re.compile(rb"xxxxxxx+")  # not x{7,}: a pattern opening with a literal is scanned for in C
_TRACE = re.compile(
    r"^(?:Traceback \(most recent call last\):"  # Python
    r"|[ \t]+File \"[^\"]+\", line \d+"  # Python frames
    r"|[ \t]+at [\w$.<>]+ ?\(?[^()\s]*:\d+(?::\d+)?\)?"  # JavaScript, Java
    r"|goroutine \d+ \[|panic: "  # Go
    r"|[ \t]+\d+: 0x[0-9a-f]+ - )",  # Rust
    re.MULTILINE,
)
# A code span that runs something: a shell command, not an identifier or a file name.
_COMMAND = re.compile(
    r"`(?:\$ )?(?:sudo |\./|(?:git|npm|pnpm|yarn|npx|pip|pipx|uv|python3?|node|docker|kubectl|helm|make|cd|curl|"
    r"wget|cargo|go|terraform|bash|sh|brew|apt|apt-get|systemctl|psql|ssh|scp|rm|mv|cp|gh|aws|gcloud|az)\s)"
)
_STEP = re.compile(r"^[ \t]{0,3}(?:(?P<n>\d{1,2})[.)]|Step (?P<s>\d{1,2}):?)[ \t]+\S", re.IGNORECASE)
_STEP_LINE = re.compile(_STEP.pattern, re.IGNORECASE | re.MULTILINE)  # _STEP at any line's start


def _fenced_blocks(view: str, pos: int) -> Iterator[tuple[int, int]]:
    """(first line index, line count) of each fenced code block, by 0-based body line, in the body
    that `view` holds from `pos` on after a newline (newline_and_body: read in place, not copied)."""
    if view.find("```", pos) < 0 and view.find("~~~", pos) < 0:
        return  # no fence (most memories): no line counting
    opened: tuple[str, int] | None = None
    line, counted = 0, pos  # the body line of the newline at `counted`
    for found in at_line_starts(_FENCE).finditer(view, pos):  # a fence ends in ` or ~, not a newline
        line += view.count("\n", counted, found.start())
        counted = found.start()
        fence = found.group(1)
        if opened is None:
            opened = (fence, line)
        elif fence[0] == opened[0][0] and len(fence) >= len(opened[0]):
            yield opened[1], line - opened[1] - 1
            opened = None
    if opened is not None:  # an unclosed fence runs to the end
        yield opened[1], view.count("\n", pos + 1) - opened[1]


def _body_line(memory: Memory, body_offset: int) -> int:
    return line_at(memory.doc.text, memory.doc.body_start + body_offset)  # memory.body is a new string each time


def _repeated(ctx: LintContext, pattern: re.Pattern[str], describe: Callable[[int], str]) -> Iterator[Hit]:
    """A hit on each memory whose body has three or more lines of `pattern`: one is a mention,
    three are a paste."""
    newline_first = at_line_starts(pattern)
    for memory in ctx.scan.memories:
        view, pos = newline_and_body(memory)
        found = list(newline_first.finditer(view, pos))
        if len(found) >= 3:
            yield Hit(memory.path, _body_line(memory, found[0].start() - pos), describe(len(found)))


@rule(
    "C001", "long-code-block", Severity.WARNING,
    f"Finds fenced code blocks over {CODE_BLOCK_MAX_LINES} lines in a memory.",
    why="""Code lives in the repository, where it is tested and kept current; a copy in a memory
    goes stale the day it is pasted and costs recall budget every time it is loaded. A memory
    says what the code cannot: why it is written this way, and where to look.""",
    example="A 40-line ```python block copied from src/deploy.py",
    instead="Deploys go through `src/deploy.py:release()`; it must run the migrations first (see **Why:**).",
)  # fmt: skip
def long_code_block(ctx: LintContext) -> Iterator[Hit]:
    for memory in ctx.scan.memories:
        for first, count in _fenced_blocks(*newline_and_body(memory)):
            if count > CODE_BLOCK_MAX_LINES:
                line = memory.doc.body_line + first
                yield Hit(
                    memory.path,
                    line,
                    f"code block of {count} lines (limit {CODE_BLOCK_MAX_LINES}); point at the code instead",
                )


@rule(
    "C002", "file-tree", Severity.WARNING,
    "Finds directory trees (`├──`, `└──`) pasted into a memory.",
    why="""A file tree is derivable: `ls` or `tree` shows the current one, while the pasted copy
    shows the one from the day it was written and misleads once files move.""",
    example="src/\n├── api/\n└── web/",
    instead="The API and the web app are separate packages under src/; shared types live in src/common.",
)  # fmt: skip
def file_tree(ctx: LintContext) -> Iterator[Hit]:
    yield from _repeated(ctx, _TREE, lambda n: f"a file tree of {n} entries; the repository shows the current one")


@rule(
    "C003", "commit-log", Severity.WARNING,
    f"Finds commit hashes ({HASHES_MIN} or more) or pasted `git log` output in a memory.",
    why="""History is in git, searchable and exact. A list of commits in a memory duplicates it and
    says nothing about why; one hash as a pointer is fine.""",
    example="Fixed in 3f2a9c1, 9bd04e7 and a71c2f0 after the cache bug.",
    instead="The cache must be invalidated on deploy: a stale cache served old prices for a day (2026-10-02).",
)  # fmt: skip
def commit_log(ctx: LintContext) -> Iterator[Hit]:
    for memory in ctx.scan.memories:
        # The whole file marked, the body searched: no copy of the body. The frontmatter ends in a
        # newline, so no run starts before the body and runs into it, and _HASH's look behind sees
        # that newline where the body alone would have its start: either way no hash is joined.
        text, start = memory.doc.text, memory.doc.body_start
        marked = text.encode("ascii", "replace").translate(_HEX_MARKS)
        found = [m for run in _MARKED_RUN.finditer(marked, start) if (m := _HASH.match(text, run.start()))]
        distinct = {m.group(0)[:7] for m in found}
        if len(distinct) >= HASHES_MIN:
            line = line_at(text, found[0].start())
            yield Hit(memory.path, line, f"{len(distinct)} commit hashes; git has the history, keep the why")


@rule(
    "C004", "stack-trace", Severity.WARNING,
    "Finds stack traces (Python, JavaScript, Java, Go, Rust) pasted into a memory.",
    why="""A trace describes one failure of one version of the code. It is long, goes stale with the
    next refactor, and tells the agent nothing it should do; the lesson learnt from it does.""",
    example='Traceback (most recent call last):\n  File "app.py", line 3, in <module>\n'
    '  File "db.py", line 9, in connect',
    instead="**Why:** connections opened at import time broke the test runner's fork (2026-09-14).",
)  # fmt: skip
def stack_trace(ctx: LintContext) -> Iterator[Hit]:
    yield from _repeated(ctx, _TRACE, lambda n: f"a stack trace ({n} frames); keep the lesson, not the trace")


@rule(
    "C005", "fix-recipe", Severity.INFO,
    f"Finds step-by-step procedures: {RECIPE_MIN_STEPS} or more numbered steps, most with a command.",
    why="""A long recipe for fixing something is usually derivable from the fix itself (the code,
    the commit, the runbook) and ages with it. A memory keeps the rule and the reason; a
    runbook belongs in the repository's docs, with a reference memory pointing at it.""",
    example="1. Stop the worker\n2. Drain the queue\n3. ...\n8. Restart the worker",
    instead="The queue must be drained before a worker restart; the runbook is docs/ops/restart.md.",
)  # fmt: skip
def fix_recipe(ctx: LintContext) -> Iterator[Hit]:
    step_lines = at_line_starts(_STEP_LINE)  # a step ends in a non-space
    for memory in ctx.scan.memories:
        if len(step_lines.findall(*newline_and_body(memory))) < RECIPE_MIN_STEPS:
            continue  # too few numbered lines for a procedure (most memories): no line walk
        for first, steps in _recipes(memory.body):
            yield Hit(
                memory.path,
                memory.doc.body_line + first,
                f"a procedure of {steps} numbered steps with commands; keep the rule, point at a runbook",
            )


def _recipes(body: str) -> Iterator[tuple[int, int]]:
    """(first line, steps) of each numbered list that reads as a procedure: one list counting up
    1, 2, 3... for RECIPE_MIN_STEPS steps or more, at least half of them running a command
    (`git ...`, `npm ...`). A long numbered list of facts or options is not a recipe."""
    run: list[bool] = []  # per step: has a code span
    start = 0
    for number, line in enumerate([*body.split("\n"), "END"]):
        step = _STEP.match(line)
        value = int(step["n"] or step["s"]) if step else None
        if value is not None and value == len(run) + 1:
            if not run:
                start = number
            run.append(_COMMAND.search(line) is not None)
            continue
        if value is None and run and (not line.strip() or line[:1] in " \t"):
            continue  # a blank or indented line inside the list
        if len(run) >= RECIPE_MIN_STEPS and sum(run) * 2 >= len(run):
            yield start, len(run)
        run = [True] if value == 1 else []
        start = number


@rule(
    "C006", "long-body", Severity.WARNING,
    f"Finds memory bodies over {BODY_MAX_LINES} lines or {BODY_MAX_BYTES:,} bytes.",
    why=f"""Recall loads a memory's body whole, within a per-memory cap of {BODY_MAX_LINES} lines and
    {BODY_MAX_BYTES:,} bytes; the rest is cut off. A memory that long is usually several memories,
    or a document that belongs in the repository.""",
    example="A 9 KB project memory covering the architecture, the deploy and the on-call rota",
    instead="Three memories (architecture decision, deploy target, on-call rota), or a doc and a reference memory.",
)  # fmt: skip
def long_body(ctx: LintContext) -> Iterator[Hit]:
    for memory in ctx.scan.memories:
        text, start = memory.doc.text, memory.doc.body_start  # counted in place: memory.body is a copy
        lines = text.count("\n", start) + 1
        if lines <= BODY_MAX_LINES and (len(text) - start) * 4 <= BODY_MAX_BYTES:
            continue  # within both caps whatever its characters (UTF-8 takes at most four bytes each)
        size = len(text) - start if text.isascii() else len(text[start:].encode("utf-8"))
        if lines > BODY_MAX_LINES or size > BODY_MAX_BYTES:
            yield Hit(
                memory.path,
                memory.doc.body_line,
                f"body is {lines} lines and {size:,} bytes (cap {BODY_MAX_LINES} lines, {BODY_MAX_BYTES:,} bytes)",
            )


@rule(
    "C007", "stale-project", Severity.WARNING,
    "Finds project memories not updated for `stale-project-days` (default 90).",
    why="""Project memories hold decisions, deadlines and plans, which change. One that nobody has
    touched in three months may describe a project that has moved on, and the agent will act on
    it. Confirm it and set `updated`, or archive it. The age is the memory's age as everywhere in
    memdir: its `updated`/`created` date, else its modification time, else (where a checkout reset
    every modification time) its last commit; a memory with none is not judged. The limit is
    configurable in `[tool.memdir.lint] stale-project-days`.""",
    example="type: project\ncreated: 2026-03-01   (no updated:, today is 2026-11-22)",
    instead="type: project\ncreated: 2026-03-01\nupdated: 2026-11-22",
)  # fmt: skip
def stale_project(ctx: LintContext) -> Iterator[Hit]:
    limit = ctx.config.lint.stale_project_days
    for memory in ctx.scan.memories:
        if memory.type is not MemoryType.PROJECT or memory.exclusion(ctx.today) is not None:
            continue
        age = ctx.scan.ages.of(memory)
        if age.day is None:
            continue
        days = (ctx.today - age.day).days
        if days > limit:
            key = next((k for k in ("updated", "modified", "updated_at", "created") if k in memory.fields), "created")
            by = "" if age.source is AgeSource.FRONTMATTER else f", by {age.describe()}"
            yield Hit(
                memory.path,
                memory.line_of(key),
                f"project memory last changed {age.day.isoformat()} ({days} days ago{by}); confirm it and set "
                "`updated`, or archive it",
            )


@rule(
    "C008", "expired-memory", Severity.WARNING,
    "Finds memories whose `expires` date has passed but which are still in the folder.",
    why="""An expired memory is no longer indexed, but it still sits among the live ones, is found by
    search and by tools that read the folder, and tells a reader something that has stopped
    being true.""",
    example="expires: 2026-10-31   (today is 2026-11-22)",
    instead="`memdir rm NAME` moves it to .archive/, where it is kept but out of the way.",
)  # fmt: skip
def expired_memory(ctx: LintContext) -> Iterator[Hit]:
    for memory in ctx.scan.memories:
        expires = memory.date("expires")
        if expires is not None and expires <= ctx.today:
            yield Hit(
                memory.path, memory.line_of("expires"), f"expired on {expires.isoformat()}; archive it with `memdir rm`"
            )

"""B: the body. Feedback and project memories carry their reason and their trigger; dates are absolute."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import NamedTuple

from memdir.core.age import Age
from memdir.core.model import Memory
from memdir.lint.registry import (
    Applicability,
    Edit,
    Fix,
    Hit,
    LintContext,
    Severity,
    at_line_starts,
    line_at,
    newline_and_body,
    rule,
)
from memdir.text.dates import DateSpan, find_relative_dates_in
from memdir.text.datetext import period_in_place


def _alternation(labels: Sequence[str]) -> str:
    """The labels as a regex alternation, longest first, any run of spaces where a label has one."""
    return "|".join(re.escape(label).replace(r"\ ", r"\s+") for label in sorted(labels, key=len, reverse=True))


def _opening(labels: Sequence[str], *markup: str) -> str:
    """A lookahead for the characters a label (or `markup` before it) can start with, a space standing
    for any whitespace as in _alternation. Implied by what follows it, it lets `re` pass over most
    lines with one test instead of one a label. Empty when a label is empty: anything can follow."""
    if not all(labels):
        return ""
    first = {r"\s" if label[0].isspace() else re.escape(label[0]) for label in labels}
    return f"(?=[{''.join(sorted(first | {re.escape(m) for m in markup}))}])"


@lru_cache(maxsize=16)
def label_pattern(labels: Sequence[str]) -> re.Pattern[str]:
    """A line that opens with one of `labels`: bold or not, any colon width, or as a heading."""
    names = _alternation(labels)
    line, word = _opening(labels, *" \t>*+_#-"), _opening(labels)
    bold = r"(?:\*\*|__)?"
    return re.compile(
        rf"^{line}[ \t>]*(?:[-*+][ \t]+)?(?:"
        rf"{bold}[ \t]*{word}(?:{names})[ \t]*{bold}[ \t]*[:：]"  # **Why:**, **Why**:, Why：, **Pourquoi :**
        rf"|#{{1,6}}[ \t]+{word}(?:{names})[ \t]*[:：]?[ \t]*$"  # ## Why
        rf")",
        re.IGNORECASE | re.MULTILINE,
    )


def has_label(body: str, labels: Sequence[str]) -> bool:
    # A label ends in its colon or before a line's end, never just after a newline: at_line_starts holds.
    return at_line_starts(label_pattern(tuple(labels))).search("\n" + body) is not None


def _needs_labels(ctx: LintContext) -> Iterator[Memory]:
    for memory in ctx.scan.memories:
        if memory.type is not None and memory.type.needs_why_and_how:
            yield memory


class LabelLines(NamedTuple):
    """What the three label rules need to know of one body: whether it has a Why line (B001) and a
    How to apply line (B002), and the label forms on its lines (B004), in order."""

    why: bool
    how: bool
    forms: list[re.Match[str]]  # matches of at_line_starts(_label_forms(why + how)) in newline_and_body


def label_lines(view: str, pos: int, why: Sequence[str], how: Sequence[str]) -> LabelLines:
    """LabelLines of the body `view[pos:]` (as newline_and_body gives it), in one walk of its lines.

    One pattern for both label lists finds every line that either list's pattern finds (an
    alternation backtracks to each of its words); only those lines, one or two in most bodies, are
    tried with the Why, the How and the form patterns, instead of each walking every line. A label
    written over two lines ("How to\napply:") could hide the start of the next line from the walk:
    then the three patterns walk the body as before."""
    labels = (*why, *how)
    walk = at_line_starts(label_pattern(labels))
    why_line, how_line = at_line_starts(label_pattern(tuple(why))), at_line_starts(label_pattern(tuple(how)))
    form = at_line_starts(_label_forms(labels))
    has_why = has_how = False
    forms: list[re.Match[str]] = []
    for found in walk.finditer(view, pos):
        at = found.start()
        shaped = form.match(view, at)
        if view.find("\n", at + 1, max(found.end(), shaped.end() if shaped else 0)) >= 0:
            return LabelLines(
                why_line.search(view, pos) is not None,
                how_line.search(view, pos) is not None,
                list(form.finditer(view, pos)),
            )
        has_why = has_why or why_line.match(view, at) is not None
        has_how = has_how or how_line.match(view, at) is not None
        if shaped is not None:
            forms.append(shaped)
    return LabelLines(has_why, has_how, forms)


def _label_lines(ctx: LintContext) -> list[tuple[Memory, LabelLines]]:
    """label_lines of every feedback and project memory, worked out once for B001, B002 and B004."""

    def walk() -> list[tuple[Memory, LabelLines]]:
        why, how = ctx.config.why_labels, ctx.config.how_labels
        return [(memory, label_lines(*newline_and_body(memory), why, how)) for memory in _needs_labels(ctx)]

    return ctx.shared("body.label_lines", walk)


_FEEDBACK = """\
    ---
    name: lint-before-commit
    description: Run npm run lint before every commit
    type: feedback
    ---
    Run `npm run lint` before every commit."""


@rule(
    "B001", "missing-why", Severity.WARNING,
    "Finds feedback and project memories with no **Why:** line.",
    why="""Feedback and project memories record a rule or a decision; the reason is what lets the
    agent judge edge cases instead of applying the rule blindly, and what tells a later reader
    whether it still holds. Unbolded labels, a full-width colon and translated labels
    (configurable with `why_labels`) are accepted.""",
    example=_FEEDBACK,
    instead=_FEEDBACK + """

    **Why:** CI was red for a whole day over unlinted code (2026-11-20).

    **How to apply:** Before any `git commit` in this repository.""",
)  # fmt: skip
def missing_why(ctx: LintContext) -> Iterator[Hit]:
    for memory, labels in _label_lines(ctx):
        if not labels.why:
            kind = memory.type.value if memory.type else ""
            yield Hit(memory.path, memory.doc.body_line, f"{kind} memory has no **Why:** line")


@rule(
    "B002", "missing-how-to-apply", Severity.WARNING,
    "Finds feedback and project memories with no **How to apply:** line.",
    why="""The trigger says when the memory matters: which command, file or situation. Without it
    the agent has to guess when to recall the rule. Variants as for B001 are accepted
    (`how_labels` in the config).""",
    example=_FEEDBACK + "\n\n    **Why:** CI was red for a whole day over unlinted code (2026-11-20).",
    instead=_FEEDBACK + """

    **Why:** CI was red for a whole day over unlinted code (2026-11-20).

    **How to apply:** Before any `git commit` in this repository.""",
)  # fmt: skip
def missing_how(ctx: LintContext) -> Iterator[Hit]:
    for memory, labels in _label_lines(ctx):
        if not labels.how:
            kind = memory.type.value if memory.type else ""
            yield Hit(memory.path, memory.doc.body_line, f"{kind} memory has no **How to apply:** line")


def _line_span(text: str, line: int) -> tuple[int, int]:
    """Offsets of 1-based `line` in `text`, without its newline."""
    start = 0
    for _ in range(line - 1):
        start = text.index("\n", start) + 1
    end = text.find("\n", start)
    return start, len(text) if end < 0 else end


@rule(
    "B003", "relative-date", Severity.WARNING,
    "Finds relative dates (tomorrow, next Thursday, last week) in a description or body.",
    why="""A memory is read weeks or months after it was written, when "next Thursday" points at the
    wrong day. `memdir add` converts relative dates when it writes; this rule finds the ones
    written by hand and says which date each would be, counted from the file's age: its
    `updated`/`created` date, else its modification time (Claude Code writes no dates), else, where
    a checkout or copy reset every file's modification time at once, its last commit
    (docs/memory-file.md, "A memory's age"). What `memdir add` leaves alone is ignored here too:
    code spans and fenced code, code-like text (`tomorrow()`, `next_week`, `{today}`) and a phrase
    that is all a quotation holds, a label rather than a day (the "Next Week" button).""",
    example="The release freeze starts next Thursday. The webhook failed last week.",
    instead="The release freeze starts 2026-11-26. The webhook failed the week of 2026-11-09.",
    fix="""Replaces each phrase with what it names: a day with its ISO date, a period with the
    period, never with a day that reads as precise: "last week" becomes "the week of 2026-11-09",
    "next quarter" "in 2027-Q1" ("by 2027-Q1" after a preposition), "next month" "in 2026-12",
    "next year" "in 2027"; in other languages the period's ISO form alone (nächste Woche:
    2026-W48). A date that would touch a Latin letter or digit gets a space on that side, since CJK
    text has no word boundary: 明天10点 becomes `2026-11-26 10点`. Safe wherever the file has an age,
    which is the day its text was last written: its own date, its modification time, or its last
    commit; the finding names which. A file with none (no date, every modification time reset by a
    checkout or copy, and no git history to read) gets the finding without a date or a fix: add
    `created:` to its frontmatter.""",
    fixable=Applicability.SAFE,
)  # fmt: skip
def relative_date(ctx: LintContext) -> Iterator[Hit]:
    memories = ctx.scan.memories
    ages = [ctx.scan.ages.of(memory) for memory in memories]
    # A file with no age is searched from today, only to find its phrases: no date is said or written.
    days = [age.day or ctx.today for age in ages]
    # All descriptions and bodies in one call: the date grammar's prefilter is much faster in bulk.
    # The bodies are cut from the files' text as the scan reaches them, not held all at once.
    texts = itertools.chain((m.description for m in memories), (m.body for m in memories))
    found = find_relative_dates_in(texts, days + days)
    for i, (memory, age) in enumerate(zip(memories, ages, strict=True)):
        in_description, in_body = found[i], found[len(memories) + i]
        if not in_description and not in_body:
            continue
        text = memory.doc.text
        description_line = memory.line_of("description")
        for span in in_description:
            line_start, line_end = _line_span(text, description_line)
            where = text.find(span.phrase, line_start, line_end)
            unique = where >= 0 and text.find(span.phrase, where + 1, line_end) < 0
            yield _date_hit(memory, description_line, span, age, where if unique else None)
        for span in in_body:
            start = memory.doc.body_start + span.start
            line = line_at(memory.doc.text, start)  # the whole text: memory.body is a new string each time
            yield _date_hit(memory, line, span, age, start)


def _date_hit(memory: Memory, line: int, span: DateSpan, age: Age, start: int | None) -> Hit:
    """The finding for one phrase at offset `start` of the file, counted from the file's `age`; with
    a fix when the phrase is there (None: not found there alone) and the file has an age. The fix is
    as sure as the finding: the age is the day the text was last written, by the file's own date,
    its modification time, or its last commit."""
    if age.day is None:
        why = "no day to count from: the file states no date, and a checkout or copy reset its modification time"
        return Hit(memory.path, line, f"relative date {span.phrase!r}: write the date ({why}; add `created:`)")
    written = span.phrase if start is None else memory.doc.text  # the phrase alone when its place is unsure
    at = 0 if start is None else start
    end = at + len(span.phrase)
    replacement = period_in_place(written, at, end, span.resolved, span.period)
    counted = f"counting from {age.describe()} {age.day.isoformat()}"
    message = f"relative date {span.phrase!r}: write the date ({replacement.strip()}, {counted})"
    if start is None:
        return Hit(memory.path, line, message)
    fix = Fix(Applicability.SAFE, f"replace {span.phrase!r} with {replacement.strip()}", (Edit(at, end, replacement),))
    return Hit(memory.path, line, message, fix)


@lru_cache(maxsize=16)
def _label_forms(labels: Sequence[str]) -> re.Pattern[str]:
    """A Why/How label opening a line, in any of its markups, with the parts that make it canonical."""
    names = _alternation(labels)
    line, word = _opening(labels, *" \t>*+_-"), _opening(labels)
    return re.compile(
        rf"^{line}(?P<lead>[ \t>]*(?:[-*+][ \t]+)?)(?P<label>(?P<open>\*\*|__)?[ \t]*"
        rf"{word}(?P<word>{names})[ \t]*(?P<shut>\*\*|__)?[ \t]*(?P<colon>[:：])"
        rf"(?:[ \t]*(?P<after>\*\*|__))?)",
        re.IGNORECASE | re.MULTILINE,
    )


@rule(
    "B004", "label-format", Severity.INFO,
    "Finds Why / How to apply labels not written as `**Why:**` (bold, colon inside).",
    why="""Agents and tools look for the labels in the form the memory format defines. A bare
    `Why:` or `**Why**:` is accepted by memdir, but one form across a folder is easier to read,
    grep and parse. The label's own word is kept: `**Warum:**` stays German.""",
    example="Why: CI was red for a whole day over unlinted code.\n**How to apply**: Before any commit.",
    instead="**Why:** CI was red for a whole day over unlinted code.\n**How to apply:** Before any commit.",
    fix="Rewrites the label's markup to `**Label:**`, keeping its word and everything after it (safe).",
    fixable=Applicability.SAFE,
)  # fmt: skip
def label_format(ctx: LintContext) -> Iterator[Hit]:
    # A label ends in its colon or its closing bold, never just after a newline: at_line_starts holds.
    for memory, labels in _label_lines(ctx):
        view, pos = newline_and_body(memory)
        for found in labels.forms:
            end = _label_end(found)
            if end is None:
                continue
            label = view[found.start("label") : end]
            # Offsets in the file: groups are one character on in "\n" + body, `pos` on in the view.
            start, end = (memory.doc.body_start + offset - pos - 1 for offset in (found.start("label"), end))
            wanted = f"**{found['word']}{found['colon']}**"
            edit = Edit(start, end, wanted)
            line = line_at(memory.doc.text, start)
            fix = Fix(Applicability.SAFE, f"write {label.strip()!r} as {wanted!r}", (edit,))
            yield Hit(memory.path, line, f"label {label.strip()!r} is not in the form {wanted!r}", fix)


def _label_end(found: re.Match[str]) -> int | None:
    """Where a non-canonical label ends, or None when it is canonical or its markup is unclear."""
    opened, shut, after = found["open"], found["shut"], found["after"]
    if opened == "**" and shut is None and after == "**":
        return None  # **Why:**
    if shut == opened:  # Why:  **Why**:  (a later ** opens bold text, not the label's)
        return found.end("colon")
    if opened is not None and shut is None and after == opened:  # __Why:__
        return found.end("after")
    return None  # "**Why: the reason**" and the like: rewriting could break the bold

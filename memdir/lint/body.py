"""B: the body. Feedback and project memories carry their reason and their trigger; dates are absolute."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator, Sequence
from functools import lru_cache

from memdir.dates import find_relative_dates
from memdir.lint.registry import Hit, LintContext, Severity, rule
from memdir.model import Memory


@lru_cache(maxsize=16)
def label_pattern(labels: Sequence[str]) -> re.Pattern[str]:
    """A line that opens with one of `labels`: bold or not, any colon width, or as a heading."""
    names = "|".join(re.escape(label).replace(r"\ ", r"\s+") for label in sorted(labels, key=len, reverse=True))
    bold = r"(?:\*\*|__)?"
    return re.compile(
        rf"^[ \t>]*(?:[-*+][ \t]+)?(?:"
        rf"{bold}[ \t]*(?:{names})[ \t]*{bold}[ \t]*[:：]"  # **Why:**, **Why**:, Why：, **Pourquoi :**
        rf"|#{{1,6}}[ \t]+(?:{names})[ \t]*[:：]?[ \t]*$"  # ## Why
        rf")",
        re.IGNORECASE | re.MULTILINE,
    )


def has_label(body: str, labels: Sequence[str]) -> bool:
    return label_pattern(tuple(labels)).search(body) is not None


def _needs_labels(ctx: LintContext) -> Iterator[Memory]:
    for memory in ctx.scan.memories:
        if memory.type is not None and memory.type.needs_why_and_how:
            yield memory


@rule(
    "B001", "missing-why", Severity.WARNING,
    "A feedback or project memory has no **Why:** line.",
    """Feedback and project memories record a rule or a decision; the reason is what lets the agent
    judge edge cases instead of applying the rule blindly, and what tells a later reader whether
    it still holds. Add a line `**Why:** <the incident, request or constraint behind it>`.
    Unbolded labels, a full-width colon and translated labels (configurable with `why_labels`)
    are accepted. No automatic fix.""",
)  # fmt: skip
def missing_why(ctx: LintContext) -> Iterator[Hit]:
    for memory in _needs_labels(ctx):
        if not has_label(memory.body, ctx.config.why_labels):
            yield (
                memory.path,
                memory.doc.body_line,
                f"{memory.type.value if memory.type else ''} memory has no **Why:** line",
            )


@rule(
    "B002", "missing-how-to-apply", Severity.WARNING,
    "A feedback or project memory has no **How to apply:** line.",
    """The trigger says when the memory matters: which command, file or situation. Without it the
    agent has to guess when to recall the rule. Add `**How to apply:** <when and where it
    applies>`. Variants as for B001 are accepted (`how_labels` in the config). No automatic fix.""",
)  # fmt: skip
def missing_how(ctx: LintContext) -> Iterator[Hit]:
    for memory in _needs_labels(ctx):
        if not has_label(memory.body, ctx.config.how_labels):
            yield (
                memory.path,
                memory.doc.body_line,
                f"{memory.type.value if memory.type else ''} memory has no **How to apply:** line",
            )


def _anchor(memory: Memory) -> tuple[dt.date, str]:
    """The day the text was written, as well as the file can tell, and where that came from."""
    if memory.last_changed is not None:
        return memory.last_changed, "its date"
    return dt.date.fromtimestamp(memory.mtime), "its modification time"


@rule(
    "B003", "relative-date", Severity.WARNING,
    "The description or body uses a relative date (tomorrow, next Thursday, last week).",
    """A memory is read weeks or months after it was written, when "next Thursday" points at the
    wrong day. Write the absolute ISO date instead: `2026-11-26`, not `next Thursday`. `memdir add`
    converts relative dates when it writes; this rule finds the ones written by hand, and says
    which date each would be, counted from the file's `updated`/`created` date (else its
    modification time). Code spans and fenced code are ignored.""",
)  # fmt: skip
def relative_date(ctx: LintContext) -> Iterator[Hit]:
    for memory in ctx.scan.memories:
        anchor, anchored_on = _anchor(memory)
        sources = ((memory.description, None), (memory.body, memory.doc.body_line))
        for text, first_line in sources:
            for span in find_relative_dates(text, anchor):
                line = (
                    memory.line_of("description")
                    if first_line is None
                    else first_line + text.count("\n", 0, span.start)
                )
                yield (
                    memory.path,
                    line,
                    f"relative date {span.phrase!r}: write the date ({span.resolved.isoformat()}, "
                    f"counting from {anchored_on} {anchor.isoformat()})",
                )

"""Suppressions: findings a team decided to live with, and the ones that no longer suppress anything.

Three places, as in ruff: `per-file-ignores` in the config (globs relative to the memory folder),
`memdir-ignore: [CODE, ...]` in a memory's frontmatter, and `<!-- memdir-ignore: CODE, ... -->`
in MEMORY.md (on a line of its own for the whole file, after text for that line only).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from fnmatch import fnmatch

from memdir.core.index import split_lines
from memdir.core.model import INDEX_NAME
from memdir.lint.registry import RULES, Finding, Hit, LintContext, Rule, Severity, matching_rules, rule

FIELD = "memdir-ignore"
_COMMENT = re.compile(r"<!--\s*memdir-ignore:\s*(?P<codes>[^>]*?)\s*-->")


@dataclass(frozen=True)
class Suppression:
    path: str  # the file whose findings it silences
    line: int | None  # only findings on this line; None for the whole file
    selector: str  # as written
    where: int  # the line the suppression is written on, for reporting it
    codes: frozenset[str]  # what the selector names; empty when it names no rule

    def covers(self, finding: Finding) -> bool:
        return (
            finding.path == self.path
            and finding.code in self.codes
            and (self.line is None or finding.line == self.line)
        )


def _selectors(value: object) -> list[str]:
    items = value if isinstance(value, list) else str(value).split(",")
    return [str(item).strip() for item in items if str(item).strip()]


def _codes(selector: str) -> frozenset[str]:
    try:
        return frozenset(r.code for r in matching_rules(selector))
    except ValueError:
        return frozenset()


def collect(ctx: LintContext) -> list[Suppression]:
    found: list[Suppression] = []
    for memory in ctx.scan.memories:
        if FIELD in memory.fields:
            where = memory.line_of(FIELD)
            for selector in _selectors(memory.fields[FIELD]):
                found.append(Suppression(memory.path, None, selector, where, _codes(selector)))
    for number, text in enumerate(split_lines(ctx.index_text or ""), start=1):
        for comment in _COMMENT.finditer(text):
            alone = not (text[: comment.start()] + text[comment.end() :]).strip()
            for selector in _selectors(comment.group("codes")):
                line = None if alone else number
                found.append(Suppression(INDEX_NAME, line, selector, number, _codes(selector)))
    return found


def _ignored_by_config(ctx: LintContext, finding: Finding) -> bool:
    for pattern, selectors in ctx.config.lint.per_file_ignores:
        # A pattern without '/' matches the file name anywhere, as in ruff and .gitignore.
        subject = finding.path if "/" in pattern else finding.path.rsplit("/", 1)[-1]
        if fnmatch(subject, pattern) and any(finding.code in _codes(s) for s in selectors):
            return True
    return False


@rule(
    "L001", "unused-suppression", Severity.WARNING,
    "Finds `memdir-ignore` suppressions that silence nothing, or name no rule.",
    why="""A suppression outlives the problem it was written for: the memory is fixed, the rule
    renamed. Left behind, it will silently hide the next real finding of that kind. Reported only
    when the rules it names ran, so `--select` does not make suppressions look unused.""",
    example="memdir-ignore: [B003]   (the memory has no relative date any more)",
    instead="No `memdir-ignore` field.",
)  # fmt: skip
def unused_suppression(ctx: LintContext) -> Iterator[Hit]:
    return iter(())  # computed by `suppress`, which sees every other rule's findings


def suppress(ctx: LintContext, findings: Iterable[Finding], rules_run: Iterable[Rule]) -> list[Finding]:
    """The findings not suppressed, plus L001 findings for suppressions that did nothing."""
    suppressions = collect(ctx)
    ran = {r.code for r in rules_run}
    used: set[Suppression] = set()
    kept: list[Finding] = []
    for finding in findings:
        hits = [s for s in suppressions if s.covers(finding)]
        used.update(hits)
        if not hits and not _ignored_by_config(ctx, finding):
            kept.append(finding)
    if "L001" not in ran:
        return kept
    unused_rule = RULES["L001"]
    for s in suppressions:
        if s in used or (s.codes and not s.codes <= ran):
            continue
        why = "names no lint rule" if not s.codes else "suppresses nothing"
        message = f"`{FIELD}: {s.selector}` {why}; remove it"
        finding = Finding(unused_rule.code, unused_rule.name, unused_rule.severity, s.path, s.where, message)
        if not _ignored_by_config(ctx, finding):
            kept.append(finding)
    return kept

"""The linter: run the registered rules over a memory folder and collect findings."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from memdir.core.model import INDEX_NAME

# Importing the rule families registers their rules.
from memdir.lint import body, content, duplicates, frontmatter, indexfile, references, security  # noqa: F401
from memdir.lint.parallel import findings_of
from memdir.lint.registry import (
    RULES,
    Applicability,
    Finding,
    LintContext,
    Rule,
    Severity,
    matching_rules,
    resolve_selection,
)
from memdir.lint.suppression import suppress

__all__ = [
    "RULES", "Applicability", "Finding", "LintContext", "LintReport", "Rule", "Severity", "matching_rules",
    "resolve_selection", "run_rules",
]  # fmt: skip


@dataclass(frozen=True)
class LintReport:
    findings: list[Finding]
    files: int
    memories: int

    def count(self, severity: Severity) -> int:
        return sum(1 for f in self.findings if f.severity is severity)

    def failed(self, strict: bool = False) -> bool:
        """Errors fail a run; warnings only with `strict`; info never."""
        failing = {Severity.ERROR, Severity.WARNING} if strict else {Severity.ERROR}
        return any(f.severity in failing for f in self.findings)

    def fixable(self, unsafe: bool = False) -> int:
        wanted = {Applicability.SAFE, Applicability.UNSAFE} if unsafe else {Applicability.SAFE}
        return sum(1 for f in self.findings if f.fixable in wanted)

    def summary(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "memories": self.memories,
            "findings": len(self.findings),
            "errors": self.count(Severity.ERROR),
            "warnings": self.count(Severity.WARNING),
            "info": self.count(Severity.INFO),
            "fixable": self.fixable(),
            "by_code": dict(sorted(Counter(f.code for f in self.findings).items())),
        }

    def to_dict(self) -> dict[str, Any]:
        return {"findings": [f.to_dict() for f in self.findings], "summary": self.summary()}


def run_rules(ctx: LintContext, rules: Iterable[Rule] | None = None) -> LintReport:
    chosen = list(RULES.values()) if rules is None else list(rules)
    found = findings_of(ctx, chosen)
    findings = suppress(ctx, (finding for r in chosen for finding in found[r.code]), chosen)
    findings.sort(key=lambda f: (f.path != INDEX_NAME, f.path, f.line or 0, f.code))
    return LintReport(findings, files=ctx.scan.files_seen + 1, memories=len(ctx.scan.memories))

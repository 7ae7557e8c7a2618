"""The rule registry: every lint rule has a stable code, a kebab-case name, a severity and a doc.

Rule families live in their own modules and register with the `rule` decorator; a check yields
(path, line, message) and the registry turns that into a Finding carrying the rule's identity.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from memdir.config import Config
from memdir.index import DEFAULT_CAPS, Caps, IndexResult
from memdir.store import Scan


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True)
class Finding:
    code: str
    name: str
    severity: Severity
    path: str  # relative to the memory folder
    line: int | None
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "name": self.name,
            "severity": self.severity.value,
            "path": self.path,
            "line": self.line,
            "message": self.message,
        }


@dataclass(frozen=True)
class LintContext:
    """Everything a rule may look at, loaded once per run."""

    root: Path
    scan: Scan
    index_text: str | None  # MEMORY.md as it is; None when absent or unreadable
    index_problem: str | None  # why MEMORY.md could not be read
    index: IndexResult  # what `memdir index` would write
    config: Config
    today: dt.date
    caps: Caps = DEFAULT_CAPS


Hit = tuple[str, int | None, str]
Check = Callable[[LintContext], Iterable[Hit]]


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: Severity
    summary: str
    doc: str
    check: Check

    def run(self, ctx: LintContext) -> Iterator[Finding]:
        for path, line, message in self.check(ctx):
            yield Finding(self.code, self.name, self.severity, path, line, message)


RULES: dict[str, Rule] = {}
_CODE = re.compile(r"^[A-Z]\d{3}$")
_NAME = re.compile(r"^[a-z]+(?:-[a-z]+)*$")


def rule(code: str, name: str, severity: Severity, summary: str, doc: str) -> Callable[[Check], Check]:
    """Register a check under a code (family letter + 3 digits) and a kebab-case name."""
    if not _CODE.match(code) or not _NAME.match(name):
        raise ValueError(f"bad rule identity {code} {name}")
    if code in RULES or any(r.name == name for r in RULES.values()):
        raise ValueError(f"rule {code} {name} registered twice")

    def register(check: Check) -> Check:
        RULES[code] = Rule(code, name, severity, summary, " ".join(doc.split()), check)
        return check

    return register


def resolve_selection(select: Iterable[str], ignore: Iterable[str]) -> list[Rule]:
    """Rules chosen by code prefixes or names; unknown selectors are a usage error (ValueError)."""

    def matches(selector: str) -> list[Rule]:
        found = [r for r in RULES.values() if r.code.startswith(selector.upper()) or r.name == selector]
        if not found:
            raise ValueError(f"no lint rule matches {selector!r}; `memdir rules` lists them")
        return found

    chosen = {r.code for s in select for r in matches(s)} if select else set(RULES)
    for selector in ignore:
        chosen -= {r.code for r in matches(selector)}
    return [RULES[code] for code in sorted(chosen)]

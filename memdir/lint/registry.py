"""The rule registry: every lint rule has a stable code, a kebab-case name, a severity and a doc.

Rule families live in their own modules and register with the `rule` decorator; a check yields
Hits (path, line, message and an optional Fix) and the registry turns them into Findings that
carry the rule's identity.
"""

from __future__ import annotations

import bisect
import datetime as dt
import functools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from memdir.core.config import Config
from memdir.core.index import DEFAULT_CAPS, Caps, IndexResult
from memdir.core.model import Memory
from memdir.core.store import Scan
from memdir.text.sensitive import mask_secrets

T = TypeVar("T")


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class Applicability(StrEnum):
    """Safe fixes keep the meaning and every word a person wrote; unsafe ones need a look."""

    SAFE = "safe"
    UNSAFE = "unsafe"


@dataclass(frozen=True)
class Edit:
    """Replace text[start:end] of the finding's file, as it was read, with `replacement`."""

    start: int
    end: int
    replacement: str


@dataclass(frozen=True)
class Fix:
    applicability: Applicability
    description: str
    edits: tuple[Edit, ...] = ()  # on the file the finding names
    regenerate_index: bool = False  # the fix is `memdir index`
    drop_missing: bool = False  # ... with --drop-missing


class Hit(NamedTuple):
    """What a check reports: where, what, and how to fix it when that is known."""

    path: str  # relative to the memory folder
    line: int | None
    message: str
    fix: Fix | None = None


@dataclass(frozen=True)
class Finding:
    code: str
    name: str
    severity: Severity
    path: str  # relative to the memory folder, '/'-separated
    line: int | None
    message: str
    fix: Fix | None = field(default=None, compare=False)

    @property
    def fixable(self) -> Applicability | None:
        return None if self.fix is None else self.fix.applicability

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "name": self.name,
            "severity": self.severity.value,
            "path": self.path,
            "line": self.line,
            "message": self.message,
            "fix": None if self.fix is None else {"applicability": self.fix.applicability.value,
                                                   "description": self.fix.description},
        }  # fmt: skip


@dataclass(frozen=True)
class LintContext:
    """Everything a rule may look at, loaded once per run."""

    root: Path
    scan: Scan
    index_text: str | None  # MEMORY.md as it is; None when absent or unreadable
    index_problem: str | None  # why MEMORY.md could not be read
    plan: Callable[[], IndexResult]  # what `memdir index` would write; see `index`
    config: Config
    today: dt.date
    caps: Caps = DEFAULT_CAPS
    repo_root: Path | None = None  # the git work tree holding the folder, for file references
    _shared: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def index(self) -> IndexResult:
        """What `memdir index` would write, planned when a rule first asks: only the index rules
        do, so on a big folder the plan runs beside the pair search instead of before it."""
        return self.shared("index", self.plan)

    def shared(self, key: str, compute: Callable[[], T]) -> T:
        """Work several rules need (near-duplicate pairs, say), done once per run."""
        if key not in self._shared:
            self._shared[key] = compute()
        return self._shared[key]  # type: ignore[no-any-return]


Check = Callable[[LintContext], Iterable[Hit]]


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: Severity
    summary: str  # what it checks, one sentence
    why: str  # why it matters
    example: str  # what it finds
    instead: str  # what to write instead
    fix: str  # what --fix does, in words
    fixable: Applicability | None
    default: bool  # on unless selected away; off-by-default rules need --select/--extend-select
    check: Check

    @property
    def doc(self) -> str:
        """The whole entry `memdir rules CODE` prints and docs/rules.md lists."""
        return (
            f"What it does: {self.summary}\n\nWhy it matters: {self.why}\n\n"
            f"Example:\n\n{_indent(self.example)}\n\nInstead:\n\n{_indent(self.instead)}\n\nFix: {self.fix}"
        )

    def run(self, ctx: LintContext) -> Iterator[Finding]:
        for hit in self.check(ctx):
            # A rule that quotes a name, a type or a value (D001, F007, ...) must not print a key
            # that was pasted there.
            message = mask_secrets(hit.message)
            yield Finding(self.code, self.name, self.severity, hit.path, hit.line, message, hit.fix)


def line_at(text: str, offset: int) -> int:
    """The 1-based line of `text` that `offset` is on. Rules call it once per finding: counting the
    newlines from the start each time made a file with 100,000 findings take minutes. Pass the same
    string object each time (memory.doc.text, not a fresh slice), or its newlines are found again."""
    return bisect.bisect_left(_newlines(text), offset) + 1


@functools.lru_cache(maxsize=32)
def at_line_starts(pattern: re.Pattern[str]) -> re.Pattern[str]:
    r"""A multi-line `^X` as `\nX`, to search for in the text with a newline put before it
    (`"\n" + body`): `re` tries a pattern opening with `^` at every offset, and one opening with a
    literal only where that is found, so a rule walking every body spends a fraction of the time.
    A match's start is where the old one started (the newline, one character before the line, is
    one character into the longer text); its groups are one character on. It finds the same lines
    provided that no match of X ends just after a newline, which would consume the next line's."""
    if not pattern.pattern.startswith("^") or not pattern.flags & re.MULTILINE:
        raise ValueError(f"not a multi-line pattern anchored at a line start: {pattern.pattern!r}")
    return re.compile("\n" + pattern.pattern[1:], pattern.flags)


def newline_and_body(memory: Memory) -> tuple[str, int]:
    """`("\n" + memory.body, 0)` for an at_line_starts pattern, without copying the body where the
    file allows: its text and the offset of the newline that ends the frontmatter. Searched from that
    offset (`pattern.finditer(text, pos)`), it finds what a search of "\n" + body does, `pos` on; a
    rule walking every body of a large folder no longer copies 20 MB of text."""
    doc = memory.doc
    start = doc.body_start
    if start and doc.text[start - 1] == "\n":
        return doc.text, start - 1
    return "\n" + doc.body, 0


@functools.lru_cache(maxsize=4)
def _newlines(text: str) -> list[int]:
    return [found.start() for found in re.finditer("\n", text)]


def _indent(text: str) -> str:
    return "\n".join(f"    {line}" if line else "" for line in text.splitlines())


RULES: dict[str, Rule] = {}
_CODE = re.compile(r"^[A-Z]\d{3}$")
_NAME = re.compile(r"^[a-z]+(?:-[a-z]+)*$")


def _prose(text: str) -> str:
    return " ".join(text.split())


def _block(text: str) -> str:
    """Examples keep their lines; only the indentation of the source code is removed."""
    lines = text.strip("\n").splitlines()
    margin = min((len(x) - len(x.lstrip()) for x in lines if x.strip()), default=0)
    return "\n".join(x[margin:] for x in lines)


def rule(
    code: str,
    name: str,
    severity: Severity,
    summary: str,
    *,
    why: str,
    example: str,
    instead: str,
    fix: str | None = None,
    fixable: Applicability | None = None,
    default: bool = True,
) -> Callable[[Check], Check]:
    """Register a check under a code (family letter + 3 digits) and a kebab-case name."""
    if not _CODE.match(code) or not _NAME.match(name):
        raise ValueError(f"bad rule identity {code} {name}")
    if code in RULES or any(r.name == name for r in RULES.values()):
        raise ValueError(f"rule {code} {name} registered twice")
    if (fix is None) != (fixable is None):
        raise ValueError(f"rule {code}: a fix needs both its words and its applicability")

    def register(check: Check) -> Check:
        RULES[code] = Rule(
            code, name, severity, _prose(summary), _prose(why), _block(example), _block(instead),
            _prose(fix) if fix else "None; this needs a person's judgement.", fixable, default, check,
        )  # fmt: skip
        return check

    return register


def matching_rules(selector: str) -> list[Rule]:
    """Rules a selector names: a code, a code prefix (`F`, `I00`), a rule name, or `ALL`."""
    if not selector.strip():
        raise ValueError(f"no lint rule matches {selector!r} (an empty selector)")
    if selector.upper() == "ALL":
        return list(RULES.values())
    found = [r for r in RULES.values() if r.code.startswith(selector.upper()) or r.name == selector]
    if not found:
        raise ValueError(f"no lint rule matches {selector!r}; `memdir rules` lists them")
    return found


def resolve_selection(
    select: Iterable[str] = (), ignore: Iterable[str] = (), extend_select: Iterable[str] = ()
) -> list[Rule]:
    """The rules to run: `select` (else the default set), plus `extend_select`, minus `ignore`.

    Unknown selectors are a usage error (ValueError)."""
    select = list(select)
    if select:
        chosen = {r.code for s in select for r in matching_rules(s)}
    else:
        chosen = {r.code for r in RULES.values() if r.default}
    chosen |= {r.code for s in extend_select for r in matching_rules(s)}
    for selector in ignore:
        chosen -= {r.code for r in matching_rules(selector)}
    return [RULES[code] for code in sorted(chosen)]

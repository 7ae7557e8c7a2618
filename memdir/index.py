"""MEMORY.md: regenerate the index in place, within its caps, without losing what a person wrote.

The index is rebuilt from the memory files *and* the current MEMORY.md. A line of MEMORY.md is
*managed* when it is a list item whose link points at a valid memory in the folder: memdir owns
that line and rewrites it from the memory's frontmatter. Every other line (headings, prose,
notes, links to other documents, links to files that are gone) is hand-written and is kept,
verbatim and in place. Memories that have no line yet are inserted after the last entry of the
same type (else after the last entry, else at the end), so hand-made grouping survives.

When everything does not fit in 200 lines / 25,000 bytes, entries are left out least valuable
first: lowest `importance` (default 0.5), then oldest (`updated`, `modified`, `updated_at`,
`created`; undated counts as oldest), then by path, last first. Line cap first, then bytes.
"""

from __future__ import annotations

import datetime as dt
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import unquote

from memdir.model import TYPE_ORDER, Memory, MemoryType, exclusion, plural

MAX_LINES = 200
MAX_BYTES = 25_000


@dataclass(frozen=True)
class Caps:
    max_lines: int = MAX_LINES
    max_bytes: int = MAX_BYTES


DEFAULT_CAPS = Caps()


class Indexable(Protocol):
    """What the index needs of a memory: a Memory has it, and so has the IndexRow kept for it in
    the parse cache, which spares a warm `memdir index` from loading every file."""

    @property
    def path(self) -> str: ...
    @property
    def type(self) -> MemoryType | None: ...
    @property
    def title(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def importance(self) -> float: ...
    @property
    def last_changed(self) -> dt.date | None: ...
    def exclusion(self, today: dt.date) -> str | None: ...


@dataclass(frozen=True, slots=True)
class IndexRow:
    """A memory as the index sees it, without its text."""

    path: str
    type: MemoryType | None
    title: str
    description: str
    importance: float
    last_changed: dt.date | None
    status: str
    superseded: bool
    expires: dt.date | None

    @classmethod
    def of(cls, memory: Memory) -> IndexRow:
        return cls(
            memory.path, memory.type, memory.title, memory.description, memory.importance,
            memory.last_changed, memory.status, memory.superseded, memory.expires,
        )  # fmt: skip

    def exclusion(self, today: dt.date) -> str | None:
        return exclusion(self.status, self.superseded, self.expires, today)

    def to_json(self) -> list[Any]:
        """The row without its path, for the parse cache."""
        day = self.last_changed.isoformat() if self.last_changed else None
        until = self.expires.isoformat() if self.expires else None
        kind = self.type.value if self.type else None
        return [kind, self.title, self.description, self.importance, day, self.status, self.superseded, until]

    @classmethod
    def from_json(cls, path: str, row: list[Any]) -> IndexRow:
        """Raises ValueError or TypeError for a row that is not what to_json wrote."""
        kind, title, description, importance, day, status, superseded, until = row
        if not (isinstance(title, str) and isinstance(description, str) and isinstance(status, str)):
            raise TypeError("not a cached index row")
        return cls(
            path, MemoryType(kind) if kind is not None else None, title, description, float(importance),
            dt.date.fromisoformat(day) if day else None, status, bool(superseded),
            dt.date.fromisoformat(until) if until else None,
        )  # fmt: skip


@dataclass(frozen=True)
class Link:
    """A markdown link in MEMORY.md."""

    line: int  # 1-based
    text: str
    raw_target: str
    target: str | None  # normalised POSIX path relative to the folder; None for URLs, anchors


@dataclass(frozen=True)
class LeftOut:
    memory: Indexable
    reason: str


@dataclass(frozen=True)
class Excluded:
    memory: Indexable
    reason: str


@dataclass
class IndexResult:
    text: str
    entries: list[Indexable] = field(default_factory=list)  # indexed, in file order
    left_out: list[LeftOut] = field(default_factory=list)
    excluded: list[Excluded] = field(default_factory=list)
    hand_lines: int = 0
    rewritten: list[str] = field(default_factory=list)  # existing entry lines replaced by new text
    refused: str | None = None  # why the hand-written text alone cannot fit; then nothing is written

    @property
    def lines(self) -> int:
        return count_lines(self.text)

    @property
    def bytes(self) -> int:
        return len(self.text.encode("utf-8"))

    def size_note(self) -> str:
        """'12 entries, 15 lines, 1,234 bytes': what people are told after an index run."""
        entries, lines = plural(len(self.entries), "entry", "entries"), plural(self.lines, "line", "lines")
        return f"{entries}, {lines}, {self.bytes:,} bytes"


def split_lines(text: str) -> list[str]:
    """Lines as a markdown reader sees them: split on \n (and \r\n) only.

    str.splitlines() would also split on U+2028, form feeds and the like, which would break a
    hand-written line in two and change what the reader counts.
    """
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def count_lines(text: str) -> int:
    return len(split_lines(text))


# A list item (-, *, +, or "1." / "1)") that starts with a link, optionally in bold.
_ENTRY = re.compile(
    r"^(?P<indent>[ \t]*)(?:[-*+]|\d{1,3}[.)])[ \t]+(?:\*\*|__)?"
    r"\[(?P<text>(?:\\.|[^\]\\])*)\]\((?P<target><[^>\n]*>|[^\s()]+(?:\([^\s()]*\)[^\s()]*)*)"
    r'(?:[ \t]+"[^"\n]*")?\)'
)
_LINK = re.compile(
    r"(?<!!)\[(?P<text>(?:\\.|[^\]\\\n])*)\]\((?P<target><[^>\n]*>|[^\s()]+(?:\([^\s()]*\)[^\s()]*)*)"
    r'(?:[ \t]+"[^"\n]*")?\)'
)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_NOTE_PREFIX = "<!-- memdir:"
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d{1,3}[.)])[ \t]")


def normalise_target(raw: str) -> str | None:
    """A link target as a folder-relative POSIX path, or None when it is not a local file."""
    target = raw.strip()
    if target.startswith("<") and target.endswith(">"):
        target = target[1:-1]
    # Backslashes are Windows separators as written; an encoded one (%5C) is part of a file name.
    target = unquote(target.split("#", 1)[0].replace("\\", "/"))
    # URLs, mailto:, Windows drive letters (D:/...) and absolute paths are not folder files.
    if not target or _SCHEME.match(target) or target.startswith("/"):
        return None
    return posixpath.normpath(target)


def entry_target(line: str) -> str | None:
    """The folder path a list entry (a list item opening with a link) points at; None otherwise."""
    entry = _ENTRY.match(line)
    return normalise_target(entry.group("target")) if entry else None


def find_links(text: str) -> list[Link]:
    """Every inline link in MEMORY.md, with its line number, skipping fenced code."""
    links: list[Link] = []
    in_fence = False
    for number, line in enumerate(split_lines(text), start=1):
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        for found in _LINK.finditer(line):
            raw = found.group("target")
            links.append(Link(number, found.group("text"), raw, normalise_target(raw)))
    return links


def render_entry(memory: Indexable) -> str:
    """The one index line for a memory: `- [name](path) — description`."""
    title = memory.title.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
    path = _link_path(memory.path)
    if re.search(r"[\s()<>]", path):
        path = f"<{path}>"
    line = f"- [{title}]({path})"
    return f"{line} — {memory.description}" if memory.description else line


_LINK_UNSAFE = re.compile(r"[%#\\\x00-\x1f\x7f]")


def _link_path(path: str) -> str:
    """A path as a link target: '%', '#', '\\' and control characters percent-encoded, so that
    a reader (and normalise_target) finds the file instead of an escape, a fragment or a break."""
    if not _LINK_UNSAFE.search(path):
        return path
    return "".join(f"%{ord(c):02X}" if _LINK_UNSAFE.match(c) else c for c in path)


def left_out_note(count: int, caps: Caps) -> str:
    noun = "memory" if count == 1 else "memories"
    return (
        f"{_NOTE_PREFIX} {count} more {noun} left out to fit the index caps "
        f"({caps.max_lines} lines, {caps.max_bytes:,} bytes); they are still in this folder -->"
    )


def value_key(memory: Indexable) -> tuple[float, int, str]:
    """Sort key, most valuable first: importance, then newest, then path."""
    changed = memory.last_changed
    return (-memory.importance, -(changed.toordinal() if changed else 0), memory.path)


@dataclass
class _Line:
    text: str
    slot: Indexable | None = None  # the memory this managed line stands for
    indent: str = ""  # a nested entry stays nested


def _parse(existing: str, valid: dict[str, Indexable], drop: set[str]) -> tuple[list[_Line], list[str]]:
    """Classify MEMORY.md's lines; also return the extra entry lines of memories listed twice."""
    lines: list[_Line] = []
    duplicates: list[str] = []
    seen: set[str] = set()
    in_fence = False
    for text in split_lines(existing):
        if text.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        if text.startswith(_NOTE_PREFIX):
            continue  # memdir's own note; regenerated below
        entry = None if in_fence else _ENTRY.match(text)
        target = normalise_target(entry.group("target")) if entry else None
        if target is not None and target in drop:
            continue
        if entry is None or target is None or target not in valid:
            lines.append(_Line(text))
        elif target in seen:
            duplicates.append(text)  # the index lists a memory once
        else:
            seen.add(target)
            lines.append(_Line(text, valid[target], entry.group("indent")))
    return lines, duplicates


def _insertion_points(lines: list[_Line], new: Iterable[Indexable]) -> dict[int, list[Indexable]]:
    """Where each new entry goes: after the last entry of its type, else the last entry, else the end."""
    last_of_type: dict[object, int] = {}
    last_any = None
    for i, line in enumerate(lines):
        if line.slot is not None:
            end = i
            while end + 1 < len(lines) and lines[end + 1].text[:1] in (" ", "\t") and lines[end + 1].text.strip():
                end += 1  # keep an entry together with its indented continuation lines
            last_of_type[line.slot.type] = end
            last_any = end
    points: dict[int, list[Indexable]] = {}
    for memory in new:
        at = last_of_type.get(memory.type, last_any if last_any is not None else len(lines))
        points.setdefault(at, []).append(memory)
    for group in points.values():
        group.sort(key=lambda m: (TYPE_ORDER[m.type] if m.type else 99, m.title.casefold(), m.path))
    return points


@dataclass
class _Rendered:
    text: str
    shown: list[Indexable]
    rewritten: list[str]  # the old text of entry lines that changed


def _render(
    lines: list[_Line],
    points: dict[int, list[Indexable]],
    keep: set[str],
    note: str | None,
    newline: str,
) -> _Rendered:
    out: list[str] = []
    shown: list[Indexable] = []
    rewritten: list[str] = []

    def emit(memory: Indexable, indent: str = "") -> None:
        out.append(indent + render_entry(memory))
        shown.append(memory)

    for i, line in enumerate(lines):
        if line.slot is None:
            out.append(line.text)
        elif line.slot.path in keep:
            emit(line.slot, line.indent)
            if out[-1] != line.text:
                rewritten.append(line.text)
        for memory in points.get(i, []):
            if memory.path in keep:
                emit(memory)
    tail = [m for m in points.get(len(lines), []) if m.path in keep]
    fence = _open_fence(out) if tail else None
    if fence is not None:  # a code block left open would swallow the entries (and grow every run)
        out.append(fence)
    if tail and out and out[-1].strip() and not _LIST_ITEM.match(out[-1]):
        out.append("")  # a list needs a blank line to start after a paragraph or heading
    for memory in tail:
        emit(memory)
    if note is not None:
        out.append(note)
    return _Rendered(newline.join(out) + newline if out else "", shown, rewritten)


def _open_fence(texts: list[str]) -> str | None:
    """The line that closes a code fence left open at the end of `texts` (read as _parse reads
    fences), else None."""
    opener = None
    for text in texts:
        stripped = text.lstrip()
        if stripped.startswith(("```", "~~~")):
            opener = None if opener else stripped[:3]
    return opener


def build_index(
    existing: str,
    memories: Iterable[Indexable],
    today: dt.date,
    caps: Caps = DEFAULT_CAPS,
    drop: Iterable[str] = (),
) -> IndexResult:
    """Compute the new MEMORY.md from the current one and the folder's memories.

    `memories` are the files whose frontmatter parsed; those without a valid type are not
    indexed and their existing lines are kept as written. `drop` names paths whose entry lines
    must go even though no memory stands behind them any more (memdir removed the file itself).
    """
    bom = "\ufeff" if existing.startswith("\ufeff") else ""
    existing = existing.removeprefix(bom)
    newline = "\r\n" if existing.count("\r\n") * 2 > existing.count("\n") else "\n"
    valid: dict[str, Indexable] = {}
    excluded: list[Excluded] = []
    indexable: list[Indexable] = []
    for memory in memories:
        if memory.type is None:
            continue
        reason = memory.exclusion(today)
        if reason is not None:
            excluded.append(Excluded(memory, reason))
        else:
            indexable.append(memory)
        valid[memory.path] = memory
    lines, duplicates = _parse(existing, valid, set(drop))
    hand_lines = sum(1 for line in lines if line.slot is None)

    ranked = sorted(indexable, key=value_key)
    slotted = {line.slot.path for line in lines if line.slot is not None}
    points = _insertion_points(lines, (m for m in ranked if m.path not in slotted))

    reason_for: dict[str, str] = {}
    # Every entry is one line, so no more than max_lines of them can fit: rendering the rest only
    # to cut them again costs a large folder most of its time.
    keep_count = min(len(ranked), caps.max_lines)
    for memory in ranked[keep_count:]:
        reason_for[memory.path] = f"{caps.max_lines}-line cap"
    while True:
        keep = {m.path for m in ranked[:keep_count]}
        dropped = len(ranked) - keep_count
        note = left_out_note(dropped, caps) if dropped else None
        rendered = _render(lines, points, keep, note, newline)
        over_lines = count_lines(rendered.text) - caps.max_lines
        over_bytes = len(bom.encode()) + len(rendered.text.encode("utf-8")) - caps.max_bytes  # the BOM is kept
        if over_lines <= 0 and over_bytes <= 0:
            break
        if keep_count == 0:
            if note is not None:  # the hand-written text fits, only the note does not
                rendered = _render(lines, points, set(), None, newline)
                fits = len(bom.encode()) + len(rendered.text.encode()) <= caps.max_bytes
                if count_lines(rendered.text) <= caps.max_lines and fits:
                    break
            refused = (
                f"the hand-written text in MEMORY.md alone is {count_lines(rendered.text)} lines and "
                f"{len(rendered.text.encode()):,} bytes, over the cap of {caps.max_lines} lines and "
                f"{caps.max_bytes:,} bytes; memdir will not cut it. Move some of it into memory files"
            )
            return IndexResult(
                text=bom + existing,
                left_out=[LeftOut(m, "hand-written text fills the index") for m in ranked],
                excluded=excluded,
                hand_lines=hand_lines,
                refused=refused,
            )
        if over_lines > 0:
            cut, why = max(1, over_lines + (0 if dropped else 1)), f"{caps.max_lines}-line cap"
        else:
            cut, why, freed = 0, f"{caps.max_bytes:,}-byte cap", 0
            # Leaving the first entry out adds the note line, which costs bytes too.
            note_cost = 0 if dropped else len(left_out_note(len(ranked), caps).encode()) + len(newline)
            while freed < over_bytes + note_cost and cut < keep_count:
                cut += 1
                freed += len(render_entry(ranked[keep_count - cut]).encode()) + len(newline)
        for memory in ranked[max(0, keep_count - cut) : keep_count]:
            reason_for[memory.path] = why
        keep_count = max(0, keep_count - cut)

    left_out = [LeftOut(m, reason_for[m.path]) for m in reversed(ranked[keep_count:])]
    return IndexResult(
        text=bom + rendered.text if rendered.text else "",
        entries=rendered.shown,
        left_out=left_out,
        excluded=excluded,
        hand_lines=hand_lines,
        rewritten=duplicates + rendered.rewritten,
    )

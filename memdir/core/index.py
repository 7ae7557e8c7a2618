"""MEMORY.md: regenerate the index in place, within its caps, without losing what a person wrote.

The index is rebuilt from the memory files *and* the current MEMORY.md. A line of MEMORY.md is
*managed* when it is a list item whose link points at a valid memory in the folder: memdir owns
that line and rewrites it from the memory's frontmatter (or, with `[index] entry-text = "keep"`,
keeps its wording while the memory lives). Every other line (headings, prose, notes, links to other
documents) is hand-written and is kept, verbatim and in place. A memory is *listed* when its own
entry links it, or a link on a hand-written line outside fenced code does (`./`, percent-encoding
and letter case aside), in a list or inside a sentence. The other links of an entry list nothing:
memdir rewrites that line, so what it listed would be lost to the run and added only by the next.
Only memories that are not listed get a new line, inserted after the last entry of the same type
(else after the last entry, else at the end), so hand-made grouping survives.

An entry whose file is gone (a *dead* entry) is kept while everything fits. When the caps bind,
dead entries go first, then the entries of memories a hand-written line links too; a memory renamed
or moved (same `name`, or same file name in another place) takes over its old line instead.

When everything does not fit in 200 lines / 25,000 bytes, entries are packed most valuable first:
highest `importance` (default 0.5), then newest (`updated`, `modified`, `updated_at`, `created`;
undated counts as oldest), then by path. An entry that does not fit in what is left is left out
and the ones after it still get their chance, so one entry too long to ever fit cannot empty the
index. An existing line that does not fit (kept wording, an indent) gives way to its memory's
generated line, in its place.

One run reaches the fixed point: a second run on its output changes nothing. Whatever the run
drops, rewrites or leaves out, it decides as the next run would (tests/test_index_fixed_point.py).

Over 500 lines: parsing MEMORY.md, rendering entries and packing them within the caps are one
algorithm.
"""

from __future__ import annotations

import datetime as dt
import functools
import posixpath
import re
from collections.abc import Callable, Iterable, Set
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import quote, unquote

from memdir.core.errors import InvalidMemory
from memdir.core.model import TYPE_ORDER, Memory, MemoryType, exclusion, file_name_for, plural
from memdir.text.bulk import paused_gc

MAX_LINES = 200
MAX_BYTES = 25_000


@dataclass(frozen=True)
class Caps:
    """MEMORY.md's limits: Claude Code reads 200 lines and 25,000 bytes of it."""

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
    """A memory as the index sees it, without its text.

    `entry` is the memory's line, `render_entry(memory)`, kept with the row in the parse cache: a
    warm `memdir index` neither masks nor escapes ten thousand names and descriptions again (nor
    imports the secret scanner to do it). A row made with `of` draws it when first asked
    (`entry_line`, or `to_json` for the cache): a run without the cache needs the lines of the
    entries it prices and shows, not all of them. A row copied with other fields
    (dataclasses.replace) keeps the old line once drawn."""

    path: str
    type: MemoryType | None
    title: str
    description: str
    importance: float
    last_changed: dt.date | None
    status: str
    superseded: bool
    expires: dt.date | None
    # None until drawn (see line()); not compared or hashed: it is drawn from the fields above, and a
    # row must stay the same row when it is drawn.
    entry: str | None = field(compare=False)
    # Why the memory is withheld from MEMORY.md (see withheld_reason), "" for not; None until drawn,
    # with the line: a warm index reads it from the parse cache and never loads the secret scanner.
    withheld: str | None = field(default=None, compare=False)

    @classmethod
    def of(cls, memory: Memory) -> IndexRow:
        return cls(
            memory.path, memory.type, memory.title, memory.description, memory.importance,
            memory.last_changed, memory.status, memory.superseded, memory.expires, None,
        )  # fmt: skip

    def line(self) -> str:
        """The entry line, drawn from the row's own path, title and description the first time:
        render_entry reads nothing else of a memory."""
        if self.entry is not None:
            return self.entry
        drawn = render_entry(self)
        object.__setattr__(self, "entry", drawn)  # frozen, but the line is what it would have been at birth
        return drawn

    def withheld_reason(self) -> str | None:
        """withheld_reason(self), drawn once as the line is."""
        if self.withheld is None:
            object.__setattr__(self, "withheld", _secret_in_path(self.path) or "")
        return self.withheld or None

    def exclusion(self, today: dt.date) -> str | None:
        return exclusion(self.status, self.superseded, self.expires, today)

    def to_json(self) -> list[Any]:
        """The row without its path, for the parse cache."""
        day = self.last_changed.isoformat() if self.last_changed else None
        until = self.expires.isoformat() if self.expires else None
        kind = self.type.value if self.type else None
        return [
            kind, self.title, self.description, self.importance, day, self.status, self.superseded, until,
            self.withheld_reason() or "", self.line(),
        ]  # fmt: skip

    @classmethod
    def from_json(cls, path: str, row: list[Any]) -> IndexRow:
        """Raises ValueError or TypeError for a row that is not what to_json wrote."""
        kind, title, description, importance, day, status, superseded, until, withheld, entry = row
        if not all(isinstance(text, str) for text in (title, description, status, entry, withheld)):
            raise TypeError("not a cached index row")
        return cls(
            path, MemoryType(kind) if kind is not None else None, title, description, float(importance),
            dt.date.fromisoformat(day) if day else None, status, bool(superseded),
            dt.date.fromisoformat(until) if until else None, entry, withheld,
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
    """A memory the caps left out of the index, and why."""

    memory: Indexable
    reason: str


@dataclass(frozen=True)
class Excluded:
    """A memory policy keeps out of the index (superseded, expired, ...), and why."""

    memory: Indexable
    reason: str


def withheld_reason(memory: Indexable) -> str | None:
    """Why a live memory is never written into MEMORY.md: its file name holds a secret
    (sensitive.path_secrets), which the link to it would copy into every session and every clone.
    None for a memory whose path holds none. Renaming the file ends it."""
    return memory.withheld_reason() if isinstance(memory, IndexRow) else _secret_in_path(memory.path)


def _secret_in_path(path: str) -> str | None:
    from memdir.text.sensitive import path_secrets  # drawn once per row: see IndexRow.withheld

    found = path_secrets(path)
    return f"its file name holds a secret ({found[0].label} {found[0].masked}); rename the file" if found else None


@dataclass
class IndexResult:
    """MEMORY.md as rendered, and what went into it, what did not, and why."""

    text: str
    entries: list[Indexable] = field(default_factory=list)  # indexed, in file order
    left_out: list[LeftOut] = field(default_factory=list)
    excluded: list[Excluded] = field(default_factory=list)
    withheld: list[Excluded] = field(default_factory=list)  # live, but named with a secret: withheld_reason
    hand_lines: int = 0
    rewritten: list[str] = field(default_factory=list)  # existing entry lines replaced by new text
    refused: str | None = None  # why the hand-written text alone cannot fit; then nothing is written
    linked: list[Indexable] = field(default_factory=list)  # listed by a hand-written line, not by an entry of its own
    dead: list[str] = field(default_factory=list)  # entry lines kept although their file is gone
    dead_dropped: list[str] = field(default_factory=list)  # entry lines of gone files dropped for the caps
    # The memories the MEMORY.md it was built from lists: by their own entry, or by a link on a
    # hand-written line. The one definition of "listed", which lint (I003) reads here.
    listed: set[str] = field(default_factory=set)

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


ENTRY_MAX = 150  # characters in one index line; Claude Code's own guidance for MEMORY.md entries
_SEPARATOR = " — "
_MIN_DESCRIPTION = 30  # a title is shortened before the description drops below this
_MIN_TITLE = 12
_ELLIPSIS = "…"


def render_entry(memory: Indexable) -> str:
    """The one index line for a memory: `- [name](path) — description`, at most ENTRY_MAX characters,
    with any secret in the name or description masked (lint S002 names the file that holds it) and
    any control character written as an escape (lint S008 names the file).

    A long description is shortened on a word boundary (the file keeps it whole); a title so long
    that it leaves the description less than a few words is shortened too. Only a path longer than
    the limit makes a longer line, since the link must reach the file."""
    from memdir.text.outward import one_field  # not for a warm index, whose rows carry their lines

    target = _link_target(memory.path)
    # MEMORY.md is committed and loaded into every session: a key in a memory never reaches it, nor
    # an ESC or NUL byte from a hand-written file, nor a line break from a file name (memdir.text.outward).
    title, description = one_field(memory.title), one_field(memory.description)
    line = _entry(title, target, description)
    if len(line) <= ENTRY_MAX:
        return line
    room = ENTRY_MAX - len(_entry(title, target, "")) - len(_SEPARATOR)
    if description and room >= _MIN_DESCRIPTION:
        return _entry(title, target, shorten(description, room))
    bare = len(_entry("", target, ""))  # `- [](path)`
    reserve = len(_SEPARATOR) + _MIN_DESCRIPTION if description else 0
    width = ENTRY_MAX - bare - reserve
    if width < _MIN_TITLE:  # the path leaves no room to speak of: the link and as much title as fits
        width, description = max(ENTRY_MAX - bare, _MIN_TITLE), ""
    short = shorten(title, width)
    while len(_escape_title(short)) > width and len(short) > 1:  # escapes take room too
        short = shorten(title, len(short) - 2)
    room = ENTRY_MAX - len(_entry(short, target, "")) - len(_SEPARATOR)
    return _entry(short, target, shorten(description, room) if description and room >= _MIN_TITLE else "")


def entry_line(memory: Indexable) -> str:
    """`render_entry(memory)`, taken from the row when the memory is an IndexRow."""
    return memory.line() if isinstance(memory, IndexRow) else render_entry(memory)


def _entry(title: str, target: str, description: str) -> str:
    line = f"- [{_escape_title(title)}]({target})"
    return f"{line}{_SEPARATOR}{description}" if description else line


def _escape_title(title: str) -> str:
    return title.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def shorten(text: str, width: int) -> str:
    """`text` in at most `width` characters: cut on the last word boundary that fits, with an
    ellipsis. Text without spaces (Chinese, a long token) is cut at a character."""
    if len(text) <= width:
        return text
    cut = text[: max(width - 1, 0)]
    space = cut.rfind(" ")
    if space >= width // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:.-–—") + _ELLIPSIS


# Percent-encoded in a link target: '%' itself, '#' (a fragment), '\\' (an escape), '<' and '>'
# (which end or open the bracketed form), control characters (line breaks) and the invisible ones
# (a bidi override, a zero-width space: outward.INVISIBLE), so that a reader, and normalise_target,
# finds the file instead of an escape, a fragment or a break, and sees every character of its name.
@functools.cache
def _link_unsafe() -> re.Pattern[str]:
    from memdir.text.outward import INVISIBLE  # render_entry, the one caller, has loaded it

    return re.compile(rf"[%#\\<>\x00-\x1f\x7f-\x9f{INVISIBLE}]")


def _link_target(path: str) -> str:
    """A path as it goes between the link's parentheses; it reads back as `path` (normalise_target)."""
    unsafe = _link_unsafe()
    if unsafe.search(path):
        path = "".join(quote(c, safe="") if unsafe.match(c) else c for c in path)  # UTF-8, as unquote reads
    if _SCHEME.match(path):  # `A:.md`, `http:x.md` would read as a URL or a drive letter
        path = "./" + path
    return f"<{path}>" if re.search(r"[\s()]", path) else path


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


class Resolver:
    """Which memory a link target in MEMORY.md means: the exact path, else the one path that
    differs only in letter case (a link that works on macOS and Windows, where people write them).

    The one definition of "this link reaches that memory", shared by `build_index` and lint."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.exact = set(paths)
        folded: dict[str, str | None] = {}
        for path in self.exact:
            key = path.casefold()
            folded[key] = None if key in folded else path  # two paths alike but for case: neither
        self.folded = folded

    def __call__(self, target: str | None) -> str | None:
        if target is None:
            return None
        if target in self.exact:
            return target
        return self.folded.get(target.casefold())


@dataclass
class _Line:
    """One line of the existing MEMORY.md: a managed entry, a dead entry, or hand-written text."""

    text: str
    slot: Indexable | None = None  # the memory this managed line stands for
    indent: str = ""  # a nested entry stays nested
    dead: bool = False  # an entry whose file is gone
    link_text: str = ""  # an entry's link text, to find the memory a dead entry was renamed to
    target: str = ""  # an entry's normalised target
    renamed: bool = False  # a dead entry taken over by its memory's new path: always rewritten


@dataclass
class _Parsed:
    """The existing MEMORY.md, classified line by line."""

    lines: list[_Line]
    duplicates: list[str]  # extra entry lines of memories listed twice
    linked: set[str]  # memories a link on a hand-written line lists (whether or not they have an entry too)


def _parse(existing: str, resolve: Resolver, valid: dict[str, Indexable], drop: set[str], missing: set[str]) -> _Parsed:
    """Classify MEMORY.md's lines: managed entries, dead entries, and hand-written lines. An entry
    whose target (case aside) is in `drop` and lists no memory goes.

    What lists a memory: its own entry's link, and any link on a line kept as written. The other
    links of an entry (in its description, or in wording kept with `entry-text = "keep"`) list
    nothing, nor do a dead entry's: memdir rewrites, shortens or drops those lines, and a memory
    listed only by them would lose its listing to the run and get a line only on the next."""
    lines: list[_Line] = []
    duplicates: list[str] = []
    seen: set[str] = set()
    linked: set[str] = set()
    in_fence = False
    for text in split_lines(existing):
        if text.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            lines.append(_Line(text))
            continue
        if text.startswith(_NOTE_PREFIX):
            continue  # memdir's own note; regenerated below
        if in_fence:
            lines.append(_Line(text))
            continue
        entry = _ENTRY.match(text)
        target = normalise_target(entry.group("target")) if entry else None
        path = resolve(target)
        if path is None and target is not None and target.casefold() in drop:
            continue
        if entry is None or target is None:
            lines.append(_Line(text))
            linked |= _listed_by(text, resolve)
        elif path is None:
            link_text = re.sub(r"\\(.)", r"\1", entry.group("text"))
            dead = target in missing
            if not dead:  # a list item of a person's own (a link to another document): kept as written
                linked |= _listed_by(text, resolve)
            lines.append(_Line(text, dead=dead, link_text=link_text, target=target))
        elif path in seen:
            duplicates.append(text)  # the index lists a memory once
        else:
            seen.add(path)
            lines.append(_Line(text, valid[path], entry.group("indent")))
    return _Parsed(lines, duplicates, linked)


def _listed_by(text: str, resolve: Resolver) -> set[str]:
    """The memories the links on one hand-written line list."""
    return {path for found in _LINK.finditer(text) if (path := resolve(normalise_target(found.group("target"))))}


def _take_over_renamed(lines: list[_Line], unlisted: list[Indexable]) -> None:
    """Give a dead entry to the memory that was renamed or moved away from it, found by its `name`
    or its file name: the one unlisted memory whose name is the entry's link text, else the one
    whose name memdir would have given the dead file (`<type>_<slug of the name>.md`, so a label
    of a person's own does not hide it), else the one with the same file name in another place."""
    dead = [line for line in lines if line.dead]
    if not dead:
        return
    # One pass over the memories, looking only for what the dead lines name: a folder of ten
    # thousand has rarely more than a few, and slugging every name would cost more than the rest.
    titles = {line.link_text for line in dead}
    files = {line.target.rpartition("/")[2] for line in dead}
    prefixes = {name.split("_", 1)[0] for name in files}
    by_title: dict[str, list[Indexable]] = {}
    by_name_file: dict[str, list[Indexable]] = {}
    by_file: dict[str, list[Indexable]] = {}
    for memory in unlisted:
        if memory.title in titles:
            by_title.setdefault(memory.title, []).append(memory)
        name = memory.path.rpartition("/")[2]
        if name in files:
            by_file.setdefault(name, []).append(memory)
        if memory.type is not None and memory.type.value in prefixes:
            with suppress(InvalidMemory):  # a name without a letter or digit names no file
                by_name_file.setdefault(file_name_for(memory.type, memory.title), []).append(memory)
    taken: set[str] = set()
    for line in dead:
        name = line.target.rpartition("/")[2]
        for alike in (by_title.get(line.link_text, []), by_name_file.get(name, []), by_file.get(name, [])):
            found = [m for m in alike if m.path not in taken]
            if len(found) == 1:
                taken.add(found[0].path)
                line.slot, line.dead, line.renamed = found[0], False, True
                line.indent = line.text[: len(line.text) - len(line.text.lstrip(" \t"))]
                break
    unlisted[:] = [m for m in unlisted if m.path not in taken]


def _insertion_points(lines: list[_Line], new: Iterable[Indexable]) -> dict[int, list[Indexable]]:
    """Where each new entry goes: after the last entry of its type, else the last entry, else the end.
    In no order: _render puts the ones it shows in theirs (`_placement`), not all ten thousand."""
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
    return points


def _placement(memory: Indexable) -> tuple[int, str, str]:
    """The order of new entries at one place: by type, then title, then path."""
    return (TYPE_ORDER[memory.type] if memory.type else 99, memory.title.casefold(), memory.path)


@dataclass
class _Rendered:
    """The new MEMORY.md text and the entries it shows."""

    text: str
    shown: list[Indexable]
    rewritten: list[str]  # the old text of entry lines that changed


def _slot_text(line: _Line, keep_wording: bool, fresh: bool = False) -> str:
    """What a managed line becomes: its memory's entry, or the line as written when its wording is
    kept (pointed at the memory's new path when it was renamed). `fresh`: the memory's entry as a
    new line would have it, unindented, where the line as it is does not fit the caps."""
    assert line.slot is not None
    if fresh:
        return entry_line(line.slot)
    if keep_wording:
        return _retarget(line.text, line.slot.path) if line.renamed else line.text
    return line.indent + entry_line(line.slot)


def _retarget(text: str, path: str) -> str:
    """An entry line with its own link pointed at `path`, every other character as it was."""
    entry = _ENTRY.match(text)
    assert entry is not None, "only an entry is taken over"
    return text[: entry.start("target")] + _link_target(path) + text[entry.end("target") :]


def _render(
    lines: list[_Line],
    points: dict[int, list[Indexable]],
    keep: Set[str],
    note: str | None,
    newline: str,
    keep_wording: bool = False,
    with_dead: bool = True,
    fresh: Set[str] = frozenset(),
) -> _Rendered:
    out: list[str] = []
    shown: list[Indexable] = []
    rewritten: list[str] = []

    def emit(memory: Indexable) -> None:
        out.append(entry_line(memory))
        shown.append(memory)

    for i, line in enumerate(lines):
        if line.slot is None:
            if with_dead or not line.dead:
                out.append(line.text)
        elif line.slot.path in keep:
            as_fresh = line.slot.path in fresh
            out.append(_slot_text(line, keep_wording, as_fresh))
            shown.append(line.slot)
            retargeted = keep_wording and line.renamed and not as_fresh  # the wording kept, only the link new
            if out[-1] != line.text and not retargeted:
                rewritten.append(line.text)
        if i in points:
            for memory in sorted((m for m in points[i] if m.path in keep), key=_placement):
                emit(memory)
    tail = sorted((m for m in points.get(len(lines), []) if m.path in keep), key=_placement)
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
    missing: Iterable[str] = (),
    keep_wording: bool = False,
) -> IndexResult:
    """Compute the new MEMORY.md from the current one and the folder's memories.

    `memories` are the files whose frontmatter parsed; those without a valid type are not
    indexed and their existing lines are kept as written. `drop` names paths whose entry lines
    must go even though no memory stands behind them any more (memdir removed the file itself).
    `missing` names link targets whose files do not exist: their entries are dead (see the module's
    doc). `keep_wording` keeps the text of an existing entry while its memory lives.
    """
    with paused_gc():  # a row, a note and a line for each of thousands of memories, and no cycles
        return _build_index(existing, memories, today, caps, drop, missing, keep_wording)


def _build_index(
    existing: str,
    memories: Iterable[Indexable],
    today: dt.date,
    caps: Caps,
    drop: Iterable[str],
    missing: Iterable[str],
    keep_wording: bool,
) -> IndexResult:
    bom = "\ufeff" if existing.startswith("\ufeff") else ""
    existing = existing.removeprefix(bom)
    newline = "\r\n" if existing.count("\r\n") * 2 > existing.count("\n") else "\n"
    valid: dict[str, Indexable] = {}
    excluded: list[Excluded] = []
    withheld: list[Excluded] = []
    indexable: list[Indexable] = []
    for memory in memories:
        if memory.type is None:
            continue
        reason = memory.exclusion(today)
        if reason is not None:
            excluded.append(Excluded(memory, reason))
        elif (secret := withheld_reason(memory)) is not None:
            withheld.append(Excluded(memory, secret))
        else:
            indexable.append(memory)
        valid[memory.path] = memory
    parsed = _parse(existing, Resolver(valid), valid, {d.casefold() for d in drop}, set(missing))
    lines = parsed.lines
    ranked = sorted(indexable, key=value_key)
    slotted = {line.slot.path for line in lines if line.slot is not None}
    listed = slotted | parsed.linked
    unlisted = [m for m in ranked if m.path not in listed]
    _take_over_renamed(lines, unlisted)
    points = _insertion_points(lines, unlisted)
    # The memories that need a line of their own; one a hand-written line links is shown by that
    # line. Its own entry, if it has one, stays while everything fits; when the caps bind it goes,
    # as dead entries do, before any memory is left out (and the next run agrees: no candidate).
    candidates = [m for m in ranked if m.path not in parsed.linked]
    everything = {m.path for m in ranked if m.path not in parsed.linked or m.path in slotted}
    hand_lines = sum(1 for line in lines if line.slot is None)
    dead = [line.text for line in lines if line.dead]
    limit = caps.max_bytes - len(bom.encode())  # the BOM is kept, and counts

    def render(keep: Set[str], note: str | None, with_dead: bool, fresh: Set[str] = frozenset()) -> _Rendered:
        return _render(lines, points, keep, note, newline, keep_wording, with_dead, fresh)

    def linked(shown: Iterable[Indexable]) -> list[Indexable]:
        own = {m.path for m in shown}
        return [m for m in ranked if m.path in parsed.linked and m.path not in own]

    def fits(rendered: _Rendered) -> bool:
        return count_lines(rendered.text) <= caps.max_lines and len(rendered.text.encode()) <= limit

    def result(rendered: _Rendered, left_out: list[LeftOut] = [], dropped: bool = False) -> IndexResult:  # noqa: B006
        return IndexResult(
            text=bom + rendered.text if rendered.text else "",
            entries=rendered.shown,
            left_out=left_out,
            excluded=excluded,
            withheld=withheld,
            hand_lines=hand_lines,
            rewritten=parsed.duplicates + rendered.rewritten,
            linked=linked(rendered.shown),
            dead=[] if dropped else dead,
            dead_dropped=dead if dropped else [],
            listed=listed,
        )

    # Everything, if it fits; else without the lines that list nothing more: dead entries, then
    # the entries of memories a hand-written line links too. (Packing reserves room for a note that
    # a run left without these lines may not need: the next run would then find room for all.)
    own = {m.path for m in candidates}
    tries = [(everything, True), (everything, False), (own, False)]
    for at, (keep, with_dead) in enumerate(tries):
        if (at == 1 and not dead) or (at == 2 and own == everything):
            continue  # the same index as the try before
        if len(keep) <= caps.max_lines:  # every entry is a line: more than max_lines never fit
            rendered = render(keep, None, with_dead)
            if fits(rendered):
                return result(rendered, dropped=not with_dead)
    # The caps bind: dead entries go first, then the entries are packed most valuable first.
    base = render(set(), None, False)
    if not fits(base):
        refused = (
            f"the hand-written text in MEMORY.md alone is {count_lines(base.text)} lines and "
            f"{len(base.text.encode()):,} bytes, over the cap of {caps.max_lines} lines and "
            f"{caps.max_bytes:,} bytes; memdir will not cut it. Move some of it into memory files"
        )
        return IndexResult(
            text=bom + existing,
            left_out=[LeftOut(m, "hand-written text fills the index") for m in reversed(candidates)],
            excluded=excluded,
            withheld=withheld,
            hand_lines=hand_lines,
            refused=refused,
            linked=linked(m for m in ranked if m.path in slotted),
            dead=dead,
            listed=listed,
        )
    price = _Price(lines, keep_wording, newline)
    keep, reason_for, priced, fresh = _pack(lines, points, candidates, base, caps, price, limit)
    while True:
        left = [m for m in candidates if m.path not in keep]
        rendered = render(keep, left_out_note(len(left), caps) if left else None, False, fresh)
        if fits(rendered):
            break
        if not keep:  # the hand-written text fits, only the note does not
            rendered = render(set(), None, False)
            break
        # The packing reserves room for what it cannot price exactly; should that fall short, the
        # least valuable entry kept makes way.
        last = next(m for m in reversed(candidates) if m.path in keep)
        keep.discard(last.path)
        fresh.discard(last.path)
        reason_for[last.path] = f"{caps.max_bytes:,}-byte cap"
    rendered = _fill(rendered, keep, fresh, price, priced, candidates, render, fits, caps, limit)
    left_out = [LeftOut(m, reason_for[m.path]) for m in reversed(candidates) if m.path not in keep]
    return result(rendered, left_out, dropped=True)


_FILL_MISSES = 3  # a few entries tried in vain and the room left is no room


def _fill(
    rendered: _Rendered,
    keep: set[str],
    fresh: set[str],
    price: _Price,
    priced: set[str],
    candidates: list[Indexable],
    render: Callable[[Set[str], str | None, bool, Set[str]], _Rendered],
    fits: Callable[[_Rendered], bool],
    caps: Caps,
    limit: int,
) -> _Rendered:
    """Add the entries the packing's reserve kept out although they fit: what it set aside for a
    blank line or a note that the index turned out not to need. Each try renders the index, so
    only entries that fit the measured room are tried."""
    misses = 0
    out = sum(1 for m in candidates if m.path not in keep)
    # What the rendered index and the note take, measured once per change rather than once per entry
    # tried: with ten thousand memories left out, splitting and encoding the index for each of them
    # was most of what a warm `memdir index` did.
    lines_used, bytes_used, priced_out = count_lines(rendered.text), len(rendered.text.encode()), -1
    note: str | None = None
    room_for_note = 0
    for memory in candidates:
        if memory.path in keep:
            continue
        if memory.path not in priced and out > 1:  # no line for it, unless as the last one out it takes the note's
            continue
        left = out - 1  # once this one is in
        if priced_out != out:
            note = left_out_note(left, caps) if left else None
            # The note shrinks ("1 more memory"), or goes when this is the last one out.
            room_for_note = len(left_out_note(left + 1, caps).encode()) - (len(note.encode()) if note else -1)
            priced_out = out
        room_lines = caps.max_lines - lines_used + (note is None)
        if room_lines < 1:
            break  # not a line free, and the note stays: nothing more can fit
        room_bytes = limit - bytes_used + room_for_note
        if price.over(memory, room_bytes):  # its line as _pack priced it (the kept wording, say)
            continue
        trial, as_fresh = render(keep | {memory.path}, note, False, fresh), False
        ok = fits(trial)
        if not ok and price.fresh(memory) < price.cost(memory):  # as in _pack: its generated line instead
            trial, as_fresh = render(keep | {memory.path}, note, False, fresh | {memory.path}), True
            ok = fits(trial)
        if ok:
            keep.add(memory.path)
            if as_fresh:
                fresh.add(memory.path)
            rendered, out = trial, out - 1
            lines_used, bytes_used = count_lines(rendered.text), len(rendered.text.encode())
        else:
            misses += 1
            if misses >= _FILL_MISSES:
                break
    return rendered


def _pack(
    lines: list[_Line],
    points: dict[int, list[Indexable]],
    ranked: list[Indexable],
    base: _Rendered,
    caps: Caps,
    price: _Price,
    limit: int,
) -> tuple[set[str], dict[str, str], set[str], set[str]]:
    """Which entries to keep: most valuable first, each one that fits in what is left; why each of
    the others is out; the entries that had a line to try (those before the lines ran out); and
    the kept entries whose line as it stands did not fit, shown with their generated line instead.

    Every entry costs its line; the left-out note, and the blank line (and fence) that new entries
    at the end may need (as `_render` adds them), are reserved up front.

    An existing line that does not fit (kept wording, an indent) is tried as the memory's generated
    line in its place: left out, the memory would come back with that line on the next run, so one
    run must do it (an index run reaches its fixed point)."""
    nl = price.newline
    lines_left = caps.max_lines - count_lines(base.text) - 1  # the note
    bytes_left = limit - len(base.text.encode()) - len(left_out_note(len(ranked), caps).encode()) - nl
    if points.get(len(lines)):
        texts, separators = split_lines(base.text), []
        fence = _open_fence(texts)
        if fence is not None:
            texts.append(fence)
            separators.append(fence)
        if texts and texts[-1].strip() and not _LIST_ITEM.match(texts[-1]):
            separators.append("")
        lines_left -= len(separators)
        bytes_left -= sum(len(text.encode()) + nl for text in separators)
    room = bytes_left
    keep: set[str] = set()
    reason_for: dict[str, str] = {}
    priced: set[str] = set()
    fresh: set[str] = set()
    for memory in ranked:
        if lines_left <= 0:
            reason_for[memory.path] = f"{caps.max_lines}-line cap"
            continue
        priced.add(memory.path)
        if price.floor(memory) > bytes_left and price.ceiling(memory) <= room:
            reason_for[memory.path] = f"{caps.max_bytes:,}-byte cap"  # what its line costs exactly, no matter
            continue
        cost, as_fresh = price.cost(memory), False
        if cost > bytes_left and price.fresh(memory) < cost:
            cost, as_fresh = price.fresh(memory), True
        if cost > room:
            reason_for[memory.path] = (
                f"too long to ever fit: its line is {cost:,} bytes and the hand-written text leaves {max(room, 0):,}"
            )
        elif cost > bytes_left:
            reason_for[memory.path] = f"{caps.max_bytes:,}-byte cap"
        else:
            keep.add(memory.path)
            if as_fresh:
                fresh.add(memory.path)
            lines_left -= 1
            bytes_left -= cost
    return keep, reason_for, priced, fresh


class _Price:
    """What an entry's line costs in bytes (its newline included), rendered only when bounds taken
    from its path cannot decide: ten thousand memories leave room for a hundred lines, and rendering
    all their lines was half of what planning the index cost.

    The bounds hold for a line render_entry draws: `- [title](target)` is at least as long as the
    path and six characters; it is at most ENTRY_MAX characters, unless the path makes it longer,
    and then the link (at most six characters a path character, percent-encoded, and four more)
    and a title of twelve; a character is at most four bytes. A line kept from MEMORY.md is priced
    exactly, and so is its memory's generated line, which may stand in for it (see _pack)."""

    def __init__(self, lines: list[_Line], keep_wording: bool, newline: str) -> None:
        self.slot_line = {line.slot.path: line for line in lines if line.slot is not None}
        self.keep_wording = keep_wording
        self.newline = len(newline.encode())
        self.known: dict[str, int] = {}
        self.known_fresh: dict[str, int] = {}

    def cost(self, memory: Indexable) -> int:
        """The line as it stands: the existing line as it is rendered, else the generated one."""
        found = self.known.get(memory.path)
        if found is None:
            slot = self.slot_line.get(memory.path)
            line = _slot_text(slot, self.keep_wording) if slot else entry_line(memory)
            found = self.known[memory.path] = len(line.encode()) + self.newline
        return found

    def fresh(self, memory: Indexable) -> int:
        """The generated line, unindented, as a new entry has it."""
        if memory.path not in self.slot_line:
            return self.cost(memory)
        found = self.known_fresh.get(memory.path)
        if found is None:
            found = self.known_fresh[memory.path] = len(entry_line(memory).encode()) + self.newline
        return found

    def floor(self, memory: Indexable) -> int:
        if memory.path in self.slot_line:
            return min(self.cost(memory), self.fresh(memory))
        return len(memory.path) + len("- []()") + self.newline

    def ceiling(self, memory: Indexable) -> int:
        if memory.path in self.slot_line:
            return min(self.cost(memory), self.fresh(memory))
        link = 6 * len(memory.path) + 4
        return 4 * max(ENTRY_MAX, len("- []()") + link + _MIN_TITLE) + self.newline

    def over(self, memory: Indexable, room: int) -> bool:
        """Whether the line costs more than `room`, as it stands and as generated."""
        return self.floor(memory) > room or min(self.cost(memory), self.fresh(memory)) > room

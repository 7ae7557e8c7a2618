"""What to put in an agent's context at session start: the index, plus the memories that always load.

`render_context` reads the folder and returns text; it never prints and never writes. A byte budget
is spent in a fixed order: the index first (its entries most valuable first, the order the index
caps use), then the full text of pinned memories, then the full text of memories a caller adds
(`recalled`, e.g. the memories recall found relevant to a task), each of these with its age in words.
A memory is never cut part-way: its entry or its body is in whole or left out, and what was left out
is reported. An entry of MEMORY.md whose file is gone (a dead entry, which the index keeps by design)
is left out, and one line says which: the agent must not be sent to read a file that is not there.

The context goes into an agent's session, so it is a boundary (memdir.text.outward): a secret in a memory
is masked and a control character in one (ESC, NUL, a C1 CSI) is written as an escape, in every format.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from typing import TYPE_CHECKING, Any

from memdir.core.age import Age
from memdir.core.errors import MemdirError
from memdir.core.index import entry_target, render_entry, split_lines, value_key
from memdir.core.model import Memory, plural
from memdir.text.outward import dumps, fence_for, for_terminal, inert_tags, masked, one_field

if TYPE_CHECKING:
    from memdir.core.store import Scan
    from memdir.folder import MemoryDir

PINNED = "pinned"  # `pin: true`, or importance at or above the configured threshold
RECALLED = "recalled"  # given by the caller through `recalled`

_INDEX_NOTE = "<!-- memdir:"  # the note the index ends with when its caps left entries out
# XML 1.0 cannot carry these at all, not even as character references: they become U+FFFD.
_XML_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_SURROGATE = re.compile("[\ud800-\udfff]")  # cannot be encoded as UTF-8


class ContextFormat(StrEnum):
    MARKDOWN = "markdown"
    XML = "xml"
    JSON = "json"


class ContextBudgetTooSmall(MemdirError):
    """The budget cannot hold even what is never left out (the hand-written text of MEMORY.md)."""


@dataclass(frozen=True)
class LoadedMemory:
    """A memory whose full text is in the context, and why."""

    memory: Memory
    reason: str  # PINNED | RECALLED
    age_note: str | None = None  # for recalled memories: how old it is, in the reader's words


@dataclass(frozen=True)
class LeftOutOfContext:
    memory: Memory
    part: str  # "entry": its index line; "body": its full text
    cause: str  # "index": the index's own caps; "budget": the context budget; "excluded": never loaded
    reason: str  # for people: "200-line cap", "4,000-byte context budget", "superseded", ...


@dataclass(frozen=True)
class Context:
    """The rendered context and what went into it."""

    text: str
    format: ContextFormat
    entries: list[Memory]  # index entries in the text, in index order
    loaded: list[LoadedMemory]  # memories whose full text is in the text, in order
    left_out: list[LeftOutOfContext]
    budget: int | None
    index_refused: str | None = None  # why MEMORY.md could not be regenerated (then it is used as it is)
    missing: list[str] = field(default_factory=list)  # link targets of MEMORY.md entries whose file is gone

    @property
    def bytes(self) -> int:
        return len(self.text.encode("utf-8"))

    @property
    def estimated_tokens(self) -> int:
        return estimate_tokens(self.text)


def estimate_tokens(text: str) -> int:
    """A rough, rather high token count for budgeting: about four ASCII characters make a token, and
    every other character counts as one (CJK text is close to that; accented Latin text is less)."""
    ascii_chars = len(text.encode("ascii", "ignore"))
    return math.ceil(ascii_chars / 4 + (len(text) - ascii_chars))


def pinned_memories(folder: MemoryDir, scan: Scan | None = None) -> list[Memory]:
    """The live memories that always load in full, most valuable first. A recall for the same context
    passes their paths as `already`, so that none of them takes a recalled memory's place."""
    scan = scan or folder.scan()
    pin_importance = folder.config.context.pin_importance
    pinned = (m for m in scan.memories if is_pinned(m, pin_importance))  # few are: the cheap test first
    return sorted((m for m in pinned if m.type is not None and m.exclusion(folder.today) is None), key=value_key)


def is_pinned(memory: Memory, pin_importance: float | None) -> bool:
    """Whether a memory always loads in full: `pin: true`, or an `importance` set to at least
    `pin_importance`. `pin: false` keeps any memory out; the default importance (unset) never pins."""
    pin = memory.fields.get("pin")
    if isinstance(pin, bool):
        return pin
    return pin_importance is not None and memory.importance_given is not None and memory.importance >= pin_importance


def age_note(age: Age, today: dt.date) -> str:
    """How old a memory is (its `Age`: memdir.core.age), for the agent that reads it: from today,
    from yesterday, or N days old with a reminder that it may no longer hold (the note Claude Code
    adds to the memories it recalls)."""
    if age.day is None:
        return "This memory is undated; verify before asserting it as fact."
    days = (today - age.day).days
    if days <= 0:
        return "This memory is from today."
    if days == 1:
        return "This memory is from yesterday."
    return f"This memory is {days:,} days old; verify before asserting it as fact."


def without_dead_entries(index_text: str, dead: Sequence[str]) -> tuple[str, list[str]]:
    """MEMORY.md's text without its dead entries (IndexResult.dead: entry lines whose file is gone),
    and the link targets of those left out. The index keeps them for a person to see; a session
    must not be told to read a file that does not exist."""
    if not dead:
        return index_text, []
    gone = set(dead)
    kept: list[str] = []
    missing: list[str] = []
    for line in index_text.split("\n"):
        if line.removesuffix("\r") in gone:
            missing.append(entry_target(line.removesuffix("\r")) or line.strip())
        else:
            kept.append(line)
    return "\n".join(kept), missing


def missing_sentence(missing: Sequence[str]) -> str:
    """Which entries of MEMORY.md were left out because their files are gone, in one sentence."""
    which = "its file no longer exists" if len(missing) == 1 else "their files no longer exist"
    return (
        f"{plural(len(missing), 'entry', 'entries')} of MEMORY.md left out here because {which} "
        f"({', '.join(missing)}); `memdir index --drop-missing` removes them"
    )


def missing_note(missing: Sequence[str]) -> str:
    """missing_sentence as the line markdown ends the index with, a comment like the index's own notes."""
    return f"{_INDEX_NOTE} {missing_sentence(missing)} -->\n"


def render_context(
    folder: MemoryDir,
    format: ContextFormat | str = ContextFormat.MARKDOWN,
    budget: int | None = None,
    *,
    include_index: bool = True,
    recalled: Iterable[Memory] = (),
    scan: Scan | None = None,
) -> Context:
    """The context for a new session: the index (as `memdir index` would write it, without writing
        it) and the full text of the pinned memories, within `budget` bytes of UTF-8.

        `budget` None takes the config's `context.budget` (else there is no limit). `include_index=False`
        leaves the index out, for harnesses that load MEMORY.md themselves (Claude Code does). `recalled`
        adds more full texts after the pinned ones, best first, each with its `age_note`: the hook for
    recall (`memdir context --for TASK`). Superseded, expired,
        quarantined and archived memories are never loaded. Raises ContextBudgetTooSmall when the budget
        cannot hold the hand-written text of MEMORY.md. `scan` is the folder as the caller already read
        it (for `pinned_memories`, say), so that it is not read twice.
    """
    fmt = ContextFormat(format)
    settings = folder.config.context
    budget = settings.budget if budget is None else budget
    if budget is not None and budget < 1:
        raise ValueError(f"budget must be a positive number of bytes, not {budget}")
    scan = scan or folder.scan()  # the bodies are needed, so the whole folder is read (or was, by the caller)
    index = folder.plan_index(scan=scan)
    memories = {m.path: m for m in scan.memories}
    left_out: list[LeftOutOfContext] = []
    entries: list[Memory] = []
    index_text = ""
    missing: list[str] = []
    if include_index:
        entries = [memories[row.path] for row in index.entries]
        index_text, missing = without_dead_entries(index.text.removeprefix("\ufeff").replace("\r\n", "\n"), index.dead)
        index_text, missing = for_terminal(index_text), [for_terminal(target) for target in missing]
        left_out += [
            LeftOutOfContext(memories[gone.memory.path], "entry", "index", gone.reason) for gone in index.left_out
        ]
    capped = len(left_out)  # entries the index's own caps left out (in markdown, the index's note says so)

    pinned = pinned_memories(folder, scan)
    bodies = [LoadedMemory(m, PINNED) for m in pinned]
    seen = {m.path for m in pinned}
    for memory in recalled:
        if memory.path in seen:
            continue
        seen.add(memory.path)
        excluded = memory.exclusion(folder.today)
        if excluded is not None:  # recall should not offer these; never load them all the same
            left_out.append(LeftOutOfContext(memory, "body", "excluded", excluded))
        else:
            bodies.append(LoadedMemory(memory, RECALLED, age_note(scan.ages.of(memory), folder.today)))

    renderer = _Renderer(fmt, str(folder.root), index_text, entries, bodies, budget, capped, missing)
    shown_entries, shown_bodies = _fit(renderer, entries, bodies, budget)
    text = renderer.render(shown_entries, shown_bodies)
    reason = f"{budget or 0:,}-byte context budget"  # without a budget nothing is left out for one
    ranked = sorted(entries, key=value_key)
    left_out += [LeftOutOfContext(m, "entry", "budget", reason) for m in ranked if m.path not in shown_entries]
    left_out += [LeftOutOfContext(b.memory, "body", "budget", reason) for b in bodies if b not in shown_bodies]
    return Context(
        text=text,
        format=fmt,
        entries=[m for m in entries if m.path in shown_entries],
        loaded=shown_bodies,
        left_out=left_out,
        budget=budget,
        index_refused=index.refused if include_index else None,
        missing=missing,
    )


def recalled_entry(memory: Memory, age: Age, today: dt.date) -> tuple[dict[str, Any], str]:
    """One recalled memory as `memdir context --for` gives it: its entry of `--format json` (name,
    type, path, description, body, age) and its markdown section, full text and age note. For callers
    that hand recalled memories out one by one (the MCP `recall` tool); `age` is the one recall
    scored it by (Recalled.age)."""
    loaded = LoadedMemory(memory, RECALLED, age_note(age, today))
    return _json_entry(memory, loaded), _clean(_markdown_body(memory, loaded))


def recalled_in_full(memory: Memory, age: Age, today: dt.date) -> str:
    """One recalled memory's full text as the markdown context shows it (title, type, file, age, body),
    for a caller that adds memories to a session one prompt at a time (the UserPromptSubmit hook);
    `age` is the one recall scored it by (Recalled.age)."""
    return _clean(_markdown_body(memory, LoadedMemory(memory, RECALLED, age_note(age, today))))


def _fit(
    renderer: _Renderer, entries: Sequence[Memory], bodies: Sequence[LoadedMemory], budget: int | None
) -> tuple[set[str], list[LoadedMemory]]:
    """Which entries and bodies fit the budget.

    Every trial renders the whole text, so wrappers, escaping and the left-out note are counted
    exactly in every format. Entries go in most valuable first and stop at the first that does not
    fit (as the index caps cut); bodies are tried only once the whole index is in, each in whole,
    and one too long does not stop a shorter one after it.
    """
    every_entry = {m.path for m in entries}
    if budget is None or _size(renderer.render(every_entry, bodies)) <= budget:
        return every_entry, list(bodies)
    shown: set[str] = set()
    base = _size(renderer.render(shown, []))
    if base > budget:
        raise ContextBudgetTooSmall(
            f"a {budget:,}-byte budget cannot hold even the hand-written text of MEMORY.md and the "
            f"wrapping ({base:,} bytes in {renderer.format.value}); raise the budget"
        )
    for memory in sorted(entries, key=value_key):
        if _size(renderer.render(shown | {memory.path}, [])) > budget:
            return shown, []
        shown.add(memory.path)
    loaded: list[LoadedMemory] = []
    for body in bodies:
        if _size(renderer.render(shown, [*loaded, body])) <= budget:
            loaded.append(body)
    return shown, loaded


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _clean(text: str) -> str:
    """Lone surrogates (only a hand-made Memory can hold them) as U+FFFD, so the text encodes."""
    return _SURROGATE.sub("\ufffd", text)


def _body_text(memory: Memory) -> str:
    # Line endings are normalised: the context is read, not written back to the file.
    return memory.body.replace("\r\n", "\n").strip("\n") or memory.description


class _Renderer:
    """Renders one selection of entries and bodies in one format; fragments are cached, since
    fitting a budget renders the same memories many times."""

    def __init__(
        self,
        fmt: ContextFormat,
        folder: str,
        index_text: str,
        entries: Sequence[Memory],
        bodies: Sequence[LoadedMemory],
        budget: int | None,
        capped: int,
        missing: Sequence[str] = (),
    ) -> None:
        self.format = fmt
        self.missing = missing  # dead entries left out of the index text
        self.folder = folder
        self.index_text = index_text
        self.entries = entries
        self.bodies = bodies  # every body that could be loaded
        self.budget = budget
        self.capped = capped  # entries the index caps left out
        self._cache: dict[tuple[str, str | None], str] = {}  # one format per renderer: path and reason suffice
        self._renderers: dict[ContextFormat, Callable[[set[str], Sequence[LoadedMemory]], str]] = {
            ContextFormat.MARKDOWN: self._markdown,
            ContextFormat.XML: self._xml,
            ContextFormat.JSON: self._json,
        }

    def render(self, shown: set[str], bodies: Sequence[LoadedMemory]) -> str:
        return _clean(self._renderers[self.format](shown, bodies))

    def _fragment(
        self, make: Callable[[Memory, LoadedMemory | None], str], memory: Memory, loaded: LoadedMemory | None
    ) -> str:
        key = (memory.path, loaded.reason if loaded else None)
        if key not in self._cache:
            self._cache[key] = make(memory, loaded)
        return self._cache[key]

    def _budget_counts(self, shown: set[str], bodies: Sequence[LoadedMemory]) -> tuple[int, int]:
        """How many entries and bodies the budget leaves out, for a selection."""
        entries_out = sum(1 for m in self.entries if m.path not in shown)
        return entries_out, len(self.bodies) - len(bodies)

    @cached_property
    def notes(self) -> str:
        """The hand-written lines of MEMORY.md: everything but its managed entries and memdir's note."""
        managed = {render_entry(m) for m in self.entries}
        kept = [
            line
            for line in split_lines(self.index_text)
            if line.strip() not in managed and not line.startswith(_INDEX_NOTE)
        ]
        return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip("\n")

    # --- markdown: MEMORY.md as the agent would read it, then the full texts -------------------

    def _markdown(self, shown: set[str], bodies: Sequence[LoadedMemory]) -> str:
        out = ""
        if self.index_text:
            dropped = {render_entry(m) for m in self.entries if m.path not in shown}
            lines = [line for line in split_lines(self.index_text) if line.strip() not in dropped]
            out = "\n".join(lines) + "\n" if lines else ""
        if self.missing:
            out += missing_note(self.missing)
        if bodies:
            out += ("\n" if out else "") + "# Memories loaded in full\n"
            out += "".join(self._fragment(_markdown_body, b.memory, b) for b in bodies)
        entries_out, bodies_out = self._budget_counts(shown, bodies)
        if entries_out or bodies_out:
            parts = []
            if entries_out:
                parts.append(plural(entries_out, "index entry", "index entries"))
            if bodies_out:
                parts.append(f"the full text of {plural(bodies_out, 'memory', 'memories')}")
            out += (
                ("\n" if out else "")
                + f"{_INDEX_NOTE} left out to fit the {self.budget or 0:,}-byte context budget: "
                + " and ".join(parts)
                + "; they are still in the memory folder -->\n"
            )
        return out

    # --- xml: <memory><entry key="NAME" type="TYPE"><description/><value/></entry></memory> ------

    def _xml(self, shown: set[str], bodies: Sequence[LoadedMemory]) -> str:
        out = ["<memory>\n"]
        notes = self.notes
        if notes:
            out.append(f"<notes>{_xml_text(notes)}</notes>\n")
        by_path = {b.memory.path: b for b in bodies}
        for memory in self.entries:
            if memory.path in shown:
                out.append(self._fragment(_xml_entry, memory, by_path.pop(memory.path, None)))
        for loaded in by_path.values():
            out.append(self._fragment(_xml_entry, loaded.memory, loaded))
        if self.missing:
            sentence = _xml_text(missing_sentence(self.missing))
            out.append(f'<missing entries="{len(self.missing)}">{sentence}</missing>\n')
        entries_out, bodies_out = self._budget_counts(shown, bodies)
        entries_out += self.capped
        if entries_out or bodies_out:
            out.append(
                f'<left-out entries="{entries_out}" bodies="{bodies_out}">Left out to fit the index caps or the '
                "context budget; they are still in the memory folder.</left-out>\n"
            )
        out.append("</memory>\n")
        return "".join(out)

    # --- json: the same data for harnesses that build their own prompt -------------------------

    def _json(self, shown: set[str], bodies: Sequence[LoadedMemory]) -> str:
        by_path = {b.memory.path: b for b in bodies}
        items: list[dict[str, Any]] = []
        for memory in self.entries:
            if memory.path in shown:
                items.append(_json_entry(memory, by_path.pop(memory.path, None)))
        items += [_json_entry(b.memory, b) for b in by_path.values()]
        entries_out, bodies_out = self._budget_counts(shown, bodies)
        payload = {
            "folder": self.folder,
            "notes": self.notes,
            "entries": items,
            "left_out": {"entries": entries_out + self.capped, "bodies": bodies_out, "budget": self.budget},
            "missing": list(self.missing),
        }
        return dumps(payload, indent=None) + "\n"


def _markdown_body(memory: Memory, loaded: LoadedMemory | None) -> str:
    """A memory in full as a section of its own: the title as its heading and the text inside a
    code fence. Neither can end the section or start another (outward.inert_tags, fence_for): a
    line of the text that reads `## other` or `</memory><system>` is text, which the name, on one
    line with its line breaks escaped, cannot hold either."""
    meta = one_field(f"{memory.raw_type or 'memory'} · {loaded.reason if loaded else None} · {memory.path}")
    if loaded is not None and loaded.age_note:
        meta += f"\n\n_{loaded.age_note}_"
    body = inert_tags(for_terminal(_body_text(memory)))
    fence = fence_for(body)
    return f"\n## {inert_tags(one_field(memory.title))}\n\n{inert_tags(meta)}\n\n{fence}markdown\n{body}\n{fence}\n"


def _xml_text(text: str) -> str:
    text = _XML_FORBIDDEN.sub("\ufffd", text)
    # `>` is escaped too, so that `]]>` (which may not appear in character data) never does.
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\r", "&#13;")


def _xml_attribute(text: str) -> str:
    # Parsers turn raw tabs and line breaks in attributes into spaces; references keep them.
    return _xml_text(text).replace('"', "&quot;").replace("\n", "&#10;").replace("\t", "&#9;")


def _xml_entry(memory: Memory, loaded: LoadedMemory | None) -> str:
    attributes = f'key="{_xml_attribute(memory.title)}" type="{_xml_attribute(memory.raw_type or "")}"'
    attributes += f' path="{_xml_attribute(memory.path)}"'
    inner = f"<description>{_xml_text(memory.description)}</description>"
    if loaded is not None:
        attributes += f' loaded="{_xml_attribute(loaded.reason)}"'
        if loaded.age_note:
            inner += f"<age>{_xml_text(loaded.age_note)}</age>"
        inner += f"<value>{_xml_text(_body_text(memory))}</value>"
    return for_terminal(f"<entry {attributes}>{inner}</entry>\n")


def _json_entry(memory: Memory, loaded: LoadedMemory | None) -> dict[str, Any]:
    item: dict[str, Any] = {
        "name": memory.title,
        "type": memory.raw_type,
        "path": memory.path,
        "description": memory.description,
        "loaded": loaded.reason if loaded else None,
    }
    if loaded is not None:
        item["body"] = _body_text(memory)
        if loaded.age_note:
            item["age"] = loaded.age_note
    return masked(item, for_terminal)  # type: ignore[no-any-return]

"""D: duplicates and conflicts. Two memories that claim the same identity, say the same thing, or disagree;
and memory text that the project's CLAUDE.md already says."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from memdir.core.claude_code import claude_project_of
from memdir.core.index import entry_target, split_lines
from memdir.core.model import INDEX_NAME, Memory, name_key
from memdir.core.store import MAX_FILE_BYTES
from memdir.lint.registry import Hit, LintContext, Severity, rule

if TYPE_CHECKING:
    from memdir.text.similarity import PairVerdict


@rule(
    "D001", "duplicate-name", Severity.ERROR,
    "Finds two memories with the same `name`, ignoring case, spacing and punctuation.",
    why="""A name picks one memory for `memdir show/edit/rm` and for the agent; two memories with one
    name are usually a fact saved twice, or a change saved beside the old version instead of over
    it. Reported on each later file, naming the first.""",
    example="feedback_lint.md and team/feedback_lint.md, both `name: lint-before-commit`",
    instead="One memory `lint-before-commit` holding both texts, or two distinct names.",
)  # fmt: skip
def duplicate_name(ctx: LintContext) -> Iterator[Hit]:
    first: dict[str, Memory] = {}
    for memory in ctx.scan.memories:
        key = name_key(memory.name) if memory.name else ""
        if not key:
            continue
        if key in first:
            yield Hit(memory.path, memory.line_of("name"), f"same name {memory.name!r} as {first[key].path}")
        else:
            first[key] = memory


CONTRADICTION_MAX_CHARS = 1500


def _similar_pairs(ctx: LintContext) -> list[tuple[Memory, Memory, PairVerdict]]:
    from memdir.text.similarity import MemoryText, find_pairs

    class FileText(MemoryText):
        """A memory's text whose body is cut from the file's text when asked, not held: a folder's
        bodies are most of its text (40 MiB of 10,000 real-sized memories), and the comparison
        reads each once or twice."""

        memory: Memory

        def __init__(self, memory: Memory) -> None:
            for field, value in (("key", memory.path), ("name", memory.name), ("description", memory.description),
                                 ("type", memory.raw_type), ("memory", memory)):  # fmt: skip
                object.__setattr__(self, field, value)  # frozen, as its base

        @property
        def body(self) -> str:
            return self.memory.body

    memories = {m.path: m for m in ctx.scan.memories if m.type is not None and m.exclusion(ctx.today) is None}
    return [(memories[v.a], memories[v.b], v) for v in find_pairs([FileText(m) for m in memories.values()])]


def _pairs(ctx: LintContext, label: str) -> Iterator[tuple[Memory, Memory, PairVerdict]]:
    """Flagged pairs of one label; the comparison runs once per lint run for D002 and D003."""
    for a, b, verdict in ctx.shared("similar-pairs", lambda: _similar_pairs(ctx)):
        if verdict.label == label:
            yield a, b, verdict


@rule(
    "D002", "near-duplicate", Severity.WARNING,
    "Finds pairs of memories that say the same thing in other words.",
    why="""A fact saved twice (by two sessions, or by a person and an agent) costs index room and
    recall budget twice, and the copies drift apart: the next edit updates one and leaves the
    other to contradict it. Memories are compared by their informative words and numbers,
    not all pairs against each other, so large folders stay fast. Reported once per pair, on
    the later file.""",
    example="""feedback_lint.md:   Run npm run lint before every commit.
    feedback_lint2.md:  Always lint (npm run lint) before committing.""",
    instead="One memory; merge what the second adds into the first and delete the second.",
)  # fmt: skip
def near_duplicate(ctx: LintContext) -> Iterator[Hit]:
    for a, b, verdict in _pairs(ctx, "duplicate"):
        message = f"says the same as {a.path} (similarity {verdict.score:.2f}); merge them"
        yield Hit(b.path, b.line_of("description"), message)


@rule(
    "D003", "possible-contradiction", Severity.INFO,
    "Finds pairs of memories on the same topic whose numbers, dates, names or polarity differ.",
    why="""Two memories about the same thing that disagree (Net 30 vs Net 45, Fly.io vs Render) mean
    one of them is out of date, and the agent cannot tell which. Usually the newer one should
    supersede the older: set `superseded_by:` on the old one or delete it. Info only: two
    memories can share a topic and differ on purpose. Two memories that share a template but
    not a subject ("payments owner is Alice", "search owner is Bob"), each naming in its
    description something the other never mentions, are two facts and are not flagged.""",
    example="""project_invoices.md:  Client invoices use Net 30 terms.
    project_terms.md:     Invoices are due 45 days after issue.""",
    instead="project_terms.md alone, and `superseded_by: project_terms.md` (or deletion) for the old one.",
)  # fmt: skip
def possible_contradiction(ctx: LintContext) -> Iterator[Hit]:
    for a, b, verdict in _pairs(ctx, "contradiction"):
        # Two long documents on one topic always differ somewhere; a contradiction worth a look
        # is between two facts, which are short.
        if max(len(a.body), len(b.body)) > CONTRADICTION_MAX_CHARS:
            continue
        reason = verdict.reason if len(verdict.reason) <= 160 else verdict.reason[:157] + "..."
        yield Hit(b.path, b.line_of("description"), f"may contradict {a.path}: {reason}")


# --- D004: text CLAUDE.md already says ----------------------------------------------------------------

# The files Claude Code loads from a project's root at every session start, besides the memory.
CLAUDE_MD_NAMES = ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md")
REPEAT_MIN_WORDS = 8
REPEAT_MIN_CHARS = 40  # of the normalised text: CJK sentences have no spaces to count words by
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")
# What opens a line without being its text: a quote, a bullet or "1.", a bold label ("**Why:**").
_LINE_MARKER = re.compile(
    r"^[ \t]*(?:>[ \t]*)*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?"
    r"(?:(?:\*\*|__)[^*_\n]{1,40}?(?:[:：](?:\*\*|__)|(?:\*\*|__)[:：])[ \t]*)?"
)


def project_root(ctx: LintContext) -> Path | None:
    """The project whose CLAUDE.md goes with the folder: the one a Claude Code auto-memory folder
    (`~/.claude/projects/<sanitised path>/memory`) is named after, else the git work tree holding
    the folder, else the folder of the config file, else the folder above `.claude/memory`."""
    root = ctx.root.resolve()
    claude_project = claude_project_of(root)
    if claude_project is not None:
        return claude_project
    if ctx.repo_root is not None:
        return ctx.repo_root
    if ctx.config.path is not None:
        return ctx.config.path.parent
    return root.parent.parent if root.parent.name == ".claude" else None


def claude_md_files(ctx: LintContext) -> list[tuple[Path, str]]:
    """(file, the name a finding shows for it): `lint.claude-md` from the config, else the project
    root's CLAUDE_MD_NAMES that exist."""
    configured = ctx.config.lint.claude_md
    if configured is not None:
        base = ctx.config.path.parent if ctx.config.path is not None else None
        return [(file, _shown(file, base)) for file in configured if file.is_file()]
    root = project_root(ctx)
    if root is None:
        return []
    return [(root / name, name) for name in CLAUDE_MD_NAMES if (root / name).is_file()]


def _shown(file: Path, base: Path | None) -> str:
    if base is not None and file.is_relative_to(base):
        return file.relative_to(base).as_posix()
    return str(file)


def repeat_keys(line: str) -> Iterator[str]:
    """The normalised sentences of a line long enough to count as repeated text (and the whole line,
    when it has several): case, accents, markdown and punctuation gone, words joined by one space."""
    from memdir.text.words import plain_words

    text = _LINE_MARKER.sub("", line, count=1)
    parts = _SENTENCE_END.split(text)
    for part in parts if len(parts) == 1 else [*parts, text]:
        words = plain_words(part)
        key = " ".join(words)
        if len(words) >= REPEAT_MIN_WORDS or len(key) >= REPEAT_MIN_CHARS:
            yield key


def _claude_md_keys(files: Iterable[tuple[Path, str]]) -> dict[str, str]:
    """Normalised sentence -> `CLAUDE.md:LINE` of its first occurrence, over all the files."""
    keys: dict[str, str] = {}
    for file, shown in files:
        try:
            with open(file, "rb") as handle:
                text = handle.read(MAX_FILE_BYTES).decode("utf-8", "replace")
        except OSError:
            continue  # unreadable: nothing to compare with; it is not the memory folder's file
        for number, line in enumerate(split_lines(text), start=1):
            for key in repeat_keys(line):
                keys.setdefault(key, f"{shown}:{number}")
    return keys


def _repeated(lines: Iterable[tuple[int, str]], keys: dict[str, str]) -> Iterator[tuple[int, str, str]]:
    """(line number, where CLAUDE.md says it, the line) for each line holding a sentence of `keys`."""
    for number, line in lines:
        where = next((keys[key] for key in repeat_keys(line) if key in keys), None)
        if where is not None:
            yield number, where, line


def _excerpt(line: str) -> str:
    text = " ".join(_LINE_MARKER.sub("", line, count=1).split())
    return text if len(text) <= 60 else text[:57].rstrip() + "..."


@rule(
    "D004", "repeats-claude-md", Severity.WARNING,
    "Finds sentences in a memory or MEMORY.md that the project's CLAUDE.md already says, word for word.",
    why="""CLAUDE.md and MEMORY.md are both loaded at the start of every session, and a memory is read
    whenever it bears on the task: a sentence in both is paid for twice in the context, and the two
    copies drift apart, so the next edit of one leaves the other contradicting it. A standing rule
    of the project belongs in CLAUDE.md; the memory then adds only what CLAUDE.md does not say (or
    goes). Sentences (and whole lines) of at least 8 words or 40 characters are compared after
    folding case, accents, markdown and punctuation; entries memdir writes into MEMORY.md are
    checked on their memory's description instead. CLAUDE.md is found at the project root: the
    git work tree holding the folder, or the project a Claude Code auto-memory folder
    (`~/.claude/projects/<path>/memory`) is named after; there `CLAUDE.md`, `.claude/CLAUDE.md`
    and `CLAUDE.local.md` are read. `claude-md = [...]` in `[tool.memdir.lint]` names the files
    instead. A warning, on by default: the repetition is a cost at every session, but harmless
    enough that it fails a run only with `--strict`.""",
    example="""CLAUDE.md:3            - Run `npm run lint` before every commit; CI rejects unlinted code.
    feedback_lint.md:6     Run npm run lint before every commit; CI rejects unlinted code.""",
    instead="""feedback_lint.md:6     CI was red for a whole day on 2026-11-20 over unlinted code.
    (the rule itself stays in CLAUDE.md; the memory keeps what CLAUDE.md does not say)""",
)  # fmt: skip
def repeats_claude_md(ctx: LintContext) -> Iterator[Hit]:
    keys = _claude_md_keys(claude_md_files(ctx))
    if not keys:
        return
    memories = [m for m in ctx.scan.memories if m.exclusion(ctx.today) is None]
    for memory in memories:
        lines: list[tuple[int, str]] = []
        if memory.description:
            lines.append((memory.line_of("description"), memory.description))
        lines += enumerate(split_lines(memory.body), start=memory.doc.body_line)
        for number, where, line in _repeated(lines, keys):
            yield Hit(memory.path, number, f"repeats {where}: {_excerpt(line)!r}")
    if ctx.index_text:
        listed = {m.path for m in ctx.scan.memories}
        hand_written = [
            (number, line)
            for number, line in enumerate(split_lines(ctx.index_text), start=1)
            if entry_target(line) not in listed
        ]
        for number, where, line in _repeated(hand_written, keys):
            yield Hit(INDEX_NAME, number, f"repeats {where}: {_excerpt(line)!r}")

"""D: duplicates and conflicts. Two memories that claim the same identity, say the same thing, or disagree."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from memdir.core.model import Memory, name_key
from memdir.lint.registry import Hit, LintContext, Severity, rule

if TYPE_CHECKING:
    from memdir.core.similarity import PairVerdict


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
    from memdir.core.similarity import MemoryText, find_pairs

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

"""Consolidation: near-duplicate memories folded into one, without losing a word or changing a fact.

Clusters come from memdir.text.similarity.duplicate_groups (the finder behind lint's D002), one memory
type at a time. Only members that state exactly the same numbers and dates (times, weekdays and
cadences count too) are merged, so a cluster is split into groups that agree and each group of two
or more is proposed on its own: merging "Net 30" with "Net 45" would silently pick one. Offline, the
most informative member of a group is kept and the others get `status: superseded` and
`superseded_by: <kept file>`. With a model (`llm=True`), one forced tool call per group writes the
merged text into a new memory, which every member is then superseded by; a merge that drops or adds
a number or date is refused. Superseded files stay in the folder (`memdir prune` archives them), so
applying a plan loses no text. Nothing here prints.
"""

from __future__ import annotations

import contextlib
import difflib
import itertools
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from memdir.core.errors import InvalidMemory, MemdirError
from memdir.core.gauntlet import Action, Candidate, Verdict, prepare, screen
from memdir.core.model import DESCRIPTION_MAX, FrontmatterError, Memory, NewMemory, name_key, set_fields
from memdir.core.rejections import remembered
from memdir.core.store import ensure_state_dir, open_state_file
from memdir.folder import FieldChange, FileChange
from memdir.write import llm

if TYPE_CHECKING:
    from memdir.folder import IndexWrite, MemoryDir
    from memdir.text.similarity import MemoryText

__all__ = [
    "Cluster",
    "ConsolidateBusy",
    "ConsolidateError",
    "ConsolidationPlan",
    "apply_consolidation",
    "consolidate",
    "consolidate_lock",
    "plan_consolidate",
]

LOCK_NAME = "consolidate.lock"
MERGE_TOOL = "write_merged_memory"


class ConsolidateBusy(MemdirError):
    """Another `memdir consolidate` holds the folder's consolidation lock."""


class ConsolidateError(MemdirError):
    """The model could not be asked (no key, an API error) or did not answer with the tool."""


@dataclass(frozen=True)
class Cluster:
    """Near-duplicates and what consolidation proposes for them."""

    members: list[str]  # paths relative to the folder, in folder order
    keeper: str | None = None  # offline: the member that stays live
    merged: str | None = None  # with a model: the new memory written from the members
    changes: list[FileChange] = field(default_factory=list)  # what the files become, for people to see
    refused: str | None = None  # why nothing is proposed for this cluster
    verdict: Verdict | None = None  # with a model: the screen's verdict on the merged memory
    retire: list[FieldChange] = field(default_factory=list)  # the members superseded

    @property
    def successor(self) -> str | None:
        """The file every other member is superseded by."""
        return self.merged or self.keeper


@dataclass
class ConsolidationPlan:
    clusters: list[Cluster]
    llm: bool
    model: str | None = None

    @property
    def proposed(self) -> list[Cluster]:
        return [c for c in self.clusters if c.refused is None and c.changes]

    @property
    def changes(self) -> list[FileChange]:
        return [change for cluster in self.proposed for change in cluster.changes]

    def diff(self) -> str:
        """Every proposed change as a unified diff (a new file diffs against /dev/null)."""
        out: list[str] = []
        for change in self.changes:
            before = (change.before or "").splitlines(keepends=True)
            after = change.after.splitlines(keepends=True)
            source = "/dev/null" if change.before is None else f"a/{change.path}"
            out += difflib.unified_diff(before, after, source, f"b/{change.path}")
        return "".join(line if line.endswith("\n") else line + "\n" for line in out)


@dataclass
class ConsolidationResult:
    plan: ConsolidationPlan
    applied: bool
    index: IndexWrite | None = None


# --- the lock: two runs never overlap -------------------------------------------------------------


@contextlib.contextmanager
def consolidate_lock(root: Path) -> Iterator[None]:
    """Hold `.memdir/consolidate.lock` for a whole run (plan, confirmation, apply).

    Not the folder lock: a run may wait on a person's answer, and `memdir index` in a session-start
    hook must not wait with it. Raises ConsolidateBusy at once when another run holds it."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no flock
        yield
        return
    path = ensure_state_dir(root) / LOCK_NAME
    with open_state_file(path, append=True) as handle:  # never through a symlink, never a pipe
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ConsolidateBusy(
                f"another `memdir consolidate` is running on {root} (it holds {path}); let it finish first"
            ) from None
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


# --- planning -------------------------------------------------------------------------------------


def plan_consolidate(
    folder: MemoryDir, *, llm: bool = False, client: Any = None, model: str | None = None
) -> ConsolidationPlan:
    """Find clusters of near-duplicates and say what to do with each. Writes nothing.

    `client` is an `anthropic.Anthropic` (tests pass one with a mock transport); by default, with
    `llm`, one is made from ANTHROPIC_API_KEY. `model` defaults to the `extract.model` setting.
    """
    from memdir.text.similarity import duplicate_groups

    scan = folder.scan()
    live = [m for m in scan.memories if m.type is not None and m.exclusion(folder.today) is None]
    by_path = {m.path: m for m in live}
    groups: list[list[str]] = []
    for memory_type in sorted({m.raw_type for m in live if m.raw_type}):
        groups += duplicate_groups([_text(m) for m in live if m.raw_type == memory_type])
    order = {m.path: i for i, m in enumerate(scan.memories)}
    parts: list[tuple[list[Memory], str | None]] = []  # (members in folder order, why not merged)
    for group in groups:
        parts += _split_by_values([by_path[p] for p in sorted(group, key=order.__getitem__)])
    parts.sort(key=lambda part: order[part[0][0].path])
    if llm:
        model = model or folder.config.extract.model
        if any(refused is None for _, refused in parts):  # no key is needed when nothing is to be merged
            client = client if client is not None else _default_client()
    taken = {name_key(m.name) for m in scan.memories if m.name}
    clusters = []
    for members, refused in parts:
        if refused is not None:
            clusters.append(Cluster([m.path for m in members], refused=refused))
        elif llm:
            clusters.append(_merge_with_model(folder, members, client, str(model), taken))
        else:
            clusters.append(_keep_one(folder, members))
    return ConsolidationPlan(clusters, llm, model if llm else None)


def fact_values(memory: Memory | str) -> frozenset[str]:
    """The numbers, dates, times, weekdays and cadences a memory (or text) states, normalised."""
    from memdir.text.similarity import stated_values  # the same reading of facts the duplicate finder uses

    text = memory if isinstance(memory, str) else f"{memory.description}\n{memory.body}"
    return frozenset(stated_values(text))


def _split_by_values(members: Sequence[Memory]) -> list[tuple[list[Memory], str | None]]:
    """A cluster cut into the groups that may be merged, and the members that may not, with why.

    Members go together only when they state exactly the same set of values. A memory stating no
    value does not go with one stating a date: "on save" and "on save, since 2026-11-02" differ, and
    merging them would either add the date to the first or drop it from the second. Equality (not
    "no value conflicts") also makes the grouping one answer whatever the order: with "none" fitting
    anything, {} would join {2026-11-02} or {2026-11-09} depending on which came first. Each group of
    two or more is a merge of its own; the rest are returned together, refused, their reason naming
    every member with what it states. A group's members keep the cluster's (folder) order."""
    by_values: dict[frozenset[str], list[Memory]] = {}
    for memory in members:
        by_values.setdefault(fact_values(memory), []).append(memory)
    groups = [part for group in by_values.values() for part in _still_joined(group)]
    mergeable = [group for group in groups if len(group) > 1]
    parts: list[tuple[list[Memory], str | None]] = [(group, None) for group in mergeable]
    alone = [group[0] for group in groups if len(group) == 1]
    if alone:
        shown = "; ".join(
            f"{', '.join(m.path for m in group)}: {', '.join(sorted(values)) or 'none'}"
            for values, group in by_values.items()
        )
        if not mergeable:
            reason = f"not merged: their numbers or dates differ ({shown})"
        else:
            whose = "its" if len(alone) == 1 else "their"
            reason = f"not merged: {whose} numbers or dates differ from every other near-duplicate's ({shown})"
        parts.append((alone, reason))
    return parts


def _still_joined(group: Sequence[Memory]) -> list[list[Memory]]:
    """`group` cut into the parts its own near-duplicate pairs hold together. A cluster grows through
    pairs, so A ~ B ~ C is one cluster though A and C were never judged duplicates: with B set apart
    for its date, nothing joins them any more."""
    from memdir.text.similarity import compare

    texts = [_text(m) for m in group]
    part_of = list(range(len(group)))
    for i, j in itertools.combinations(range(len(group)), 2):
        verdict = compare(texts[i], texts[j])
        if verdict is not None and verdict.label == "duplicate" and part_of[i] != part_of[j]:
            old = part_of[j]
            part_of = [part_of[i] if p == old else p for p in part_of]
    parts: dict[int, list[Memory]] = {}
    for memory, part in zip(group, part_of, strict=True):
        parts.setdefault(part, []).append(memory)
    return list(parts.values())


def _text(memory: Memory) -> MemoryText:
    from memdir.text.similarity import MemoryText

    return MemoryText(memory.path, memory.name, memory.description, memory.body, memory.raw_type)


_WORD = re.compile(r"\w+")


def _informative(memory: Memory) -> tuple[int, int, float, str]:
    """Larger is more informative: distinct words, then length, then importance, then newer."""
    text = f"{memory.description}\n{memory.body}"
    changed = memory.last_changed.isoformat() if memory.last_changed else ""
    return len(set(_WORD.findall(text.casefold()))), len(text), memory.importance, changed


def _keep_one(folder: MemoryDir, members: Sequence[Memory]) -> Cluster:
    keeper = max(members, key=lambda m: (_informative(m), [-ord(c) for c in m.path]))
    retire = [_supersede(folder, m, PurePosixPath(keeper.path).name) for m in members if m is not keeper]
    return Cluster([m.path for m in members], keeper=keeper.path, changes=[_shown(c) for c in retire], retire=retire)


def _supersede(folder: MemoryDir, memory: Memory, successor: str) -> FieldChange:
    original = (folder.root / memory.path).read_bytes().decode("utf-8")
    fields = {"status": "superseded", "superseded_by": successor, "updated": folder.today}
    return FieldChange(memory.path, fields, before=original, decision="superseded")


def _shown(change: FieldChange) -> FileChange:
    """What a member's file becomes, for the plan's diff."""
    assert change.before is not None
    try:
        return FileChange(change.path, change.before, set_fields(change.before, dict(change.fields)))
    except FrontmatterError as exc:
        raise InvalidMemory(f"{change.path}: {exc}") from None


# --- merging through a model ----------------------------------------------------------------------

_LLM_SYSTEM = (
    "You merge near-duplicate memories of an AI assistant into one memory. You get the memories as "
    "markdown files. Call write_merged_memory once with a short kebab-case name, a one-line description "
    f"(at most {DESCRIPTION_MAX} characters, specific enough to decide relevance from it alone) and a "
    "body. Keep every fact, reason and instruction any of them gives; say each once. Copy every number, "
    "date, time, weekday and identifier exactly as written, and add none. For a rule or a decision, end "
    "the body with a '**Why:**' line and a '**How to apply:**' line. Write in the memories' language."
)


def _default_client() -> Any:
    try:
        return llm.make_client("`consolidate --llm`")
    except llm.NoApiKey as exc:
        raise ConsolidateError(str(exc)) from None


def _merge_with_model(
    folder: MemoryDir, members: Sequence[Memory], client: Any, model: str, taken: set[str]
) -> Cluster:
    from memdir.core.templates import render_memory

    paths = [m.path for m in members]
    answer = _ask_model(client, model, [(m.path, (folder.root / m.path).read_text(encoding="utf-8")) for m in members])
    name, description = (" ".join(str(answer.get(key, "")).split()) for key in ("name", "description"))
    body = str(answer.get("body", "")).strip()
    if not name or not description or not body:
        return Cluster(paths, refused="not merged: the model left the name, description or body empty")
    if len(description) > DESCRIPTION_MAX:
        return Cluster(paths, refused=f"not merged: the model's description is over {DESCRIPTION_MAX} characters")
    expected, got = fact_values(members[0]), fact_values(f"{description}\n{body}")
    if got != expected:
        lost, added = sorted(expected - got), sorted(got - expected)
        what = "; ".join(
            part
            for part in (f"drops {', '.join(lost)}" if lost else "", f"adds {', '.join(added)}" if added else "")
            if part
        )
        return Cluster(paths, refused=f"not merged: the model's text changes the numbers or dates ({what})")
    base, n = name, 1
    memory_type = members[0].type
    assert memory_type is not None  # only typed memories are clustered
    new = NewMemory(memory_type, name, description, body=body, created=folder.today)
    while name_key(new.name) in taken or (folder.root / new.file_name).exists():
        n += 1
        new.name = f"{base}-{n}"
    try:
        new.validate()
    except InvalidMemory as exc:
        return Cluster(paths, refused=f"not merged: {exc}")
    taken.add(name_key(new.name))
    importance = [m.fields["importance"] for m in members if isinstance(m.fields.get("importance"), int | float)]
    new.importance = max(m.importance for m in members) if importance else None
    new.extra = {"supersedes": [PurePosixPath(p).name for p in paths]}
    # The model's text goes through the write path's screen like any other: secrets out, and a
    # merge it would quarantine or refuse is not made (it repeats its members by design: kept).
    verdict = screen([Candidate(new, "agent")], folder.scan().memories, folder.today, rejected=remembered(folder.root))[
        0
    ]
    if verdict.action is Action.SKIP:
        verdict.keep()
    if verdict.action is not Action.STORE:
        return Cluster(paths, refused=f"not merged: the write path would {verdict.action.value} the model's text "
                                      f"({'; '.join(verdict.reasons)})")  # fmt: skip
    prepare(verdict)
    retire = [_supersede(folder, m, new.file_name) for m in members]
    changes = [FileChange(new.file_name, None, render_memory(new)), *(_shown(c) for c in retire)]
    return Cluster(paths, merged=new.file_name, changes=changes, verdict=verdict, retire=retire)


def _ask_model(client: Any, model: str, files: Sequence[tuple[str, str]]) -> dict[str, Any]:
    tool = {
        "name": MERGE_TOOL,
        "description": "Write the one memory that replaces the near-duplicates.",
        "input_schema": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "Short kebab-case name."},
                "description": {"type": "string", "maxLength": DESCRIPTION_MAX, "description": "The index line."},
                "body": {"type": "string", "description": "The merged memory text (markdown)."},
            },
            "required": ["name", "description", "body"],
        },
    }
    shown = "\n\n".join(f"<memory file={path!r}>\n{text}\n</memory>" for path, text in files)
    content = f"Merge these memories:\n\n{shown}"
    try:
        return llm.forced_tool_call(
            client, model=model, max_tokens=2048, system=_LLM_SYSTEM, content=content, tool=tool
        )
    except llm.LlmError as exc:
        raise ConsolidateError(f"{exc}; nothing merged") from None


# --- applying -------------------------------------------------------------------------------------


def apply_consolidation(folder: MemoryDir, plan: ConsolidationPlan) -> IndexWrite | None:
    """Write a plan under the folder lock and re-index once; log each supersession.

    Every file is checked against the text the plan was made from before anything is written, so a
    memory edited since planning raises MemoryChanged and nothing changes. The caller holds
    `consolidate_lock` from planning to here (`consolidate` does).
    """
    if not plan.changes:
        return None
    verdicts = [cluster.verdict for cluster in plan.proposed if cluster.verdict is not None]
    retire = [change for cluster in plan.proposed for change in cluster.retire]
    # All or nothing, through the one commit step: each member must still be what was planned from.
    _, write = folder.commit(
        verdicts, fields=retire, command="consolidate", logged={"model": plan.model} if plan.model else {}
    )
    return write


def consolidate(
    folder: MemoryDir,
    *,
    apply: bool = False,
    llm: bool = False,
    client: Any = None,
    model: str | None = None,
    confirm: Callable[[ConsolidationPlan], bool] | None = None,
) -> ConsolidationResult:
    """Plan, and with `apply` write, a consolidation, holding `consolidate_lock` throughout.

    `confirm` sees the plan before anything is written; when it returns False nothing is.
    Raises ConsolidateBusy when another run is under way.
    """
    if not apply:
        return ConsolidationResult(plan_consolidate(folder, llm=llm, client=client, model=model), applied=False)
    with consolidate_lock(folder.root):
        plan = plan_consolidate(folder, llm=llm, client=client, model=model)
        if not plan.changes or (confirm is not None and not confirm(plan)):
            return ConsolidationResult(plan, applied=False)
        return ConsolidationResult(plan, applied=True, index=apply_consolidation(folder, plan))

"""Figures about one memory folder: what it holds, how full the index is, how old the memories are,
what expires soon, how recall has been doing, and how much prune has cleaned up. Nothing here prints.

`folder_stats(...).to_json()` is the documented, stable shape of `memdir stats --format json`
(docs/lifecycle.md). Rates are None when there is nothing to divide by.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memdir.core.age import AgeSource
from memdir.core.errors import IndexRefused
from memdir.core.model import MemoryType, Status
from memdir.core.store import archive_dir, iter_generations, scan_folder, state_dir

if TYPE_CHECKING:
    from memdir.folder import MemoryDir

__all__ = ["AGE_BUCKETS", "EXPIRING_DAYS", "FolderStats", "folder_stats"]

EXPIRING_DAYS = 14
"""`expiring_soon` lists active memories whose `expires` falls within this many days from today."""

AGE_BUCKETS: tuple[tuple[str, int | None], ...] = (
    ("0-7d", 7),
    ("8-30d", 30),
    ("31-90d", 90),
    ("91-365d", 365),
    (">365d", None),
)
"""Age in days since a memory last changed, upper bounds inclusive: its age as everywhere in memdir
(memdir.core.age: `updated`, else `created`, else its file's modification time, else its last commit)."""


@dataclass(frozen=True)
class IndexFigures:
    entries: int
    lines: int
    bytes: int
    max_lines: int
    max_bytes: int
    left_out: int
    refused: str | None  # why MEMORY.md could not be planned or written, if it cannot

    def to_json(self) -> dict[str, Any]:
        return {
            "entries": self.entries,
            "lines": self.lines,
            "max_lines": self.max_lines,
            "line_headroom": self.max_lines - self.lines,
            "bytes": self.bytes,
            "max_bytes": self.max_bytes,
            "byte_headroom": self.max_bytes - self.bytes,
            "left_out": self.left_out,
            "refused": self.refused,
        }


@dataclass(frozen=True)
class RecallFigures:
    recalls: int
    returned: int  # memories returned, over all recalls
    empty: int  # recalls that returned nothing
    distinct_recalled: int  # different memories ever returned

    @property
    def hit_rate(self) -> float | None:
        """The share of recalls that returned at least one memory."""
        return None if not self.recalls else (self.recalls - self.empty) / self.recalls

    @property
    def empty_rate(self) -> float | None:
        return None if not self.recalls else self.empty / self.recalls

    @property
    def average_returned(self) -> float | None:
        return None if not self.recalls else self.returned / self.recalls

    def to_json(self) -> dict[str, Any]:
        def rounded(value: float | None) -> float | None:
            return None if value is None else round(value, 4)

        return {
            "recalls": self.recalls,
            "hit_rate": rounded(self.hit_rate),
            "average_returned": rounded(self.average_returned),
            "empty_rate": rounded(self.empty_rate),
            "distinct_recalled": self.distinct_recalled,
        }


@dataclass(frozen=True)
class Expiring:
    path: str
    expires: dt.date
    days_left: int


@dataclass(frozen=True)
class FolderStats:
    folder: str
    today: dt.date
    memories: int
    unreadable: list[tuple[str, str]]  # (path, why) of files that failed to load as memories (a plain
    # note without frontmatter is not one of them)
    by_type: dict[str, int]
    by_status: dict[str, int]
    archived: int  # memory files in .archive/
    index: IndexFigures
    ages: dict[str, int]
    age_sources: dict[str, int]  # what each memory's age rests on: frontmatter | mtime | git | none
    expiring_within_days: int
    expiring: list[Expiring]
    recall: RecallFigures
    cleanup: dict[str, int]  # prune's logged moves by reason: expired, superseded
    notes: list[str] = field(default_factory=list)  # what could not be read (a log, the archive)

    def to_json(self) -> dict[str, Any]:
        return {
            "folder": self.folder,
            "today": self.today.isoformat(),
            "memories": self.memories,
            "unreadable": len(self.unreadable),
            "unreadable_files": [{"path": path, "why": why} for path, why in self.unreadable],
            "by_type": self.by_type,
            "by_status": self.by_status,
            "archived": self.archived,
            "index": self.index.to_json(),
            "age_days": self.ages,
            "age_sources": self.age_sources,
            "expiring_soon": {
                "within_days": self.expiring_within_days,
                "memories": [
                    {"path": e.path, "expires": e.expires.isoformat(), "days_left": e.days_left} for e in self.expiring
                ],
            },
            "recall": self.recall.to_json(),
            "cleanup": {"expired_archived": self.cleanup["expired"], "superseded_archived": self.cleanup["superseded"]},
            "notes": self.notes,
        }


def folder_stats(folder: MemoryDir, expiring_days: int = EXPIRING_DAYS) -> FolderStats:
    """Count what `folder` holds and read its logs. Reads only (the parse cache aside)."""
    scan = folder.scan()
    today = folder.today
    notes: list[str] = []
    by_type: Counter[str] = Counter({t.value: 0 for t in MemoryType})
    by_status: Counter[str] = Counter({s.value: 0 for s in Status} | {"expired": 0})
    ages: Counter[str] = Counter({label: 0 for label, _ in AGE_BUCKETS} | {"undated": 0})
    sources: Counter[str] = Counter({source.value: 0 for source in AgeSource})
    expiring: list[Expiring] = []
    for memory in scan.memories:
        by_type[memory.type.value if memory.type else "invalid"] += 1
        status = memory.status
        if memory.superseded and status == Status.ACTIVE:
            status = Status.SUPERSEDED.value
        elif status == Status.ACTIVE and memory.expires is not None and memory.expires <= today:
            status = "expired"
        by_status[status] += 1
        age = scan.ages.of(memory)
        ages[_age_bucket(age.day, today)] += 1
        sources[age.source.value] += 1
        if status == Status.ACTIVE and memory.expires is not None and (memory.expires - today).days <= expiring_days:
            expiring.append(Expiring(memory.path, memory.expires, (memory.expires - today).days))
    expiring.sort(key=lambda e: (e.expires, e.path))
    return FolderStats(
        folder=str(folder.root),
        today=today,
        memories=len(scan.memories),
        unreadable=[(p.path, p.message) for p in scan.problems if p.unreadable],
        by_type=dict(by_type),
        by_status=dict(by_status),
        archived=_archived_count(folder, notes),
        index=_index_figures(folder, scan),
        ages=dict(ages),
        age_sources=dict(sources),
        expiring_within_days=expiring_days,
        expiring=expiring,
        recall=_recall_figures(folder, notes),
        cleanup=_cleanup(folder, notes),
        notes=notes,
    )


def _age_bucket(day: dt.date | None, today: dt.date) -> str:
    if day is None:
        return "undated"
    age = max((today - day).days, 0)
    for label, upper in AGE_BUCKETS:
        if upper is None or age <= upper:
            return label
    raise AssertionError("the last bucket has no upper bound")


def _index_figures(folder: MemoryDir, scan: Any) -> IndexFigures:
    caps = folder.caps
    try:
        planned = folder.plan_index(scan=scan)
    except IndexRefused as exc:
        return IndexFigures(0, 0, 0, caps.max_lines, caps.max_bytes, 0, str(exc))
    return IndexFigures(
        len(planned.entries),
        planned.lines,
        planned.bytes,
        caps.max_lines,
        caps.max_bytes,
        len(planned.left_out),
        planned.refused,
    )


def _archived_count(folder: MemoryDir, notes: list[str]) -> int:
    root = archive_dir(folder.root)  # StateRefused for a symlink: not counted through it
    if not root.is_dir():
        return 0
    try:
        return len(scan_folder(root).memories)
    except OSError as exc:
        notes.append(f"{root} could not be read: {exc.strerror or exc}")
        return 0


def _recall_figures(folder: MemoryDir, notes: list[str]) -> RecallFigures:
    from memdir.read.recall_log import LOG_FILE  # the recall module is large; only stats and recall need it

    recalls = returned = empty = 0
    recalled: set[str] = set()
    try:  # streamed: a log that escaped rotation can be hundreds of megabytes
        for entry in iter_generations(state_dir(folder.root) / LOG_FILE):
            chosen = entry.get("chosen")
            if not isinstance(chosen, list):
                continue  # a foreign line
            recalls += 1
            returned += len(chosen)
            empty += not chosen
            recalled.update(c for c in chosen if isinstance(c, str))
    except OSError as exc:
        notes.append(f"the recall log could not be read: {exc.strerror or exc}")
        return RecallFigures(0, 0, 0, 0)
    return RecallFigures(recalls, returned, empty, len(recalled))


def _cleanup(folder: MemoryDir, notes: list[str]) -> dict[str, int]:
    from memdir.core.store import decision_log_path

    counts = {"expired": 0, "superseded": 0}
    try:
        for entry in iter_generations(decision_log_path(folder.root)):
            reason = entry.get("reason")
            if entry.get("command") == "prune" and entry.get("decision") == "archived" and reason in counts:
                counts[reason] += 1
    except OSError as exc:
        notes.append(f"the decision log could not be read: {exc.strerror or exc}")
        return {"expired": 0, "superseded": 0}
    return counts

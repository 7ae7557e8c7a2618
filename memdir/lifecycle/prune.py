"""A memory's life after it is written: a TTL that becomes an `expires` date, pruning expired and
superseded memories into `.archive/`, and the history of one memory. Nothing here prints.

Pruning never deletes: each file is written into `.archive/` (with `archived` and `archived_reason`
added to its frontmatter) and its move logged to `.memdir/log.jsonl` (where `memdir history` and
`memdir stats` read it back) before it leaves the folder. A prune killed in between is finished by
the next one, with the same file and the same log line. Consolidation lives in memdir/lifecycle/consolidate.py.

Over 500 lines: prune and history share one log format and the rules for finishing a move a killed
prune began.
"""

from __future__ import annotations

import calendar
import datetime as dt
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Literal, cast

from memdir.core.age import NO_AGE, Age, AgeSource
from memdir.core.errors import MemdirError, MemoryChanged, MemoryNotFound, os_error_text
from memdir.core.model import FrontmatterError, Memory, Status, name_key, parse_document, set_fields
from memdir.core.store import (
    ARCHIVE_DIR,
    FileProblem,
    Scan,
    archive_dir,
    archive_folder_for,
    atomic_write,
    folder_lock,
    read_text_if_exists,
    scan_folder,
)

if TYPE_CHECKING:
    from memdir.folder import IndexWrite, MemoryDir

__all__ = [
    "History",
    "HistoryEvent",
    "InvalidTtl",
    "PruneItem",
    "PruneKept",
    "PruneResult",
    "expires_after",
    "history",
    "parse_ttl",
    "plan_prune",
    "prune",
]


class InvalidTtl(MemdirError):
    """A time-to-live that is not a whole number followed by d, w, m or y."""


# --- TTL -----------------------------------------------------------------------------------------

_TTL = re.compile(r"\s*(\d{1,6})\s*([a-z]+)\s*", re.IGNORECASE)
_TTL_UNITS = {
    "d": "d", "day": "d", "days": "d",
    "w": "w", "wk": "w", "week": "w", "weeks": "w",
    "m": "m", "mo": "m", "month": "m", "months": "m",
    "y": "y", "yr": "y", "year": "y", "years": "y",
}  # fmt: skip
_TTL_MAX_YEARS = 100  # past that, a TTL is a typo, and a date soon runs past year 9999


@dataclass(frozen=True)
class Ttl:
    """A parsed time-to-live: `count` days, weeks, months or years."""

    count: int
    unit: Literal["d", "w", "m", "y"]

    def after(self, start: dt.date) -> dt.date:
        """The day this TTL runs out, counted from `start`. Months and years keep the day of the
        month where they can (2026-01-31 + 1m is 2026-02-28)."""
        if self.unit == "d":
            return start + dt.timedelta(days=self.count)
        if self.unit == "w":
            return start + dt.timedelta(weeks=self.count)
        months = self.count * (12 if self.unit == "y" else 1)
        year, month = divmod(start.month - 1 + months, 12)
        year += start.year
        return dt.date(year, month + 1, min(start.day, calendar.monthrange(year, month + 1)[1]))


def parse_ttl(text: str) -> Ttl:
    """`14d`, `2w`, `6m`, `1y` (or `14 days`, `2 weeks`, `6 months`, `1 year`). `m` is months.

    Raises InvalidTtl naming what was given."""
    found = _TTL.fullmatch(text)
    unit = _TTL_UNITS.get(found.group(2).lower()) if found else None
    if found is None or unit is None:
        raise InvalidTtl(
            f"--ttl must be a whole number and a unit: d (days), w (weeks), m (months) or y (years), "
            f"e.g. 14d, 2w, 6m, 1y; not {text!r}"
        )
    count = int(found.group(1))
    if count < 1:
        raise InvalidTtl(f"--ttl must be at least 1 {unit}; {text!r} would expire the memory at once")
    years = {"d": count / 365, "w": count * 7 / 365, "m": count / 12, "y": count}[unit]
    if years > _TTL_MAX_YEARS:
        raise InvalidTtl(f"--ttl {text!r} is over {_TTL_MAX_YEARS} years; leave the TTL out for a memory that lasts")
    return Ttl(count, cast(Literal["d", "w", "m", "y"], unit))


def expires_after(ttl: str, start: dt.date) -> dt.date:
    """The absolute `expires` date for `ttl` counted from `start` (the day the memory was written)."""
    parsed = parse_ttl(ttl)
    try:
        return parsed.after(start)
    except (OverflowError, ValueError):  # past 9999-12-31, the last day a date can name
        raise InvalidTtl(f"--ttl {ttl!r} from {start.isoformat()} runs past the year 9999") from None


# --- prune ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PruneItem:
    """One memory that prune moves (or, in a dry run, would move) into the archive."""

    path: str  # relative to the folder
    kind: Literal["expired", "superseded"]
    reason: str  # "expired 2026-11-01" | "superseded by feedback_x.md": written as `archived_reason`
    destination: str  # relative to the folder, under .archive/
    superseded_by: str | None = None
    # The `archived` date of the copy a killed prune already wrote at `destination`: that move is
    # finished (the original removed, its log line written unless it was), not made again.
    archived: dt.date | None = None


@dataclass(frozen=True)
class PruneKept:
    """A superseded memory prune leaves where it is, and why."""

    path: str
    why: str


@dataclass
class PruneResult:
    moved: list[PruneItem]
    kept: list[PruneKept]
    dry_run: bool
    index: IndexWrite | None = None  # the one re-index after the moves (None in a dry run, or nothing to drop)
    problems: list[FileProblem] = field(default_factory=list)  # files that failed to load as memories
    error: str | None = None  # why prune stopped before moving everything it planned (`moved` did move)


def plan_prune(folder: MemoryDir, scan: Scan | None = None) -> tuple[list[PruneItem], list[PruneKept]]:
    """What `prune` would move, and the superseded memories it would keep.

    A superseded memory is archived only when the memory that replaces it (its `superseded_by`) is
    in the folder: archiving it otherwise could retire the only copy of a fact. Quarantined memories
    are left to `memdir review`.
    """
    scan = scan or folder.scan()
    by_ref: dict[str, Memory] = {}
    for memory in scan.memories:  # a successor is named by its path or its file name
        by_ref.setdefault(memory.path, memory)
        by_ref.setdefault(PurePosixPath(memory.path).name, memory)
    taken: set[Path] = set()
    moved: list[PruneItem] = []
    kept: list[PruneKept] = []
    for memory in scan.memories:
        successor = _text(memory.fields.get("superseded_by"))
        kind: Literal["expired", "superseded"]
        if memory.status == Status.SUPERSEDED or successor:
            if not successor:
                kept.append(PruneKept(memory.path, "status: superseded, but no superseded_by names its successor"))
                continue
            if (why := _chain_problem(memory, by_ref)) is not None:
                kept.append(PruneKept(memory.path, why))
                continue
            kind, reason = "superseded", f"superseded by {successor}"
        elif memory.expires is not None and memory.expires <= folder.today and memory.status == Status.ACTIVE:
            kind, reason = "expired", f"expired {memory.expires.isoformat()}"
        else:
            continue
        destination, archived = _destination(folder, memory, reason, taken)
        taken.add(destination)
        moved.append(
            PruneItem(
                memory.path,
                kind,
                reason,
                destination.relative_to(folder.root).as_posix(),
                successor if kind == "superseded" else None,
                archived,
            )
        )
    return moved, kept


def _chain_problem(memory: Memory, by_ref: dict[str, Memory]) -> str | None:
    """Why `memory` must stay although it is superseded, or None: its successor must be in the folder,
    and the chain of successors must end at a memory that is not itself replaced. A chain that loops
    (a -> b -> a, or a memory superseded by itself) has no current memory at all."""
    chain, current = [memory.path], memory
    while successor := _text(current.fields.get("superseded_by")):
        following = by_ref.get(successor) or by_ref.get(successor.removeprefix("./"))
        if following is None:
            return f"its successor {successor} is not in the folder" if current is memory else (
                f"its supersede chain ends at {successor}, which is not in the folder")  # fmt: skip
        chain.append(following.path)
        if following.path in chain[:-1]:
            shown = " -> ".join(chain)
            return f"its supersede chain loops ({shown}): no memory in it is current; fix `superseded_by` by hand"
        current = following
    if current.status != Status.ACTIVE.value and not current.superseded:  # e.g. a successor not yet accepted
        return f"the end of its supersede chain, {current.path}, is {current.status}"
    return None


def prune(folder: MemoryDir, dry_run: bool = False) -> PruneResult:
    """Move expired and superseded memories into `.archive/`, record why, and re-index once.

    Under the folder lock, each memory is written into the archive with `archived: <today>` and
    `archived_reason` added to its frontmatter (every other byte as it was), its move is logged to
    `.memdir/log.jsonl`, and only then is it removed from the folder: a crash leaves at worst two
    copies, never none, and the next prune finishes that move (see `plan_prune`) and drops index
    entries of memories a prune archived. With `dry_run` nothing is written and no lock is taken. Raises StateRefused
    when `.archive/` is a symlink or not a folder.
    """
    archive_dir(folder.root)
    if dry_run:
        scan = folder.scan()
        moved, kept = plan_prune(folder, scan)
        return PruneResult(moved, kept, dry_run=True, problems=scan.problems)
    from memdir.core.store import log_decisions, read_decisions

    with folder_lock(folder.root):
        index_text = folder.read_index()  # refuse before anything moves if MEMORY.md cannot be rewritten
        scan = folder.scan()
        moved, kept = plan_prune(folder, scan)
        # Moves a killed prune may have logged already: their line is not written twice.
        logged = _logged_moves(read_decisions(folder.root)) if any(item.archived for item in moved) else set()
        done: list[PruneItem] = []
        write: IndexWrite | None = None
        error: str | None = None
        log_error: str | None = None

        def log(item: PruneItem) -> None:
            nonlocal log_error
            if log_error is not None or (item.archived is not None and (item.path, item.destination) in logged):
                return
            try:
                log_decisions(folder.root, [_log_entry(item, folder.today)])
            except OSError as exc:  # the moves go on: the index must still let go of them
                log_error = f"the moves were made but not logged: {os_error_text(exc)}"

        try:
            for item in moved:
                _archive(folder, item, log)
                done.append(item)
        except MemoryChanged as exc:
            error = str(exc)
        except OSError as exc:  # a read-only archive, a full disk: the moves so far stand
            error = f"cannot archive {item.path}: {os_error_text(exc)}"
        finally:  # what moved before a failure leaves the index all the same
            error = error or log_error
            # (remove() does the same: the lock is held, so the locked variant it is)
            drop = [item.path for item in done] + _archived_by_a_killed_prune(folder, index_text, read_decisions)
            if drop:
                write = folder._write_index_locked(drop=drop)
    return PruneResult(done, kept, dry_run=False, index=write, problems=scan.problems, error=error)


def _archive(folder: MemoryDir, item: PruneItem, log: Callable[[PruneItem], None] = lambda item: None) -> None:
    """Move one memory into the archive: write the copy (unless a killed prune did), `log` the move,
    remove the original."""
    source = folder.root / item.path
    original = read_text_if_exists(source)
    if original is None:
        raise MemoryChanged(f"{item.path} disappeared while memdir was pruning; run prune again")
    if item.archived is None:
        try:
            text = set_fields(original, {"archived": folder.today, "archived_reason": item.reason})
        except FrontmatterError:  # it parsed a moment ago; if it no longer does, keep it byte for byte
            text = original
        destination = archive_folder_for(folder.root, item.path) / PurePosixPath(item.destination).name
        atomic_write(destination, text, exclusive=True, follow_symlinks=False)  # a link there is not followed
        if read_text_if_exists(source) != original:  # edited meanwhile by something that ignores the lock
            destination.unlink()
            raise MemoryChanged(f"{item.path} changed while memdir was pruning it; left in place, run prune again")
    log(item)
    source.unlink()


def _destination(folder: MemoryDir, memory: Memory, reason: str, taken: set[Path]) -> tuple[Path, dt.date | None]:
    """Where `memory` goes in the archive: its own path there, or with -2, -3 ... before the suffix
    when that is taken. A file there that is the copy prune writes of this very memory is the first
    half of a move a killed prune did not finish: that path, and the copy's `archived` date."""
    base = folder.root / ARCHIVE_DIR / memory.path
    candidate, n = base, 1
    while os.path.lexists(candidate) or candidate in taken:  # a link there is taken, never followed
        if candidate not in taken:
            archived = _copy_written_by_prune(candidate, memory.doc.text, reason, folder.today)
            if archived is not None:
                return candidate, archived
        n += 1
        candidate = base.with_name(f"{base.stem}-{n}{base.suffix}")
    return candidate, None


def _copy_written_by_prune(copy: Path, original: str, reason: str, today: dt.date) -> dt.date | None:
    """The `archived` date of `copy` when it is byte for byte what `_archive` writes for `original`
    with `reason` (on that date), else None."""
    try:
        text = read_text_if_exists(copy)
        if text is None or not copy.is_file():
            return None
        if text == original:  # what _archive writes when the frontmatter cannot be set
            return today
        data = parse_document(text).data
    except (OSError, UnicodeDecodeError, FrontmatterError):
        return None
    archived = data.get("archived")
    if type(archived) is not dt.date or data.get("archived_reason") != reason:
        return None
    try:
        expected = set_fields(original, {"archived": archived, "archived_reason": reason})
    except FrontmatterError:
        return None
    return archived if expected == text else None


def _logged_moves(log: list[dict[str, Any]]) -> set[tuple[str, str]]:
    """(file, to) of every move into the archive that prune logged."""
    return {
        (entry["file"], entry["to"])
        for entry in log
        if entry.get("command") == "prune" and isinstance(entry.get("file"), str) and isinstance(entry.get("to"), str)
    }


def _archived_by_a_killed_prune(
    folder: MemoryDir, index_text: str | None, read_log: Callable[[Path], list[dict[str, Any]]]
) -> list[str]:
    """Index entries linking to memories a prune archived but killed before it re-indexed."""
    missing = folder._missing_targets(index_text or "")
    if not missing:
        return []
    try:
        log = read_log(folder.root)
    except OSError:  # an unreadable log: the entries stay, as they would without it
        return []
    archived = {file for file, to in _logged_moves(log) if (folder.root / to).exists()}
    return [path for path in missing if path in archived]


def _log_entry(item: PruneItem, today: dt.date) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "command": "prune",
        "decision": "archived",
        "file": item.path,
        "to": item.destination,
        "reason": item.kind,
        "detail": item.reason,
        "archived": (item.archived or today).isoformat(),
    }
    if item.superseded_by:
        entry["superseded_by"] = item.superseded_by
    return entry


def _text(value: Any) -> str:
    return " ".join(str(value).split()) if value is not None and value != "" else ""


def _names(value: Any) -> list[str]:
    """A frontmatter field holding one file name or a list of them (`supersedes`)."""
    values = value if isinstance(value, list) else [value]
    return [_text(v) for v in values if _text(v)]


# --- history -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HistoryEvent:
    when: str  # an ISO date or date-time; "" when the record has none
    what: str  # created | updated | changed | supersedes | superseded | archived | expires | a logged decision
    detail: str
    source: str  # frontmatter | mtime | git | archive | chain | log


@dataclass(frozen=True)
class History:
    query: str
    path: str | None  # where the memory is now, relative to the folder (under .archive/ when archived)
    name: str
    state: str  # active | superseded | expired | quarantined | archived | not stored
    superseded_by: list[str]  # the chain of successors, nearest first
    supersedes: list[str]  # the memories this one replaced
    events: list[HistoryEvent]


_LOG_FILE_KEYS = ("file", "to", "path", "supersedes", "superseded_by", "duplicate_of", "keeper", "merged_into",
                  "supersedes_on_accept")  # fmt: skip


def history(folder: MemoryDir, query: str) -> History:
    """What happened to one memory: its frontmatter dates, the supersede chain both ways, the
    decision log (`.memdir/log.jsonl`, read tolerantly) and the archive.

    `query` is anything `MemoryDir.find` accepts; archived memories and names that only the log
    knows (a candidate that was skipped) are found too. Raises MemoryNotFound when nothing matches
    or the name is ambiguous in the folder.
    """
    from memdir.core.store import read_decisions

    memory, where = _locate(folder, query)
    log = read_decisions(folder.root)
    if memory is None:
        wanted = {query.strip(), PurePosixPath(query.strip()).name}
        logged = [e for e in log if _log_mentions(e, wanted, name_key(query))]
        if not logged:
            raise MemoryNotFound(
                f"no memory matches {query!r} in {folder.root}, its archive or its log; `memdir list` shows them"
            )
        return History(query, None, query.strip(), "not stored", [], [], _sorted(_log_event(e, wanted) for e in logged))

    live, archive = folder.scan(), archive_scan(folder)
    everyone = {**{m.path: m for m in live.memories}, **{f"{ARCHIVE_DIR}/{m.path}": m for m in archive.memories}}

    def age(path: str) -> Age:  # a memory's age (memdir.core.age), in the folder or in the archive
        scan = archive if path.startswith(ARCHIVE_DIR + "/") else live
        found = everyone.get(path)
        return scan.ages.of(found) if found is not None else NO_AGE

    by_file: dict[str, str] = {}
    for path in everyone:  # a file name points at the live copy before an archived one
        by_file.setdefault(PurePosixPath(path).name, path)
    me = where if where.startswith(ARCHIVE_DIR + "/") else memory.path
    file_name = PurePosixPath(memory.path).name
    events: list[HistoryEvent] = []
    for key, what in (("created", "created"), ("updated", "updated")):
        day = memory.date(key)
        if day is not None and not (what == "updated" and day == memory.date("created")):
            events.append(HistoryEvent(day.isoformat(), what, f"`{key}` in the frontmatter", "frontmatter"))
    own_age = age(me)
    if own_age.day is not None and own_age.source is not AgeSource.FRONTMATTER:  # Claude Code writes no dates
        events.append(HistoryEvent(own_age.day.isoformat(), "changed", f"last changed: {own_age.describe()}",
                                   own_age.source.value))  # fmt: skip
    if memory.expires is not None:
        verb = "expired" if memory.expires <= folder.today else "expires"
        events.append(HistoryEvent(memory.expires.isoformat(), verb, f"`expires: {memory.expires}`", "frontmatter"))

    successors = _chain(memory, everyone, by_file)
    replaced = {
        PurePosixPath(path).name
        for path, other in everyone.items()
        if path != me and PurePosixPath(_text(other.fields.get("superseded_by"))).name == file_name
    }
    predecessors = sorted(replaced | {PurePosixPath(n).name for n in _names(memory.fields.get("supersedes"))})
    if successors:
        when = memory.date("updated")
        events.append(
            HistoryEvent(when.isoformat() if when else "", "superseded", f"superseded by {successors[0]}", "chain")
        )
    for old in predecessors:
        replaced_day = age(by_file.get(old, "")).day
        events.append(HistoryEvent(replaced_day.isoformat() if replaced_day else "", "supersedes", f"replaces {old}",
                                   "chain"))  # fmt: skip
    archived = memory.date("archived")
    if archived is not None or me.startswith(ARCHIVE_DIR + "/"):
        why = _text(memory.fields.get("archived_reason")) or "moved into the archive"
        events.append(
            HistoryEvent(archived.isoformat() if archived else "", "archived", f"{why}; now at {me}", "archive")
        )

    in_archive = {path for path in everyone if path.startswith(ARCHIVE_DIR + "/")}
    origin, own_log = _own_log(log, me, memory.path, in_archive)
    wanted = {origin, PurePosixPath(origin).name, me}
    key = name_key(memory.name or memory.stem)
    events += [_log_event(e, wanted) for e in own_log if _log_mentions(e, wanted, key)]
    return History(query, me, memory.title, _state(memory, me, folder.today), successors, predecessors, _sorted(events))


def _own_log(log: list[dict[str, Any]], me: str, path: str, in_archive: set[str]) -> tuple[str, list[dict[str, Any]]]:
    """Where the memory now at `me` was stored (`path` unless the log says otherwise), and the part
    of the log that can be about it.

    A file name can be reused: prune or rm archives `x.md` as `.archive/x.md`, and a later memory
    stored as `x.md` goes to `.archive/x-2.md`. Each such move is logged (`file` -> `to`), and a move
    whose file is still in the archive (`in_archive`) ended one memory's time at that path; one whose
    file is gone (restored by hand, or deleted) ended nothing. So the lines after the last such move
    of the path, up to the move that took this memory to `me` (inclusive; the log's end for a memory
    in the folder), are this memory's.
    """
    own = max((i for i, entry in enumerate(log) if me in _log_values(entry, "to")), default=None)
    origin = next(iter(_log_values(log[own], "file")), path) if own is not None else path
    end = len(log) if own is None else own

    def ended_a_memory(entry: dict[str, Any]) -> bool:
        return origin in _log_values(entry, "file") and any(to in in_archive for to in _log_values(entry, "to"))

    earlier = [i for i in range(end) if ended_a_memory(log[i])]
    return origin, log[earlier[-1] + 1 if earlier else 0 : end + 1]


def archive_scan(folder: MemoryDir) -> Scan:
    """The memories in the folder's .archive/ (none when it is absent)."""
    root = archive_dir(folder.root)
    return scan_folder(root) if root.is_dir() else Scan(root=root)


def _locate(folder: MemoryDir, query: str) -> tuple[Memory | None, str]:
    """The memory `query` names in the folder, else in the archive: (memory, path from the folder).
    A query under `.archive/` is looked up in the archive only."""
    from memdir.folder import MemoryDir

    in_archive = f"{ARCHIVE_DIR}/"
    wanted = query.strip().removeprefix("./")
    if not wanted.startswith(in_archive):  # `.archive/x.md` (the form history reports) names the archive only
        try:
            found = folder.get(query)
            return found, found.path
        except MemoryNotFound as exc:
            if not str(exc).startswith("no memory matches"):
                raise  # ambiguous in the folder: the archive must not pick one silently
    archive_root = archive_dir(folder.root)
    if not archive_root.is_dir():
        return None, ""
    archived = MemoryDir(archive_root, config=folder.config, today=folder.today, cache=False)
    try:
        found = archived.get(wanted.removeprefix(in_archive))
    except MemoryNotFound as exc:
        if not str(exc).startswith("no memory matches"):
            raise MemoryNotFound(f"{exc} in the archive") from None
        return None, ""
    return found, f"{ARCHIVE_DIR}/{found.path}"


def _chain(memory: Memory, everyone: dict[str, Memory], by_file: dict[str, str]) -> list[str]:
    """The successors of `memory`, following `superseded_by` until it ends (or loops)."""
    chain: list[str] = []
    current: Memory | None = memory
    while current is not None:
        successor = _text(current.fields.get("superseded_by"))
        if not successor or PurePosixPath(successor).name in chain or successor == PurePosixPath(memory.path).name:
            break
        chain.append(PurePosixPath(successor).name)
        current = everyone.get(by_file.get(PurePosixPath(successor).name, ""))
    return chain


def _state(memory: Memory, where: str, today: dt.date) -> str:
    if where.startswith(ARCHIVE_DIR + "/"):
        return "archived"
    if memory.superseded or memory.status == Status.SUPERSEDED:
        return "superseded"
    if memory.status != Status.ACTIVE:
        return memory.status
    if memory.expires is not None and memory.expires <= today:
        return "expired"
    return "active"


def _log_values(entry: dict[str, Any], key: str) -> list[str]:
    value = entry.get(key)
    values = value if isinstance(value, list) else [value]
    return [v.strip() for v in values if isinstance(v, str) and v.strip()]


def _log_mentions(entry: dict[str, Any], files: set[str], key: str) -> bool:
    for field_name in _LOG_FILE_KEYS:
        for value in _log_values(entry, field_name):
            if value in files or PurePosixPath(value).name in files:
                return True
    name = entry.get("name")
    return isinstance(name, str) and bool(key) and name_key(name) == key


def _log_event(entry: dict[str, Any], files: set[str]) -> HistoryEvent:
    """One decision-log line as an event, whatever fields it has (the log is written by several
    commands, and by versions of memdir that may have written other fields)."""
    when = entry.get("at") or entry.get("time") or ""
    decision = entry.get("decision")
    what = decision if isinstance(decision, str) and decision else "logged"
    parts: list[str] = []
    subject = next(iter(_log_values(entry, "file")), "")
    if subject and subject not in files and PurePosixPath(subject).name not in files:
        parts.append(f"{subject}:")  # a decision about another memory that names this one
    command = entry.get("command")
    if isinstance(command, str) and command:
        parts.append(f"by `memdir {command}`")
    for field_name, label in (("superseded_by", "superseded by"), ("supersedes", "supersedes"),
                              ("duplicate_of", "duplicate of"), ("to", "to")):  # fmt: skip
        values = [v for v in _log_values(entry, field_name) if PurePosixPath(v).name not in files or field_name == "to"]
        if values:
            parts.append(f"{label} {', '.join(values)}")
    note = entry.get("detail")
    if isinstance(note, str) and note and not any(note in part for part in parts):
        parts.append(note)
    reasons = entry.get("reasons")
    if isinstance(reasons, list) and reasons:
        parts.append("; ".join(str(r) for r in reasons[:3]))
    detail = "; ".join(parts).replace(":; ", ": ", 1)
    return HistoryEvent(str(when), what, detail, "log")


def _sorted(events: Iterable[HistoryEvent]) -> list[HistoryEvent]:
    """Oldest first; events with no date last. A date sorts before the logged times of that day."""
    return sorted(events, key=lambda e: (e.when == "", e.when))


def describe(events: Sequence[HistoryEvent]) -> list[str]:
    """The events as lines of text, for people."""
    return [f"{e.when or '?':<25}  {e.what:<12} {e.detail}" for e in events]

"""`memdir import`: memories brought over from another folder, or notes kept by hand, through the write path.

A source folder (Claude Code's auto-memory folder, another repository's) is read as memdir reads any
folder, and each memory in it goes through the screen `add` uses (memdir.core.gauntlet: secrets,
provenance, near-duplicates, rejections), all in one batch so that two files saying one thing land
once; what passes is written all at once or not at all, with one re-index (`MemoryDir.commit`),
and every decision is logged. A memory keeps what it is: its file (its path in the folder), name,
type, description, body and every other field byte for byte, and its age: one that states no date
of its own gets `updated:` set to its file's modification date, since a copy, a commit and a clone
all reset that time.

The source's MEMORY.md is not read: the folder's index is rebuilt from the memory files. A memory
already here (same name, type, description and body) is skipped, so a second import adds nothing; a
same-name memory that says something else is refused, or replaces the one here with `supersede`.
With `move`, what was brought over (and what was already here word for word) leaves the source by
the source's own `remove`: into its `.archive/`, its MEMORY.md re-indexed with every other entry's
wording kept. Nothing else in the source changes, with or without `move`.

Notes kept by hand (a legacy MEMORY.md of bullets, a CLAUDE.md, a section of one) become memories
through the extraction machinery (`memdir.write.extract`, a request of kind `document`); `read_notes`
is what it sends.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path, PurePosixPath
from typing import Any

from memdir.core.config import Config, IndexSettings
from memdir.core.errors import MemdirError
from memdir.core.gauntlet import (
    SOURCES,
    Action,
    Candidate,
    Verdict,
    new_memory_of,
    prepare,
    screen,
    screened_text,
    verdict_entry,
)
from memdir.core.index import entry_target, split_lines
from memdir.core.inputs import InputTooLarge, NotRegularInput, read_regular
from memdir.core.model import INDEX_NAME, FrontmatterError, Memory, name_key, one_line, plural, set_fields
from memdir.core.rejections import remembered
from memdir.core.store import FileProblem, log_decisions, resolved
from memdir.folder import IndexWrite, MemoryDir
from memdir.write.transcripts import ExtractError

COMMAND = "import"
NOTES_MAX_BYTES = 16 * 1024 * 1024  # notes kept by hand are kilobytes; one request takes 120,000 characters


class ImportRefused(MemdirError):
    """The source cannot be imported from: not a folder, the folder in use, or inside it."""


class MoveIncomplete(MemdirError):
    """The memories were imported, but not all of them could leave the source."""

    exit_code = 1


class NotesError(ExtractError):
    """Notes that cannot be sent: not a readable UTF-8 file, no such section, too long, empty."""

    exit_code = 2


class Outcome(StrEnum):
    IMPORTED = "imported"
    QUARANTINED = "quarantined"  # written with `status: quarantined`, as `add` writes it
    SKIPPED = "skipped"  # already here, a duplicate by the screen's judgement, not live, not a memory
    REFUSED = "refused"  # the write path or a conflict says no: the command exits 1


@dataclass
class ImportItem:
    """One file of the source, and what the import does with it."""

    source: str  # its path in the source folder
    outcome: Outcome
    reasons: list[str]
    name: str | None = None
    type: str | None = None
    path: str | None = None  # where it is written (or would be) in the folder
    verdict: Verdict | None = None  # the screen's, for a memory that reached it
    text: str | None = None  # the file to write, before the screen's redactions and fields
    present: str | None = None  # the memory here that says the same, word for word

    @property
    def writes(self) -> bool:
        return self.outcome in (Outcome.IMPORTED, Outcome.QUARANTINED)

    @property
    def leaves_source(self) -> bool:
        """What `move` takes out of the source: what was brought over, or was here word for word."""
        return self.writes or self.present is not None


@dataclass
class ImportPlan:
    source: Path
    items: list[ImportItem] = field(default_factory=list)

    def count(self, outcome: Outcome) -> int:
        return sum(item.outcome is outcome for item in self.items)

    @property
    def refused(self) -> bool:
        return any(item.outcome is Outcome.REFUSED for item in self.items)

    def summary(self) -> str:
        parts = [f"{outcome.value} {self.count(outcome)}" for outcome in Outcome if self.count(outcome)]
        return ", ".join(parts) or "no files to import"


@dataclass
class ImportResult:
    plan: ImportPlan
    dry_run: bool
    write: IndexWrite | None = None  # the folder's re-index (None: nothing was written)
    moved: list[str] = field(default_factory=list)  # source files taken out of the source
    source_index: IndexWrite | None = None  # the source's last re-index, after `move`


# --- the source -------------------------------------------------------------------------------------


def check_source(folder: MemoryDir, source: Path) -> Path:
    """`source` as a folder memdir may import from. Raises ImportRefused naming what is wrong."""
    if not source.exists():
        raise ImportRefused(f"{source} does not exist")
    if not source.is_dir():
        raise ImportRefused(
            f"{source} is a file; `memdir import` brings over a folder of memory files, and "
            "`memdir import --llm FILE` turns notes kept by hand (a MEMORY.md of bullets, a CLAUDE.md) into memories"
        )
    here, there = resolved(folder.root), resolved(source)
    if here == there:
        raise ImportRefused(f"{source} is the memory folder in use; import from another folder")
    if there.is_relative_to(here) or here.is_relative_to(there):
        inside = "inside" if there.is_relative_to(here) else "around"
        raise ImportRefused(
            f"{source} is {inside} the memory folder in use ({folder.root}); import from another folder"
        )
    return source


def plan_import(folder: MemoryDir, source: Path, *, supersede: bool = False) -> ImportPlan:
    """What importing `source` into `folder` would do, file by file; nothing is written."""
    source = check_source(folder, source)
    # No parse cache: reading the source must leave no `.memdir/` in it.
    scan = MemoryDir(source, today=folder.today, cache=False).scan()
    plan = ImportPlan(source)
    plan.items += [_problem_item(problem) for problem in scan.problems]
    candidates: list[tuple[ImportItem, Memory]] = []
    for memory in sorted(scan.memories, key=lambda m: m.path):
        item = _unscreened_item(memory, folder.today)
        plan.items.append(item)
        if item.outcome is not Outcome.REFUSED and not item.reasons:
            candidates.append((item, memory))
    here = folder.scan()
    verdicts = screen(
        [Candidate(new_memory_of(memory), _provenance(memory)) for _, memory in candidates],
        here.memories,
        folder.today,
        rejected=remembered(folder.root),
    )
    taken = _Taken(folder.root, here.memories, folder.today)
    for (item, memory), verdict in zip(candidates, verdicts, strict=True):
        item.verdict = verdict
        _judge(item, memory, verdict, taken, supersede)
    plan.items.sort(key=lambda item: item.source)
    return plan


def _problem_item(problem: FileProblem) -> ImportItem:
    if problem.kind == "no-frontmatter":  # not a memory: notes, a README
        reason = "no frontmatter: not a memory (`memdir import --llm FILE` turns notes into memories)"
        return ImportItem(problem.path, Outcome.SKIPPED, [reason])
    return ImportItem(problem.path, Outcome.REFUSED, [problem.message])


def _unscreened_item(memory: Memory, today: dt.date) -> ImportItem:
    """The item of a memory before the screen: refused when it lacks what a memory needs, skipped
    (with a reason) when it is not live; otherwise no reason yet."""
    item = ImportItem(memory.path, Outcome.SKIPPED, [], name=memory.name or None, type=memory.raw_type)
    missing = [key for key in ("name", "description") if not getattr(memory, key)]
    if memory.type is None:
        missing.append(f"type ({memory.raw_type!r} is not one of user, feedback, project, reference)"
                       if memory.raw_type else "type")  # fmt: skip
    if missing:
        item.outcome, item.reasons = Outcome.REFUSED, [f"missing or invalid {', '.join(missing)}"]
        return item
    excluded = memory.exclusion(today)
    if excluded is not None:
        item.reasons = [f"not a live memory ({excluded}); left where it is"]
        return item
    new = new_memory_of(memory)
    try:
        new.validate()
    except MemdirError as exc:
        item.outcome, item.reasons = Outcome.REFUSED, [str(exc)]
    return item


def _provenance(memory: Memory) -> str | None:
    """The memory's own `source`, when it states one memdir knows; a file that says none is not
    assumed to be anyone's."""
    stated = one_line(memory.fields.get("source")).lower()
    return stated if stated in SOURCES else None


class _Taken:
    """The names and files of the folder, and of what this import writes before the one at hand."""

    def __init__(self, root: Path, memories: Sequence[Memory], today: dt.date) -> None:
        self.root, self.today = root, today
        self.by_name: dict[str, Memory] = {}
        for memory in memories:
            if memory.name:
                self.by_name.setdefault(name_key(memory.name), memory)
        self.paths = {memory.path.casefold() for memory in memories}
        self.batch_names: dict[str, str] = {}  # name key -> source file
        self.batch_paths: dict[str, str] = {}  # path -> source file

    def file_taken(self, path: str) -> bool:
        return path.casefold() in self.paths or path in self.batch_paths or os.path.lexists(self.root / path)

    def name_taken(self, name: str) -> bool:
        return name_key(name) in self.by_name or name_key(name) in self.batch_names

    def claim(self, item: ImportItem, name: str, path: str) -> None:
        self.batch_names[name_key(name)] = item.source
        self.batch_paths[path] = item.source


def _says(kind: str | None, name: str, description: str, body: str) -> tuple[str, str, str, str]:
    return ((kind or "").lower(), name_key(name), one_line(description), body.strip())


def _judge(item: ImportItem, memory: Memory, verdict: Verdict, taken: _Taken, supersede: bool) -> None:
    """Turn the screen's verdict, and the folder's names and files, into the item's outcome."""
    new = verdict.candidate.memory  # as the screen left it: secrets redacted
    item.path = new.file_name
    same = taken.by_name.get(name_key(new.name))
    if same is not None and _says(same.raw_type, same.name, same.description, same.body) == _says(
        memory.raw_type, new.name, new.description, new.body
    ):
        item.path, item.present = same.path, same.path
        item.reasons = [f"already here: {same.path} has the same name and text"]
        return
    if verdict.action is Action.REFUSE:
        item.outcome, item.reasons, item.path = Outcome.REFUSED, list(verdict.reasons), None
        return
    if verdict.action is Action.SKIP:
        item.reasons, item.path = list(verdict.reasons), None
        return
    if name_key(new.name) in taken.batch_names:
        item.outcome, item.path = Outcome.REFUSED, None
        item.reasons = [f"{taken.batch_names[name_key(new.name)]} of this import has the same name"]
        return
    if same is not None:
        excluded = same.exclusion(taken.today)
        if not supersede or excluded is not None:
            what = f"is {excluded}" if excluded else "says something else; --supersede replaces it"
            item.outcome, item.path = Outcome.REFUSED, None
            item.reasons = [f"a memory named {same.name!r} is already here ({same.path}) and {what}"]
            return
        verdict.supersedes = same.path
    notes = []
    if taken.file_taken(new.file_name):  # another memory's file (the replaced one's, too): take a free one
        whose = "the memory it supersedes" if verdict.supersedes else "another memory here"
        notes.append(f"{new.file_name} is the file of {whose}")
        new.path = _free_path(new.file_name, taken)
    text = memory.doc.text
    try:
        if verdict.supersedes is not None:  # the replaced memory keeps its name
            new.name = _free_name(new.name, taken)
            text = set_fields(text, {"name": new.name})
        if memory.last_changed is None:
            text = set_fields(text, {"updated": dt.date.fromtimestamp(memory.mtime)})
        prepare(verdict)
        screened_text(text, verdict)  # what `commit` will write: refused here, not halfway through
    except FrontmatterError as exc:
        item.outcome, item.path = Outcome.REFUSED, None
        item.reasons = [f"{exc} (`memdir lint --fix --select F013` in the source quotes its values)"]
        return
    item.outcome = Outcome.QUARANTINED if verdict.action is Action.QUARANTINE else Outcome.IMPORTED
    item.reasons, item.text, item.path, item.name = [*verdict.reasons, *notes], text, new.file_name, new.name
    if verdict.supersedes is not None:
        item.reasons.append(f"supersedes {verdict.supersedes}")
    taken.claim(item, new.name, new.file_name)


def _free_name(name: str, taken: _Taken) -> str:
    """The first `name-2`, `name-3` ... that no memory here or in this import has."""
    n = 2
    while taken.name_taken(f"{name}-{n}"):
        n += 1
    return f"{name}-{n}"


def _free_path(path: str, taken: _Taken) -> str:
    """The first `stem-2.md`, `stem-3.md` ... beside `path` that no file here or in this import has."""
    at = PurePosixPath(path)
    n = 2
    while taken.file_taken(str(at.with_name(f"{at.stem}-{n}{at.suffix}"))):
        n += 1
    return str(at.with_name(f"{at.stem}-{n}{at.suffix}"))


# --- writing ----------------------------------------------------------------------------------------


def apply_import(folder: MemoryDir, plan: ImportPlan, *, move: bool = False) -> ImportResult:
    """Write what `plan` brings over, all of it or none, re-index once and log every decision; then,
    with `move`, take what was brought over (or was here word for word) out of the source.

    Raises what `MemoryDir.commit` raises (nothing is written then), IndexRefused before anything
    is written when `move` is asked and the source's MEMORY.md cannot be rewritten, and MoveIncomplete
    when a memory could not leave the source after the import."""
    result = ImportResult(plan, dry_run=False)
    source = _source_folder(plan.source, folder.today) if move else None
    if source is not None:
        source.read_index()  # refuse now, not after the import, if the source's index cannot be fixed
    origin = {"from": str(plan.source)}
    unwritten = [_log_entry(item, origin) for item in plan.items if not item.writes]
    if unwritten:
        log_decisions(folder.root, unwritten)
    writes = [item for item in plan.items if item.writes]
    if writes:
        verdicts = []
        for item in writes:
            if item.verdict is not None:
                item.verdict.candidate.text = item.text
                verdicts.append(item.verdict)
        _, result.write = folder.commit(verdicts, command=COMMAND, logged=origin)
    if source is not None:
        _move_out(folder, source, plan, result)
    return result


def _source_folder(root: Path, today: dt.date) -> MemoryDir:
    """The source as `move` changes it: entries of other memories keep the wording they have."""
    return MemoryDir(root, config=Config(index=IndexSettings(entry_text="keep")), today=today)


def _move_out(folder: MemoryDir, source: MemoryDir, plan: ImportPlan, result: ImportResult) -> None:
    for item in plan.items:
        if not item.leaves_source:
            continue
        try:
            _, destination, result.source_index = source.remove(item.source, log=False)
        except (OSError, MemdirError) as exc:
            done = f"{plural(len(result.moved), 'memory', 'memories')} left {plan.source}"
            raise MoveIncomplete(
                f"the import into {folder.root} is done ({done}), but {item.source} could not leave it ({exc}); "
                "run the same import again to finish the move"
            ) from None
        entry = source.removal_entry(f"{COMMAND} --move", item.source, destination)
        log_decisions(source.root, [entry | {"into": str(folder.root)}])
        result.moved.append(item.source)


def _log_entry(item: ImportItem, origin: dict[str, str]) -> dict[str, Any]:
    """The log line of a file that is not written: the screen's own, else what the import decided."""
    if item.verdict is not None and item.present is None and item.verdict.action in (Action.SKIP, Action.REFUSE):
        return verdict_entry(item.verdict, command=COMMAND, source_file=item.source, **origin)
    decision = "skipped-present" if item.present else "refused" if item.outcome is Outcome.REFUSED else "skipped"
    entry = {"command": COMMAND, "decision": decision, "name": item.name, "type": item.type, "file": item.present}
    return entry | {"source_file": item.source, "reasons": item.reasons, **origin}


def import_folder(
    folder: MemoryDir, source: Path, *, move: bool = False, supersede: bool = False, dry_run: bool = False
) -> ImportResult:
    """Bring the memories of the folder `source` into `folder` (see the module's doc); with
    `dry_run`, only say what would happen."""
    plan = plan_import(folder, source, supersede=supersede)
    if dry_run:
        return ImportResult(plan, dry_run=True)
    return apply_import(folder, plan, move=move)


# --- notes kept by hand -----------------------------------------------------------------------------

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")


@dataclass(frozen=True)
class Notes:
    """What `import --llm` sends a model: the text, the day it was last changed, and what was left out."""

    text: str
    changed: dt.date
    note: str = ""


def read_notes(path: Path, section: str | None = None, limit: int | None = None) -> Notes:
    """The notes in `path` (the part under the heading `section`, when given) without the lines that
    only index memory files beside it; raises NotesError when there are none, or more than `limit` characters."""
    try:
        raw = read_regular(path, NOTES_MAX_BYTES)
        changed = dt.date.fromtimestamp(path.stat().st_mtime)
    except NotRegularInput as exc:
        if path.is_dir():
            raise NotesError(
                f"{path} is a folder; `memdir import {path}` (without --llm) brings its memory files over"
            ) from None
        raise NotesError(f"{path} is {exc.strerror}; memdir reads notes only from regular files") from None
    except InputTooLarge as exc:
        raise NotesError(f"{path} is {exc.strerror}: too long for notes kept by hand; split it") from None
    except OSError as exc:
        raise NotesError(f"{path}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise NotesError(f"{path} is not valid UTF-8 (byte at offset {exc.start})") from None
    lines = split_lines(text)
    if section is not None:
        lines = _section(path, lines, section)
    kept = [line for line in lines if not _indexes_a_sibling(line)]
    left_out = len(lines) - len(kept)
    body = "\n".join(kept).strip()
    if not any(line.strip() and not _HEADING.match(line) for line in kept):  # headings alone say nothing
        raise NotesError(f"{path}{f' (section {section!r})' if section else ''} holds no notes to import")
    if limit is not None and len(body) > limit:
        raise NotesError(
            f"{path} holds {len(body):,} characters, more than one request takes ({limit:,}); "
            "import it one --section at a time"
        )
    note = ""
    if left_out:
        lines_word = plural(left_out, "index line", "index lines")
        note = f"{lines_word} left out (links to files beside it: `memdir import FOLDER` brings memory files over)"
    return Notes(body, changed, note)


def _indexes_a_sibling(line: str) -> bool:
    """A list item that opens with a link to a markdown file beside the notes: an index entry."""
    target = entry_target(line)
    return target is not None and "/" not in target and target.lower().endswith(".md") and target != INDEX_NAME


def _section(path: Path, lines: list[str], wanted: str) -> list[str]:
    """The lines under the heading `wanted` (case aside; `## ` may be given), to the next heading of
    its level or above. Raises NotesError naming the headings there are."""
    wanted_key = " ".join(wanted.lstrip("#").split()).casefold()
    headings: list[tuple[int, int, str]] = []  # line, level, text
    fence = False
    for i, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        found = None if fence else _HEADING.match(line)
        if found:
            headings.append((i, len(found.group(1)), found.group(2)))
    for at, (start, level, heading) in enumerate(headings):
        if " ".join(heading.split()).casefold() == wanted_key:
            end = next((line for line, other, _ in headings[at + 1 :] if other <= level), len(lines))
            return lines[start:end]
    shown = ", ".join(repr(heading) for _, _, heading in headings[:12]) or "none"
    raise NotesError(f"{path} has no heading {wanted!r} (its headings: {shown})")


__all__ = [
    "ImportItem",
    "ImportPlan",
    "ImportRefused",
    "ImportResult",
    "MoveIncomplete",
    "Notes",
    "NotesError",
    "Outcome",
    "apply_import",
    "import_folder",
    "plan_import",
    "read_notes",
]

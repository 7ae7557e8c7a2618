"""MemoryDir: the library's entry point for one memory folder. The CLI is a thin layer over it.

Every change that adds or changes a memory's text goes through one door: `screen` decides (the
policy is memdir.core.gauntlet's), `commit` writes what it let through, all files or none, under the
folder lock, re-indexes before the lock is released and logs each decision. The primitives under
`commit` (staged writes, supersedes, the index write) are private to this class.

Over 500 lines: the folder object is reading, linting, indexing and that one commit step; the
reading and the rules themselves live in the core and in lint/, the policy in the core's gauntlet.
"""

from __future__ import annotations

import builtins  # `list` below is a method; annotations inside the class need the type
import contextlib
import datetime as dt
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from memdir.core.cache import ParseCache
from memdir.core.config import Config
from memdir.core.errors import (
    ConfigError,
    IndexRefused,
    InvalidMemory,
    MemoryChanged,
    MemoryExists,
    MemoryNotFound,
    StateRefused,
    os_error_text,
)
from memdir.core.index import DEFAULT_CAPS, Caps, Indexable, IndexResult, build_index, find_links
from memdir.core.model import (
    INDEX_NAME,
    PENDING_SUPERSEDE,
    FrontmatterError,
    Memory,
    MemoryType,
    NewMemory,
    Status,
    control_problem,
    name_key,
    parse_document,
    said_digest,
    set_fields,
)
from memdir.core.store import (
    STATE_DIR,
    FileProblem,
    Scan,
    archive_folder_for,
    atomic_write,
    checked_folder,
    ensure_state_dir,
    folder_lock,
    index_inputs,
    index_link_refusal,
    keep_index_history,
    log_decisions,
    make_folders,
    read_text_if_exists,
    refresh_inputs,
    refuse_too_large,
    resolved,
    scan_folder,
    state_dir,
    state_subfolder,
    unreadable_note,
    write_state_file,
)
from memdir.text.bulk import paused_gc

if TYPE_CHECKING:
    from memdir.core.gauntlet import Candidate, Verdict
    from memdir.core.lookup import Found
    from memdir.lint import Finding, LintReport, Rule

FIX_PASSES = 10  # a fix can uncover another; ten passes is more than any real file needs


class _Unread:
    """Marks an argument left out, where None already means "MEMORY.md does not exist"."""


UNREAD = _Unread()


@dataclass(frozen=True)
class FileChange:
    """One file a fix writes: its text before and after."""

    path: str  # relative to the folder
    before: str | None  # None: the file is new
    after: str
    redacted: tuple[str, ...] = ()  # kinds of secret the write path took out of what it was given


# The fields a commit's bookkeeping may set: memdir's own, never text a person or a model wrote.
BOOKKEEPING = frozenset({"status", "supersedes", "superseded_by", PENDING_SUPERSEDE, "updated"})


@dataclass(frozen=True)
class FieldChange:
    """memdir's own bookkeeping on a memory, for `MemoryDir.commit`: frontmatter fields set (None
    removes one), every other byte kept, no text added (so nothing for the screen to judge)."""

    path: str  # relative to the folder
    fields: Mapping[str, Any]
    before: str | None = None  # the text it was planned against; None: the file as it is at commit
    decision: str = "fields-set"  # the decision log's word for it

    def __post_init__(self) -> None:
        if not set(self.fields) <= BOOKKEEPING:
            raise ValueError(f"bookkeeping sets {', '.join(sorted(BOOKKEEPING))} only, not {sorted(self.fields)}")

    def entry(self) -> dict[str, Any]:
        """Its line in the decision log."""
        shown = {key: str(value) for key, value in self.fields.items() if value is not None}
        return {"decision": self.decision, "file": self.path} | {
            key: value
            for key, value in shown.items()
            if key not in ("status", "updated")  # the decision says it
        }


@dataclass(frozen=True)
class FixResult:
    """The outcome of `MemoryDir.fix`: the changes, the findings they fix, and what is left."""

    changes: list[FileChange]  # what was (or, in a dry run, would be) written
    fixed: list[Finding]  # the findings the changes fix
    report: LintReport  # what is left, after the changes


@dataclass(frozen=True)
class IndexWrite:
    """The outcome of `MemoryDir.write_index`."""

    result: IndexResult
    changed: bool
    previous: str | None  # what MEMORY.md held before
    problems: list[FileProblem]  # the files that failed to load as memories
    inputs: Sequence[Indexable] = ()  # the memories it was built from, to build it again (smaller)
    history_error: str | None = None  # why what the rewrite removed could not be kept in .memdir/
    first_run: bool = False  # memdir had never rewritten this MEMORY.md (no .memdir/MEMORY.md.prev)

    @property
    def unreadable(self) -> list[FileProblem]:
        """The problems worth telling people about (FileProblem.unreadable)."""
        return [p for p in self.problems if p.unreadable]

    def unreadable_note(self) -> str:
        """'1 file could not be read as a memory', or '' when every file was read."""
        return unreadable_note(len(self.unreadable))


class MemoryDir:
    """A memory folder: typed markdown files plus the MEMORY.md index."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        config: Config | None = None,
        today: dt.date | None = None,
        caps: Caps = DEFAULT_CAPS,
        cache: bool = True,
    ) -> None:
        """`cache=False` reads and parses every file on every scan instead of reusing what
        `.memdir/parse-cache` holds for files that have not changed."""
        self.root = Path(root)
        self.config = config or Config()
        self.today = today or dt.date.today()
        self.caps = caps
        self.cache = cache

    @property
    def index_path(self) -> Path:
        return self.root / INDEX_NAME

    def __repr__(self) -> str:
        return f"MemoryDir({str(self.root)!r})"

    # --- reading ---------------------------------------------------------------------------

    def scan(self) -> Scan:
        with paused_gc():
            return scan_folder(self.root, self._cache())

    def _cache(self) -> ParseCache:
        """The parse cache; raises StateRefused when `.memdir/` is a symlink or not a folder."""
        if not self.cache or not self.root.is_dir():
            return ParseCache.disabled()
        return ParseCache.load(state_dir(self.root))

    def list(self, memory_type: MemoryType | None = None) -> list[Memory]:
        memories = self.scan().memories
        return [m for m in memories if memory_type is None or m.type is memory_type]

    def read_index(self) -> str | None:
        """MEMORY.md's text, None when absent.

        Raises IndexRefused when it is not UTF-8 or is a symlink, wherever it leads: the index would
        be written into its target (a memory's body, a file outside the folder).
        """
        if self.index_path.is_symlink():
            try:
                resolved(self.index_path)
            except OSError:
                raise IndexRefused(
                    f"{self.index_path} is a symlink that leads in a loop; memdir will not follow it"
                ) from None
            raise IndexRefused(index_link_refusal(self.index_path))
        if self.index_path.exists() and not self.index_path.is_file():
            raise IndexRefused(
                f"{self.index_path} is not a regular file (a folder, named pipe, socket or device); memdir "
                "will not read or replace it"
            )
        try:
            return read_text_if_exists(self.index_path)
        except UnicodeDecodeError as exc:
            raise IndexRefused(
                f"{self.index_path} is not valid UTF-8 (byte at offset {exc.start}); "
                "memdir will not rewrite it. Re-save it as UTF-8"
            ) from None

    def plan_index(self, drop_missing: bool = False, scan: Scan | None = None) -> IndexResult:
        """What `write_index` would write, without writing it; from `scan` when the caller has one."""
        return self._write_index_locked(drop_missing=drop_missing, dry_run=True, scan=scan).result

    def missing_targets(self, index_text: str) -> builtins.list[str]:
        """Local link targets in MEMORY.md whose file does not exist."""
        targets = {link.target for link in find_links(index_text) if link.target is not None}
        return sorted(t for t in targets if not (self.root / t).exists())

    def find(self, query: str) -> Found:
        """Pick one file by path, file name, stem, `name` or slug of the name (memdir.core.lookup).
        Raises MemoryNotFound when nothing matches, the query is ambiguous, or it is a path to a
        file outside the folder."""
        from memdir.core.lookup import find_memory  # not on a warm index's path

        return find_memory(self.root, self.scan(), query)

    def lint(
        self,
        select: Iterable[str] = (),
        ignore: Iterable[str] = (),
        extend_select: Iterable[str] = (),
    ) -> LintReport:
        """Run the lint rules: `select` (else the config's, else the default set), plus
        `extend_select`, minus `ignore` (both added to the config's). Raises ValueError for an
        unknown selector."""
        folder = self
        try:
            state_dir(self.root)
        except StateRefused:  # a finding (S007), not the end of the run: lint without the cache
            folder = MemoryDir(self.root, self.config, self.today, self.caps, cache=False)
        return folder._lint(self._rules(select, ignore, extend_select), folder.scan())

    def fix(
        self,
        select: Iterable[str] = (),
        ignore: Iterable[str] = (),
        extend_select: Iterable[str] = (),
        unsafe: bool = False,
        dry_run: bool = False,
    ) -> FixResult:
        """Apply the fixes of the selected rules (safe ones; unsafe too with `unsafe`).

        Fixes are applied in memory, pass after pass until none is left, and then written under
        the folder lock: each changed memory atomically, then MEMORY.md through `write_index`
        (which keeps its history). With `dry_run` nothing is written; `changes` says what would be.
        Raises MemoryChanged when a file changes on disk while its fix is being written.
        """
        rules = self._rules(select, ignore, extend_select)
        if dry_run:
            return self._fix_locked(rules, unsafe, dry_run=True)
        with folder_lock(self.root):
            return self._fix_locked(rules, unsafe, dry_run=False)

    def _rules(self, select: Iterable[str], ignore: Iterable[str], extend_select: Iterable[str]) -> builtins.list[Rule]:
        from memdir import lint as linter  # the rules are only loaded by those who lint

        settings = self.config.lint
        configured = [
            ("select", settings.select),
            ("ignore", settings.ignore),
            ("extend-select", settings.extend_select),
            *((f"per-file-ignores.{glob!r}", codes) for glob, codes in settings.per_file_ignores),
        ]
        for key, selectors in configured:  # a typo in the config is the config's error: say where
            for selector in selectors:
                try:
                    linter.matching_rules(selector)
                except ValueError as exc:
                    raise ConfigError(f"{self.config.path}: `lint.{key}`: {exc}") from None
        return linter.resolve_selection(
            list(select) or settings.select,
            [*settings.ignore, *ignore],
            [*settings.extend_select, *extend_select],
        )

    def _lint(
        self,
        rules: Iterable[Rule],
        scan: Scan,
        index_text: str | _Unread | None = UNREAD,
        planned: IndexWrite | None = None,
    ) -> LintReport:
        """Lint `scan`; `planned` is the index plan for it when the caller already made one."""
        from memdir import lint as linter
        from memdir.core.claude_code import find_repo_root

        current: str | None = None
        index_problem = None
        if planned is not None:
            current = planned.previous
        else:
            try:
                current = self.read_index() if isinstance(index_text, _Unread) else index_text
            except IndexRefused as exc:  # nothing to compare against; F003 or S001 report why
                index_problem = str(exc)

        def plan() -> IndexResult:
            if planned is not None:
                return planned.result
            if index_problem is not None:
                return IndexResult(text="")
            return self._write_index_locked(scan=scan, dry_run=True, previous=current).result

        ctx = linter.LintContext(
            root=self.root,
            scan=scan,
            index_text=current,
            index_problem=index_problem,
            plan=plan,
            config=self.config,
            today=self.today,
            caps=self.caps,
            repo_root=find_repo_root(self.root.resolve()),
        )
        with paused_gc():  # the rules make many small acyclic objects: findings, term sets, spans
            return linter.run_rules(ctx, rules)

    def _fix_locked(self, rules: builtins.list[Rule], unsafe: bool, dry_run: bool) -> FixResult:
        from memdir.lint.fix import apply_edits, overlay
        from memdir.lint.registry import Applicability

        allowed = {Applicability.SAFE, Applicability.UNSAFE} if unsafe else {Applicability.SAFE}
        scan = self.scan()
        try:
            first_plan: IndexWrite | None = self._write_index_locked(dry_run=True, scan=scan)
        except IndexRefused:  # the lint below reports why
            first_plan = None
        in_sync = first_plan is not None and not first_plan.changed
        report = self._lint(rules, scan, planned=first_plan)
        originals = {m.path: m.doc.text for m in scan.memories}
        texts: dict[str, str] = {}
        fixed: dict[tuple[str, str, int | None, str], Finding] = {}
        regenerate = drop_missing = False
        for _ in range(FIX_PASSES):
            wanted = [f for f in report.findings if f.fix is not None and f.fix.applicability in allowed]
            by_path: dict[str, list[Finding]] = {}
            for finding in wanted:
                assert finding.fix is not None
                if finding.fix.regenerate_index or finding.fix.drop_missing:
                    regenerate = True
                    drop_missing = drop_missing or finding.fix.drop_missing
                    fixed.setdefault((finding.code, finding.path, finding.line, finding.message), finding)
                elif finding.fix.edits and finding.path in originals:
                    by_path.setdefault(finding.path, []).append(finding)
            progressed = False
            for path, findings in by_path.items():
                text = texts.get(path, originals[path])
                new_text, applied = apply_edits(text, findings)
                if new_text != text:
                    texts[path] = new_text
                    progressed = True
                for finding in applied:
                    fixed[(finding.code, finding.path, finding.line, finding.message)] = finding
            if not progressed:
                break
            scan = overlay(scan, texts)
            report = self._lint(rules, scan)
        # Edited descriptions change index lines: an index that was in sync is kept in sync.
        regenerate = regenerate or (bool(texts) and in_sync)
        changes = [FileChange(path, originals[path], new) for path, new in sorted(texts.items())]
        previous = self.read_index()
        index_text = previous
        if regenerate:
            planned = self._write_index_locked(drop_missing=drop_missing, dry_run=True, scan=scan, previous=previous)
            if planned.changed:
                index_text = planned.result.text
                changes.append(FileChange(INDEX_NAME, previous, index_text))
        if not dry_run:
            self._write_files([change for change in changes if change.path != INDEX_NAME])
            if regenerate:
                self._write_index_locked(drop_missing=drop_missing)
            scan, index_text = self.scan(), self.read_index()
        return FixResult(changes, list(fixed.values()), self._lint(rules, scan, index_text))

    # --- writing ---------------------------------------------------------------------------

    def init(self) -> builtins.list[str]:
        """Create the folder, an empty MEMORY.md and `.memdir/`. Returns what it created."""
        created = []
        if not self.root.is_dir():
            self.root.mkdir(parents=True)
            created.append(str(self.root))
        if not (self.root / STATE_DIR).is_dir():
            ensure_state_dir(self.root)
            created.append(str(self.root / STATE_DIR))
        with folder_lock(self.root):
            if not self.index_path.exists():
                atomic_write(self.index_path, "", exclusive=True)
                created.append(str(self.index_path))
        return created

    def write_index(
        self,
        drop_missing: bool = False,
        dry_run: bool = False,
        *,
        drop: Iterable[str] = (),
        since: IndexWrite | None = None,
        changed_files: Iterable[str] = (),
    ) -> IndexWrite:
        """Regenerate MEMORY.md. Nothing is written when the result is refused (see IndexResult).

        With `drop_missing`, list entries linking to files that no longer exist are removed too;
        with `drop`, the entries of those files (memdir moved them away: `prune`).
        With `dry_run`, nothing is written (and no lock taken): `changed` says whether it would be.
        With `since`, this folder's last IndexWrite, and `changed_files`, every file (relative path)
        changed after it, only those files are read (as `memdir watch` does); when a change is
        more than a file's, the folder is listed as usual.
        """
        if dry_run:
            return self._write_index_locked(
                drop=drop, drop_missing=drop_missing, dry_run=True, since=since, changed_files=changed_files
            )
        with folder_lock(self.root):
            return self._write_index_locked(
                drop=drop, drop_missing=drop_missing, since=since, changed_files=changed_files
            )

    def _write_index_locked(
        self,
        drop: Iterable[str] = (),
        drop_missing: bool = False,
        dry_run: bool = False,
        scan: Scan | None = None,
        previous: str | _Unread | None = UNREAD,
        since: IndexWrite | None = None,
        changed_files: Iterable[str] = (),
    ) -> IndexWrite:
        """The one place the index is computed (and, unless `dry_run`, written).

        `scan` is the folder as the caller already loaded it; by default it is scanned here.
        `previous` stands in for MEMORY.md as it is (only in a dry run: a fix previewing its result).
        """
        if isinstance(previous, _Unread):
            previous = self.read_index()
        else:
            assert dry_run, "an index is only written over the file as it is on disk"
        # The first rewrite of this MEMORY.md by memdir: nothing of it was ever kept in .memdir/.
        first_run = not os.path.lexists(self.root / STATE_DIR / f"{INDEX_NAME}.prev")
        missing = self.missing_targets(previous or "")
        if drop_missing:
            drop = [*drop, *missing]
        memories: Sequence[Indexable]
        refreshed = None
        if scan is None and since is not None:
            refreshed = refresh_inputs(self.root, since.inputs, since.problems, changed_files)
        if scan is not None:
            memories, problems = scan.memories, scan.problems
        elif refreshed is not None:
            memories, problems = refreshed
        else:  # unchanged files come from the cache's index rows, without reading them
            with paused_gc():
                memories, problems = index_inputs(self.root, self._cache())
        keep_wording = self.config.index.entry_text == "keep"
        result = build_index(previous or "", memories, self.today, self.caps, drop, missing, keep_wording)
        changed = result.refused is None and (previous is None or result.text != previous)
        history_error = None
        if changed and not dry_run:
            if previous:
                try:
                    keep_index_history(self.root, previous, result.text)
                except OSError as exc:  # a convenience: it must not leave MEMORY.md stale
                    history_error = os_error_text(exc)
            atomic_write(self.index_path, result.text)
        return IndexWrite(result, changed, previous, problems, memories, history_error, first_run)

    def save_draft(self, file_name: str, text: str) -> Path:
        """Keep text a person typed that memdir could not accept, so no edit is ever lost."""
        drafts = state_subfolder(self.root, "drafts")
        path = _free_path(drafts / f"{dt.datetime.now():%Y%m%d-%H%M%S}-{PurePosixPath(file_name).name}")
        write_state_file(path, text, durable=True, exclusive=True)
        return path

    # --- the one door for writes: `screen` decides, `commit` writes ------------------------------

    def add(
        self,
        new: NewMemory,
        template: str | None = None,
        *,
        source: str | None = None,
        supersedes: str | None = None,
        force: bool = False,
        convert_dates: bool = True,
        screened: bool = True,
        command: str = "api",
    ) -> tuple[Memory, IndexWrite]:
        """Write a new memory through the write path and re-index.

        Relative dates in its texts become ISO dates counted from `new.created` first
        (`convert_dates=False` keeps them as given). Then the screen (`screen`): secrets are
        redacted, `source="tool"` and instruction-like text are quarantined, a near-duplicate (of
        a live or a quarantined memory) or a memory rejected in review before is skipped unless
        `force`. Raises WriteRefused when nothing is written (a duplicate, a rejected memory, a
        memory that is nothing but a secret) and MemoryExists when the name or file is taken.
        `supersedes` names a memory the new one replaces: it gets `status: superseded` and
        `superseded_by: <new file>` (it is kept, and leaves the index).

        `screened=False` writes the memory as given, past the screen: an explicit choice that
        is logged (`stored-unscreened`), for a caller that screened it some other way.
        """
        from memdir.core.gauntlet import Candidate

        if convert_dates:
            new.absolutize_dates()
        new.validate()
        candidate = Candidate(new, source)
        verdict = self.screen(candidate, supersedes=supersedes, force=force, screened=screened, command=command)
        return self.store(verdict, template=template, command=command)

    def edited(self, query: str, text: str, *, expected: str | None = None, source: str | None = None) -> Candidate:
        """The candidate for a memory's whole new text (what `memdir edit` saves), for `screen`.
        `expected` is the text the edit started from: `commit` refuses with MemoryChanged when the
        file no longer holds it. Raises InvalidMemory when the text is not a memory."""
        from memdir.core.gauntlet import Candidate, new_memory_of

        old = self.get(query)
        memory = self._validated(old.path, text)
        if expected is not None and old.doc.text != expected:
            old = Memory(path=old.path, doc=parse_document(expected))  # commit compares the file with it
        return Candidate(new_memory_of(memory), source, text=text, replaces=old)

    def updated(
        self, query: str, *, body: str | None = None, fields: Mapping[str, object] = {}, source: str | None = None
    ) -> Candidate:
        """The candidate for setting frontmatter `fields` (None removes one) and/or replacing the body
        of a memory, every other byte kept, for `screen`. Relative dates in a new description or body
        become ISO dates counted from today, as `add` does. Raises InvalidMemory for a change that is
        not one (`name` or `type`, an empty update, a bad description or importance)."""
        from memdir.text.dates import absolutize  # a large grammar; loaded only when writing

        fields = dict(fields)
        for key in ("name", "type"):
            if key in fields:
                raise InvalidMemory(f"update cannot change `{key}`; add a new memory and delete this one")
        if body is None and not fields:
            raise InvalidMemory("nothing to update: give a body or fields to set")
        description = fields.get("description")
        if isinstance(description, str):
            if "\n" in description.strip() or not description.strip():
                raise InvalidMemory("the description must be one non-empty line")
            fields["description"] = absolutize(description.strip(), self.today)[0]
        importance = fields.get("importance")
        if importance is not None and (
            isinstance(importance, bool) or not isinstance(importance, int | float) or not 0 <= importance <= 1
        ):
            raise InvalidMemory(f"importance must be a number between 0 and 1, not {importance!r}")
        for key, value, one_line in (("body", body, False), ("description", fields.get("description"), True)):
            problem = control_problem(key, value, one_line=one_line) if isinstance(value, str) else None
            if problem:
                raise InvalidMemory(problem)
        memory = self.get(query)
        text = memory.doc.text
        try:
            if body is not None:
                doc = memory.doc
                newline = "\r\n" if "\r\n" in text[: doc.body_start] else "\n"
                lead = doc.body[: len(doc.body) - len(doc.body.lstrip("\r\n"))]  # keep the blank line after ---
                new_body = absolutize(body.strip("\r\n"), self.today)[0].replace("\r\n", "\n")
                text = text[: doc.body_start] + lead + new_body.replace("\n", newline) + newline
            text = set_fields(text, {**fields, "updated": self.today})
        except FrontmatterError as exc:
            raise InvalidMemory(f"{memory.path}: {exc}") from None
        return self.edited(memory.path, text, expected=memory.doc.text, source=source)

    def update(
        self,
        query: str,
        *,
        body: str | None = None,
        source: str | None = None,
        screened: bool = True,
        command: str = "api",
        **fields: object,
    ) -> tuple[Memory, IndexWrite]:
        """Set frontmatter fields (None removes one) and/or replace the body (`updated`), then screen
        and commit the new text as every writer's is: secrets redacted, instruction-like text or
        `source="tool"` quarantining the memory until a person accepts it (`screened=False` writes it
        as given, and the log says so). Raises WriteRefused when the screen writes nothing, and
        MemoryChanged when the file changes on disk while it is being updated."""
        candidate = self.updated(query, body=body, fields=fields, source=source)
        return self.store(self.screen(candidate, screened=screened, command=command), command=command)

    def edit(
        self,
        query: str,
        text: str,
        *,
        expected: str | None = None,
        source: str | None = None,
        screened: bool = True,
        command: str = "api",
    ) -> tuple[Memory, IndexWrite]:
        """Replace a memory's whole text (`edited`), screened and committed as `update` is."""
        candidate = self.edited(query, text, expected=expected, source=source)
        return self.store(self.screen(candidate, screened=screened, command=command), command=command)

    def screen(
        self,
        candidate: Candidate,
        *,
        supersedes: str | None = None,
        force: bool = False,
        screened: bool = True,
        command: str = "api",
    ) -> Verdict:
        """What the write path decides for a candidate, before anything is written (the policy is
        memdir.core.gauntlet's): its fields are set as the verdict asks (secrets redacted, `source`,
        `status: quarantined`). A verdict that writes nothing is logged here; `commit` logs the rest
        once the write is done. `screened=False` is the explicit, logged opt-out. Raises
        MemoryExists when a new memory's name is taken."""
        return self.screen_all([candidate], supersedes=supersedes, force=force, screened=screened, command=command)[0]

    def screen_all(
        self,
        candidates: Sequence[Candidate],
        *,
        supersedes: str | None = None,
        force: bool = False,
        screened: bool = True,
        command: str = "api",
        logged: Mapping[str, Any] = {},
    ) -> builtins.list[Verdict]:
        """`screen` for a batch, each candidate compared with the folder and with the ones before it;
        `logged`'s fields are added to the log lines of those that write nothing."""
        from memdir.core.gauntlet import Action, prepare, screen, unscreened, verdict_entry
        from memdir.core.rejections import remembered

        scan = self.scan()
        for candidate in candidates:
            if candidate.replaces is None:
                self._refuse_existing(scan, candidate.memory.file_name, candidate.memory.name)
        target = self.get(supersedes).path if supersedes is not None else None
        if screened:
            verdicts = screen(candidates, scan.memories, self.today, rejected=remembered(self.root))
        else:
            verdicts = unscreened(candidates, f"by request of {command}")
        for verdict in verdicts:
            repeats_target = target is not None and verdict.duplicate_of == target
            if verdict.action is Action.SKIP and (force or repeats_target):
                verdict.keep()  # `--force`, or it repeats the very memory it replaces
            if verdict.writes:
                verdict.supersedes = target
                prepare(verdict)
        refused = [verdict_entry(v, command=command, **logged) for v in verdicts if not v.writes]
        if refused:
            log_decisions(self.root, refused)
        return verdicts

    def store(
        self, verdict: Verdict, *, text: str | None = None, template: str | None = None, command: str = "api"
    ) -> tuple[Memory, IndexWrite]:
        """`commit` for one verdict; `text` stands in for the candidate's own (an editor's)."""
        if text is not None:
            verdict.candidate.text = text
        memories, write = self.commit([verdict], template=template, command=command)
        return memories[0], write

    def commit(
        self,
        verdicts: Sequence[Verdict],
        *,
        fields: Sequence[FieldChange] = (),
        template: str | None = None,
        command: str = "api",
        then: Callable[[IndexWrite], None] | None = None,
        logged: Mapping[str, Any] = {},
    ) -> tuple[builtins.list[Memory], IndexWrite]:
        """The one commit step for every change that adds or changes a memory's text: write what
        `screen` let through (new memories, new text of existing ones) and memdir's own bookkeeping
        `fields` (a status, a supersede, a refreshed date), all of it or none, under the folder lock;
        re-index once; call `then` (still locked: extract moves its cursor there); log every decision:
        `stored`, `quarantined`, `updated`, `failed` with the error when nothing was written (the log
        never says `stored` for a file that is not there), `index-refused` when MEMORY.md could not
        take it. `logged`'s fields are added to each log line.

        A new memory's file is rendered from its type's `template` unless its candidate has text; a
        memory it supersedes is retired in the same write (a quarantined one only records it, for
        `memdir review accept`). Raises WriteRefused for a verdict that writes nothing,
        MemoryExists when a new file or name is taken, and MemoryChanged when a file is not as it was
        read (an edit's `replaces`, a field change's `before`)."""
        from memdir.core.gauntlet import WriteRefused, failed_entry, verdict_entry

        for verdict in verdicts:
            if not verdict.writes:
                raise WriteRefused(verdict)
        try:
            memories, write, retired = self._commit_locked(verdicts, fields, template, then)
        except Exception as exc:
            failed = [failed_entry(v, str(exc), command=command, **logged) for v in verdicts]
            failed += [{"command": command, "decision": "failed", "file": f.path, "error": str(exc)} for f in fields]
            log_decisions(self.root, failed)
            raise
        entries = [verdict_entry(verdict, command=command, **logged) for verdict in verdicts]
        entries += [
            {"command": command, **logged, "decision": "superseded", "file": old, "superseded_by": new}
            for old, new in retired.items()
        ]
        entries += [{"command": command, **logged, **change.entry()} for change in fields]
        if write.result.refused is not None:
            entries += [
                {"command": command, "decision": "index-refused", "file": m.path, "reason": write.result.refused}
                for m in memories
            ]
        log_decisions(self.root, entries)
        return memories, write

    def _commit_locked(
        self,
        verdicts: Sequence[Verdict],
        fields: Sequence[FieldChange],
        template: str | None,
        then: Callable[[IndexWrite], None] | None,
    ) -> tuple[builtins.list[Memory], IndexWrite, dict[str, str]]:
        """`commit`'s work under the lock; also returns each memory a newcomer retired, and by which."""
        from memdir.core.gauntlet import screened_text
        from memdir.core.templates import render_memory

        with folder_lock(self.root):
            self.read_index()  # refuse now, not after the memory is written, if the index is unusable
            scan = self.scan()
            changes: builtins.list[FileChange] = []
            memories: builtins.list[Memory] = []
            retired: dict[str, FileChange] = {}  # old path -> its change; the last successor wins
            successors: dict[str, str] = {}  # old path -> the new one
            for verdict in verdicts:
                candidate, new = verdict.candidate, verdict.candidate.memory
                if candidate.text is None:
                    text = render_memory(new, template)
                else:
                    text = screened_text(candidate.text, verdict) if verdict.screened else candidate.text
                path = new.file_name
                if candidate.replaces is not None:
                    before = self._as_read(candidate.replaces.path, candidate.replaces.doc.text)
                    text = self._set(path, text, {"updated": self.today})
                    changes.append(FileChange(path, before, text, tuple(sorted(set(verdict.redacted)))))
                    memories.append(self._validated(path, text))
                    continue
                memory = self._validated(path, text)
                self._refuse_existing(scan, path, memory.name)
                for earlier in memories:
                    if earlier.path == path or name_key(earlier.name) == name_key(memory.name):
                        raise MemoryExists(f"{path} and {earlier.path} are one memory, written twice")
                if verdict.supersedes is not None:
                    text, old = self._successor(verdict.supersedes, path, text)
                    memory = self._validated(path, text)
                    if old is not None:
                        retired[old.path] = old
                        successors[old.path] = path
                changes.append(FileChange(path, None, text))
                memories.append(memory)
            for change in fields:
                before = self._as_read(change.path, change.before)
                changes.append(FileChange(change.path, before, self._set(change.path, before, change.fields)))
            changes += [change for path, change in retired.items() if path not in {c.path for c in changes}]
            self._write_files(changes)
            write = self._write_index_locked()
            if then is not None:
                then(write)
            return memories, write, successors

    def _as_read(self, path: str, expected: str | None) -> str:
        """The text of the memory at `path`, which must be `expected` (when given) still."""
        current = read_text_if_exists(self.root / path)
        if current is None:
            raise MemoryChanged(f"{path} is gone; nothing was written")
        if expected is not None and current != expected:
            raise MemoryChanged(f"{path} changed while memdir was writing it; nothing was written, run again")
        return current

    def _set(self, path: str, text: str, fields: Mapping[str, Any]) -> str:
        try:
            return set_fields(text, dict(fields))
        except FrontmatterError as exc:
            raise InvalidMemory(f"{path}: {exc}") from None

    def _write_files(self, changes: Sequence[FileChange]) -> None:
        """Write `changes` as one, under the folder lock: every text staged in `.memdir/` first, then
        each moved into place (a new file linked, so one that appeared meanwhile is never overwritten);
        when one cannot be, those before it are put back as they were and new sub-folders removed."""
        import shutil

        for change in changes:  # before anything is written
            refuse_too_large(change.path, change.after)
        made = make_folders(self.root, [change.path for change in changes if change.before is None])
        staging = checked_folder(state_subfolder(self.root, "staging") / f"{os.getpid()}", create=True)
        done: builtins.list[FileChange] = []
        try:
            staged = []
            for i, change in enumerate(changes):
                write_state_file(staging / f"{i}.md", change.after, durable=True)
                staged.append(staging / f"{i}.md")
            for change, path in zip(changes, staged, strict=True):
                target = self.root / change.path
                if change.before is None:
                    try:
                        os.link(path, target)
                    except FileExistsError:
                        raise MemoryExists(f"{change.path} already exists in {self.root}") from None
                else:
                    self._as_read(change.path, change.before)
                    os.replace(path, target)
                done.append(change)
        except BaseException:
            for change in reversed(done):
                with contextlib.suppress(OSError):
                    if change.before is None:
                        (self.root / change.path).unlink()
                    else:
                        atomic_write(self.root / change.path, change.before)
            for folder in reversed(made):
                with contextlib.suppress(OSError):
                    folder.rmdir()
            raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def _successor(self, query: str, new_file: str, text: str) -> tuple[str, FileChange | None]:
        """`text`, a new memory that replaces the memory `query` names, with the replacement
        recorded on it, and the change that retires the old memory now (None: not now).

        The one rule for every writer: a quarantined newcomer has not been looked at, so it retires
        nothing yet. It records `supersedes_on_accept` (the old file and a digest of what it says)
        and the old memory stays live and indexed; `memdir review accept` applies the supersede then
        (`memdir.write.review.accept`), and a reject leaves the old memory untouched. Any other
        newcomer records `supersedes`, and the old memory is marked superseded.
        """
        old = self.get(query)
        if self._validated(new_file, text).status == Status.QUARANTINED.value:
            pending = {"file": old.path, "digest": said_digest(old)}
            fields: dict[str, Any] = {"supersedes": None, PENDING_SUPERSEDE: pending}
        else:
            fields = {"supersedes": PurePosixPath(old.path).name}
        text = self._set(new_file, text, fields)
        if PENDING_SUPERSEDE in fields:
            return text, None
        retire = self.supersede(old.path, new_file)
        before = self._as_read(old.path, retire.before)
        return text, FileChange(old.path, before, self._set(old.path, before, retire.fields))

    def supersede(self, query: str, new_file: str) -> FieldChange:
        """The bookkeeping that marks a memory superseded by `new_file` (`status: superseded`,
        `superseded_by`, `updated`), every other byte as it was; for `commit`."""
        old = self.get(query)
        fields = {"status": "superseded", "superseded_by": PurePosixPath(new_file).name, "updated": self.today}
        return FieldChange(old.path, fields, before=old.doc.text, decision="superseded")

    def _refuse_existing(self, scan: Scan, file_name: str, name: str) -> None:
        path = self.root / file_name
        if path.exists() or path.is_symlink():
            raise MemoryExists(f"{file_name} already exists in {self.root}; pick another name or `memdir edit` it")
        key = name_key(name)
        for memory in scan.memories:
            if memory.name and name_key(memory.name) == key:
                raise MemoryExists(f"a memory named {memory.name!r} already exists: {memory.path}")

    def _validated(self, file_name: str, text: str) -> Memory:
        """Parse text meant for the folder; raise InvalidMemory naming what is wrong."""
        refuse_too_large(file_name, text)
        try:
            doc = parse_document(text)
        except FrontmatterError as exc:
            raise InvalidMemory(f"{file_name}: {exc}") from None
        if not doc.has_frontmatter:
            raise InvalidMemory(f"{file_name}: no frontmatter (a `---` block with name, description, type)")
        memory = Memory(path=file_name, doc=doc)
        missing = [key for key in ("name", "description") if not getattr(memory, key)]
        if memory.type is None:
            missing.append("type (one of user, feedback, project, reference)")
        if missing:
            raise InvalidMemory(f"{file_name}: missing or invalid {', '.join(missing)}")
        return memory

    def remove(self, query: str, purge: bool = False, *, log: bool = True) -> tuple[str, Path | None, IndexWrite]:
        """Move a memory into `.archive/` (or delete it with `purge`) and drop it from the index.

        `purge` also takes the memory's text out of `.memdir/` (index history, recall log, caches,
        drafts; its secrets masked in the decision log): see memdir/core/purge.py. With `purge`, a
        query that names no memory in the folder may name one in `.archive/` (`rm` and `prune` put
        them there, a key and all): that file is deleted and purged the same way.

        Returns the folder-relative path, where it went (None when purged) and the index write. The move
        is logged (`memdir history` tells reused file names apart by it) unless the caller logs it.
        All of it or nothing: when the index or the log cannot be written (a full disk), the file is
        put back and MEMORY.md restored before the error is raised, so no entry links to a file
        that is gone. A purged file is held in `.memdir/` until the rest is done.
        """
        from memdir.core.lookup import archived_origin, find_archived
        from memdir.core.purge import purge_traces, purged_text

        try:
            path, archived = self.find(query).path, False
        except MemoryNotFound as exc:
            path, archived = find_archived(self.root, query, exc), True
            if not purge:
                raise MemoryNotFound(f"{path} is archived already; `memdir rm --purge` deletes it") from None
        source = self.root / path
        with folder_lock(self.root):
            self.read_index()  # refuse before moving anything if the index cannot be rewritten
            destination: Path | None = None
            text = purged_text(source) if purge else ""
            if purge:
                held = ensure_state_dir(self.root) / f"purging-{os.getpid()}-{source.name}"
            else:
                folder = archive_folder_for(self.root, path)  # refuses a symlink on the way
                held = destination = _free_path(folder / PurePosixPath(path).name)
            import shutil  # not for every command: it imports the compressors

            shutil.move(source, held)  # a rename: it needs no space on the disk
            write: IndexWrite | None = None
            try:
                write = self._write_index_locked(drop=[] if archived else [path])
                if log:
                    log_decisions(self.root, [self.removal_entry("rm", path, destination)])
            except BaseException:
                shutil.move(held, source)
                if write is not None and write.changed:
                    self._restore_index(write.previous)
                raise
            if purge:
                held.unlink()
                purge_traces(self.root, archived_origin(self.root, path) if archived else path, text)  # after the
                # index write, which keeps the entry it drops in .memdir/MEMORY.md.prev
            return path, destination, write

    def _restore_index(self, previous: str | None) -> None:
        """Put MEMORY.md back as it was before a rewrite that is being undone. A disk too full for
        that leaves the new one: it lacks the entry of a file that is back, which the next
        `memdir index` restores; a dead link it never has."""
        try:
            if previous is None:
                self.index_path.unlink()
            else:
                atomic_write(self.index_path, previous)
        except OSError:
            pass

    def removal_entry(self, command: str, path: str, destination: Path | None) -> dict[str, Any]:
        """The log line for a memory `remove` archived (with where it went) or deleted."""
        entry = {"command": command, "decision": "deleted" if destination is None else "archived", "file": path}
        if destination is not None:
            entry["to"] = destination.relative_to(self.root).as_posix()
        return entry

    # --- the harness API: well-named, thin methods over the ones above ---------------------

    def get(self, query: str) -> Memory:
        """One memory by name, file name or path (as `find` picks it).

        Raises MemoryNotFound when nothing (or more than one) matches, InvalidMemory when the file
        that matches does not load as a memory.
        """
        found = self.find(query)
        if found.memory is None:
            why = found.problem.message if found.problem else "does not load as a memory"
            raise InvalidMemory(f"{found.path} {why}")
        return found.memory


def _free_path(path: Path) -> Path:
    """`path`, or `path` with -2, -3 ... before the suffix when something is already there."""
    candidate, n = path, 1
    while os.path.lexists(candidate):
        n += 1
        candidate = path.with_name(f"{path.stem}-{n}{path.suffix}")
    return candidate

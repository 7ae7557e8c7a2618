"""MemoryDir: the library's entry point for one memory folder. The CLI is a thin layer over it.

Every write takes the folder lock, writes atomically and re-indexes before releasing the lock, so
two processes adding memories at once both land and the index lists both.

Over 500 lines: the façade of the library, one method per operation on a folder; each method is thin
over the core.
"""

from __future__ import annotations

import builtins  # `list` below is a method; annotations inside the class need the type
import contextlib
import datetime as dt
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from memdir.core.bulk import paused_gc
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
from memdir.core.index import DEFAULT_CAPS, Caps, Indexable, IndexResult, build_index, find_links, split_lines
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
    slugify,
)
from memdir.core.store import (
    STATE_DIR,
    FileProblem,
    Scan,
    append_lines,
    archive_folder_for,
    atomic_write,
    ensure_state_dir,
    folder_lock,
    index_inputs,
    index_link_refusal,
    log_decisions,
    make_folders,
    read_text_if_exists,
    refresh_inputs,
    resolved,
    scan_folder,
    state_dir,
    state_subfolder,
    unreadable_note,
    write_state_file,
)

if TYPE_CHECKING:
    from memdir.core.gauntlet import Candidate, Verdict
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


@dataclass(frozen=True)
class Found:
    """A file picked by `MemoryDir.find`: a memory, or a file that failed to load as one."""

    path: str
    memory: Memory | None
    problem: FileProblem | None


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

    def _missing_targets(self, index_text: str) -> builtins.list[str]:
        """Local link targets in MEMORY.md whose file does not exist."""
        targets = {link.target for link in find_links(index_text) if link.target is not None}
        return sorted(t for t in targets if not (self.root / t).exists())

    def find(self, query: str) -> Found:
        """Pick one file by path, file name, stem, `name` or slug of the name. A path is relative to
        the folder, or to the working directory (`.claude/memory/user_role.md` from the repository
        root), or absolute.

        Raises MemoryNotFound when nothing matches, the query is ambiguous, or it is a path to a
        file outside the folder.
        """
        scan = self.scan()
        wanted = query.strip().removeprefix("./")
        in_folder = self._path_in_folder(query.strip())
        outside = in_folder is None and _names_a_path(query.strip())
        if outside and os.path.isabs(query.strip()):
            raise MemoryNotFound(f"{query.strip()} is not in this memory folder ({self.root})")
        candidates: list[Found] = [Found(m.path, m, None) for m in scan.memories]
        candidates += [Found(p.path, None, p) for p in scan.problems if p.kind != "symlink-outside"]

        def stem(path: str) -> str:
            return PurePosixPath(path).stem

        try:
            wanted_slug = slugify(wanted)
        except InvalidMemory:
            wanted_slug = ""
        rules = (
            lambda f: f.path == wanted or f.path == f"{wanted}.md",
            lambda f: in_folder is not None and f.path in (in_folder, f"{in_folder}.md"),
            lambda f: PurePosixPath(f.path).name in (wanted, f"{wanted}.md") or stem(f.path) == wanted,
            lambda f: f.memory is not None and f.memory.name.casefold() == wanted.casefold(),
            lambda f: (
                bool(wanted_slug)
                and (
                    (f.memory is not None and f.memory.name and name_key(f.memory.name) == wanted_slug)
                    or stem(f.path).split("_", 1)[-1] == wanted_slug
                )
            ),
        )
        for matches_rule in rules:
            hits = [f for f in candidates if matches_rule(f)]
            if len(hits) == 1:
                return hits[0]
            if len(hits) > 1:
                names = ", ".join(sorted(h.path for h in hits))
                raise MemoryNotFound(f"{query!r} matches {len(hits)} memories ({names}); name the file")
        if outside and os.path.lexists(query.strip()):
            raise MemoryNotFound(f"{query.strip()} is not in this memory folder ({self.root})")
        raise MemoryNotFound(f"no memory matches {query!r} in {self.root}; `memdir list` shows them")

    def _path_in_folder(self, query: str) -> str | None:
        """`query` as a POSIX path relative to the folder, when it is a path into the folder from the
        working directory or an absolute one; None otherwise. Compared as written and then with
        symlinks followed, since either the folder or the path may go through one."""
        if not _names_a_path(query):
            return None
        try:
            path, root = Path(os.path.abspath(query)), Path(os.path.abspath(self.root))  # from the working directory
            if not path.is_relative_to(root):
                path, root = resolved(path), resolved(root)
        except (OSError, ValueError):  # a working directory deleted, a symlink loop, a NUL character
            return None
        return path.relative_to(root).as_posix() if path.is_relative_to(root) and path != root else None

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
            for change in changes:
                if change.path != INDEX_NAME:
                    self._replace_fixed(change)
            if regenerate:
                self._write_index_locked(drop_missing=drop_missing)
            scan, index_text = self.scan(), self.read_index()
        return FixResult(changes, list(fixed.values()), self._lint(rules, scan, index_text))

    def _replace_fixed(self, change: FileChange) -> None:
        path = self.root / change.path
        if read_text_if_exists(path) != change.before:
            raise MemoryChanged(f"{path} changed while memdir was fixing it; nothing was written to it, run again")
        atomic_write(path, change.after)

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
        since: IndexWrite | None = None,
        changed_files: Iterable[str] = (),
    ) -> IndexWrite:
        """Regenerate MEMORY.md. Nothing is written when the result is refused (see IndexResult).

        With `drop_missing`, list entries linking to files that no longer exist are removed too.
        With `dry_run`, nothing is written (and no lock taken): `changed` says whether it would be.
        With `since`, this folder's last IndexWrite, and `changed_files`, every file (relative path)
        changed after it, only those files are read (as `memdir watch` does); when a change is
        more than a file's, the folder is listed as usual.
        """
        if dry_run:
            return self._write_index_locked(
                drop_missing=drop_missing, dry_run=True, since=since, changed_files=changed_files
            )
        with folder_lock(self.root):
            return self._write_index_locked(drop_missing=drop_missing, since=since, changed_files=changed_files)

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
        missing = self._missing_targets(previous or "")
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
                    self._keep_history(previous, result.text)
                except OSError as exc:  # a convenience: it must not leave MEMORY.md stale
                    history_error = os_error_text(exc)
            atomic_write(self.index_path, result.text)
        return IndexWrite(result, changed, previous, problems, memories, history_error, first_run)

    def _keep_history(self, previous: str, new: str) -> None:
        """Keep what a rewrite removes: the whole last version, and every removed line for good.

        `.memdir/MEMORY.md.prev` is the previous file; `.memdir/MEMORY.md.history` collects,
        run after run, each line that left MEMORY.md (a hand-tuned entry, a duplicate).
        """
        state = ensure_state_dir(self.root)
        write_state_file(state / f"{INDEX_NAME}.prev", previous, durable=True)
        removed = Counter(split_lines(previous)) - Counter(split_lines(new))
        gone = []
        for line in split_lines(previous):  # in file order, each removed copy once
            if removed[line] > 0:
                removed[line] -= 1
                gone.append(line)
        if not [line for line in gone if line.strip()]:
            return
        stamp = dt.datetime.now().astimezone().isoformat(timespec="seconds")
        entry = f"## {stamp}: lines `memdir index` removed or replaced\n\n" + "\n".join(gone) + "\n\n"
        append_lines(state / f"{INDEX_NAME}.history", entry.encode("utf-8"), durable=True, rotate=True)

    def save_draft(self, file_name: str, text: str) -> Path:
        """Keep text a person typed that memdir could not accept, so no edit is ever lost."""
        drafts = state_subfolder(self.root, "drafts")
        path = _free_path(drafts / f"{dt.datetime.now():%Y%m%d-%H%M%S}-{PurePosixPath(file_name).name}")
        write_state_file(path, text, durable=True, exclusive=True)
        return path

    # --- the write path: every new memory goes through `screen` and `store` -----------------------

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
        from memdir.core.templates import render_memory  # the templates are read only by those who add

        if convert_dates:
            new.absolutize_dates()
        new.validate()
        if not screened:
            memory, write = self.add_text(new.file_name, render_memory(new, template), supersedes=supersedes)
            entry = {"command": command, "decision": "stored-unscreened", "name": new.name, "file": memory.path}
            log_decisions(self.root, [entry])
            return memory, write
        verdict = self.screen(Candidate(new, source), supersedes=supersedes, force=force, command=command)
        return self.store(verdict, template=template, command=command)

    def screen(
        self, candidate: Candidate, *, supersedes: str | None = None, force: bool = False, command: str = "api"
    ) -> Verdict:
        """What the write path decides for a new memory, before anything is written (the policy is
        memdir.core.gauntlet's): its fields are set as the verdict asks (secrets redacted, `source`,
        `status: quarantined`). A verdict that writes nothing is logged here; `store` logs the rest
        once the write is done. Raises MemoryExists when the name is taken."""
        from memdir.core.gauntlet import Action, prepare, screen, verdict_entry
        from memdir.core.rejections import remembered

        scan = self.scan()
        new = candidate.memory
        self._refuse_existing(scan, new.file_name, new.name)
        target = self.get(supersedes).path if supersedes is not None else None
        verdict = screen([candidate], scan.memories, self.today, rejected=remembered(self.root))[0]
        repeats_target = target is not None and verdict.duplicate_of == target
        if verdict.action is Action.SKIP and (force or repeats_target):
            verdict.keep()  # `--force`, or it repeats the very memory it replaces
        if not verdict.writes:
            log_decisions(self.root, [verdict_entry(verdict, command=command)])
            return verdict
        verdict.supersedes = target
        prepare(verdict)
        return verdict

    def store(
        self, verdict: Verdict, *, text: str | None = None, template: str | None = None, command: str = "api"
    ) -> tuple[Memory, IndexWrite]:
        """Write what `screen` let through and re-index, then log it (`store_all` for one memory).

        `text` is the memory's whole file as a person wrote it (in $EDITOR, say); the verdict's
        redactions and fields are applied to it. Raises WriteRefused for a verdict that writes nothing."""
        memories, write = self.store_all([(verdict, text)], template=template, command=command)
        return memories[0], write

    def store_all(
        self,
        stored: Sequence[tuple[Verdict, str | None]],
        *,
        template: str | None = None,
        command: str = "api",
        **logged: Any,
    ) -> tuple[builtins.list[Memory], IndexWrite]:
        """Write what `screen` let through, all of it or none, re-index once, then log it: `stored`
        or `quarantined`, `failed` with the error when the write did not happen (the log never says
        `stored` for a file that is not there), and `index-refused` when MEMORY.md could not take it.

        Each verdict comes with its memory's whole file as a person wrote it (None: from the type's
        template); `logged` is added to each log line. Raises WriteRefused for a verdict that writes nothing."""
        from memdir.core.gauntlet import WriteRefused, failed_entry, screened_text, verdict_entry
        from memdir.core.templates import render_memory

        files = []
        for verdict, text in stored:
            if not verdict.writes:
                raise WriteRefused(verdict)
            new = verdict.candidate.memory
            text = render_memory(new, template) if text is None else screened_text(text, verdict)
            files.append((new.file_name, text, verdict.supersedes))
        try:
            memories, write = self.add_texts(files)
        except Exception as exc:
            log_decisions(self.root, [failed_entry(v, str(exc), command=command, **logged) for v, _ in stored])
            raise
        entries = [verdict_entry(verdict, command=command, **logged) for verdict, _ in stored]
        if write.result.refused is not None:
            entries += [
                {"command": command, "decision": "index-refused", "file": m.path, "reason": write.result.refused}
                for m in memories
            ]
        log_decisions(self.root, entries)
        return memories, write

    def add_text(self, file_name: str, text: str, *, supersedes: str | None = None) -> tuple[Memory, IndexWrite]:
        """Write a memory whose full text is given (e.g. edited in $EDITOR), then re-index.

        `supersedes` as for `add`; a quarantined memory only records it (`plan_successor`).
        """
        memories, write = self.add_texts([(file_name, text, supersedes)])
        return memories[0], write

    def add_texts(self, files: Sequence[tuple[str, str, str | None]]) -> tuple[builtins.list[Memory], IndexWrite]:
        """Write new memories, each (file name, full text, what it supersedes or None), all of them or
        none, then re-index once. A missing sub-folder is made. Raises MemoryExists when a file or
        name is taken, in the folder or earlier in `files`."""
        memories = [self._validated(file_name, text) for file_name, text, _ in files]
        with folder_lock(self.root):
            self.read_index()  # refuse now, not after the memory is written, if the index is unusable
            scan = self.scan()
            changes: builtins.list[FileChange] = []
            retired: dict[str, FileChange] = {}  # old path -> its change; the last successor wins
            for i, (file_name, text, supersedes) in enumerate(files):
                self._refuse_existing(scan, file_name, memories[i].name)
                for earlier in memories[:i]:
                    if earlier.path == file_name or name_key(earlier.name) == name_key(memories[i].name):
                        raise MemoryExists(f"{file_name} and {earlier.path} are one memory, written twice")
                if supersedes is not None:
                    text, old = self.plan_successor(supersedes, file_name, text)
                    memories[i] = self._validated(file_name, text)
                    if old is not None:
                        retired[old.path] = old
                changes.append(FileChange(file_name, None, text))
            made = make_folders(self.root, [change.path for change in changes])
            try:
                self.write_together_locked(*changes, *retired.values())
            except BaseException:
                for folder in reversed(made):
                    with contextlib.suppress(OSError):
                        folder.rmdir()
                raise
            if retired:
                scan = self.scan()  # the superseded memories changed too
            else:
                scan.memories.extend(memories)  # the lock keeps the folder as scanned, but for these files
            return memories, self._write_index_locked(scan=scan)

    def write_together_locked(self, *changes: FileChange) -> None:
        """Write `changes` as one: when one cannot be written, those before it are put back as they
        were (a new file removed). A change whose file is not as planned (`before`) is refused, and a
        new file that exists already raises MemoryExists. The caller holds the folder lock."""
        done: list[FileChange] = []
        try:
            for change in changes:
                path = self.root / change.path
                if change.before is None:
                    try:
                        atomic_write(path, change.after, exclusive=True)
                    except FileExistsError:
                        raise MemoryExists(f"{change.path} already exists in {self.root}") from None
                else:
                    self._replace_fixed(change)
                done.append(change)
        except BaseException:
            for change in reversed(done):
                if change.before is None:
                    (self.root / change.path).unlink(missing_ok=True)
                else:
                    atomic_write(self.root / change.path, change.before)
            raise

    def plan_successor(self, query: str, new_file: str, text: str) -> tuple[str, FileChange | None]:
        """`text`, a new memory that replaces the memory `query` names, with the replacement
        recorded on it, and the change that retires the old memory now (None: not now).

        The one rule for every writer (`add`, `extract`): a quarantined newcomer has not been looked
        at, so it retires nothing yet. It records `supersedes_on_accept` (the old file and a digest
        of what it says) and the old memory stays live and indexed; `memdir review accept` applies
        the supersede then (`memdir.write.review.accept`), and a reject leaves the old memory untouched.
        Any other newcomer records `supersedes`, and the old memory is marked superseded.
        """
        old = self.get(query)
        if self._validated(new_file, text).status == Status.QUARANTINED.value:
            pending = {"file": old.path, "digest": said_digest(old)}
            fields: dict[str, Any] = {"supersedes": None, PENDING_SUPERSEDE: pending}
        else:
            fields = {"supersedes": PurePosixPath(old.path).name}
        try:
            text = set_fields(text, fields)
        except FrontmatterError as exc:
            raise InvalidMemory(f"{new_file}: {exc}") from None
        return text, None if PENDING_SUPERSEDE in fields else self.plan_supersede(old.path, new_file)

    def plan_supersede(self, query: str, new_file: str) -> FileChange:
        """The text that marks a memory superseded by `new_file`: `status: superseded`,
        `superseded_by`, `updated`; every other byte as it was."""
        old = self.get(query)
        original = (self.root / old.path).read_bytes().decode("utf-8")
        try:
            text = set_fields(
                original, {"status": "superseded", "superseded_by": PurePosixPath(new_file).name, "updated": self.today}
            )
        except FrontmatterError as exc:
            raise InvalidMemory(f"{old.path}: {exc}") from None
        return FileChange(old.path, original, text)

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

    def replace_text(self, path: str, text: str, expected: str | None = None) -> tuple[Memory, IndexWrite]:
        """Overwrite a memory with edited text (validated; `updated` set to today), then re-index.

        With `expected` (the text the edit started from), refuses with MemoryChanged when the
        file changed meanwhile, so an edit never overwrites what another writer saved.
        """
        try:
            text = set_fields(text, {"updated": self.today})
        except FrontmatterError as exc:
            raise InvalidMemory(f"{path}: {exc}") from None
        memory = self._validated(path, text)
        with folder_lock(self.root):
            self.read_index()
            if expected is not None and (self.root / path).read_bytes() != expected.encode("utf-8"):
                raise MemoryChanged(f"{path} changed while it was being edited; not overwritten")
            atomic_write(self.root / path, text)
            return memory, self._write_index_locked()

    def remove(self, query: str, purge: bool = False, *, log: bool = True) -> tuple[str, Path | None, IndexWrite]:
        """Move a memory into `.archive/` (or delete it with `purge`) and drop it from the index.

        `purge` also takes the memory's text out of `.memdir/` (index history, recall log, caches,
        drafts; its secrets masked in the decision log): see memdir/core/purge.py.

        Returns the folder-relative path, where it went (None when purged) and the index write. The move
        is logged (`memdir history` tells reused file names apart by it) unless the caller logs it.
        All of it or nothing: when the index or the log cannot be written (a full disk), the file is
        put back and MEMORY.md restored before the error is raised, so no entry links to a file
        that is gone. A purged file is held in `.memdir/` until the rest is done.
        """
        from memdir.core.purge import purge_traces, purged_text

        found = self.find(query)
        source = self.root / found.path
        with folder_lock(self.root):
            self.read_index()  # refuse before moving anything if the index cannot be rewritten
            destination: Path | None = None
            text = purged_text(source) if purge else ""
            if purge:
                held = ensure_state_dir(self.root) / f"purging-{os.getpid()}-{source.name}"
            else:
                folder = archive_folder_for(self.root, found.path)  # refuses a symlink on the way
                held = destination = _free_path(folder / PurePosixPath(found.path).name)
            import shutil  # not for every command: it imports the compressors

            shutil.move(source, held)  # a rename: it needs no space on the disk
            write: IndexWrite | None = None
            try:
                write = self._write_index_locked(drop=[found.path])
                if log:
                    log_decisions(self.root, [self.removal_entry("rm", found.path, destination)])
            except BaseException:
                shutil.move(held, source)
                if write is not None and write.changed:
                    self._restore_index(write.previous)
                raise
            if purge:
                held.unlink()
                purge_traces(self.root, found.path, text)  # after the index write, which keeps the
                # entry it drops in .memdir/MEMORY.md.prev
            return found.path, destination, write

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

    def update(
        self, query: str, *, body: str | None = None, screened: bool = True, command: str = "api", **fields: object
    ) -> tuple[Memory, IndexWrite]:
        """Set frontmatter fields (None removes one) and/or replace the body; other bytes stay.

        `updated` becomes today and relative dates in a new description or body become ISO dates
        counted from today, as `add` does; a secret in them is redacted, as the write path does for
        a new memory (`screened=False` writes them as given, and the log says so). `name` and
        `type` cannot change here, since the file name carries them: add a new memory and delete
        this one. Raises MemoryChanged when the file changes on disk while it is being updated.
        """
        change = self.plan_update(query, body=body, fields=fields, screened=screened)
        written = self.replace_text(change.path, change.after, expected=change.before)
        self.log_update(change, screened=screened, command=command)
        return written

    def log_update(self, change: FileChange, *, screened: bool = True, command: str = "api") -> None:
        """Log what the write path did to an update: the secrets it took out, or that it was told not to look."""
        if not screened:
            log_decisions(self.root, [{"command": command, "decision": "updated-unscreened", "file": change.path}])
        elif change.redacted:
            entry = {"command": command, "decision": "updated", "file": change.path, "redacted": list(change.redacted)}
            log_decisions(self.root, [entry])

    def plan_update(
        self, query: str, *, body: str | None = None, fields: Mapping[str, object] = {}, screened: bool = True
    ) -> FileChange:
        """The text `update` would write, without writing it (`before` is the file as it is); `fields`
        as `update` takes them."""
        fields = dict(fields)
        from memdir.core.dates import absolutize  # a large grammar; loaded only when writing
        from memdir.core.sensitive import find_secrets, redact

        redacted: list[str] = []
        if screened:  # the write path's secret screen, as for a new memory (memdir.core.gauntlet)
            for key, value in (("body", body), ("description", fields.get("description"))):
                if isinstance(value, str) and (hits := find_secrets(value)):
                    redacted += [hit.kind for hit in hits]
                    if key == "body":
                        body = redact(value)
                    else:
                        fields["description"] = redact(value)

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
        for key, value, one_line in (("body", body, False), ("description", description, True)):
            problem = control_problem(key, value, one_line=one_line) if isinstance(value, str) else None
            if problem:
                raise InvalidMemory(problem)
        memory = self.get(query)
        original = (self.root / memory.path).read_bytes().decode("utf-8")
        text = original
        try:
            if body is not None:
                doc = parse_document(text)
                newline = "\r\n" if "\r\n" in text[: doc.body_start] else "\n"
                lead = doc.body[: len(doc.body) - len(doc.body.lstrip("\r\n"))]  # keep the blank line after ---
                new_body = absolutize(body.strip("\r\n"), self.today)[0].replace("\r\n", "\n")
                text = text[: doc.body_start] + lead + new_body.replace("\n", newline) + newline
            text = set_fields(text, {**fields, "updated": self.today})
        except FrontmatterError as exc:
            raise InvalidMemory(f"{memory.path}: {exc}") from None
        return FileChange(memory.path, original, text, tuple(sorted(set(redacted))))


def _free_path(path: Path) -> Path:
    """`path`, or `path` with -2, -3 ... before the suffix when something is already there."""
    candidate, n = path, 1
    while os.path.lexists(candidate):
        n += 1
        candidate = path.with_name(f"{path.stem}-{n}{path.suffix}")
    return candidate


def _names_a_path(query: str) -> bool:
    """Whether `query` can only be a path (a name or a bare file name has no separator)."""
    return os.path.isabs(query) or "/" in query or os.sep in query

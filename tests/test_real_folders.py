"""Real folders, read and indexed the way Claude Code and their owners see them.

Every folder of the shared corpus (`../shared/corpus/real/`) is copied to a temporary directory and
indexed, by the library and by the CLI. What memdir does is checked against a reference reader
written here from Claude Code's own rule (its bundled `parseFrontmatter`): which files Claude Code
reads as memories, and of those which memdir must index. The properties:

- memdir reads a file as a memory exactly when Claude Code does (YAML, then the quoted retry);
- every memory is linked from MEMORY.md (any link, `./`, `%`-encoded or case-variant) or reported
  as left out for the caps;
- a memory already linked in MEMORY.md (inline in prose too) gets no second entry;
- when memories are left out for the caps, no entry line linking a missing file is left in MEMORY.md
  (dead links go first), and what is left out could not have fitted (greedy packing);
- every line memdir generates is at most 150 characters; lint after `index` finds nothing stale,
  unindexed or too long;
- `index` twice is byte-identical; no line a person wrote is lost (it stays in MEMORY.md or in
  `.memdir/MEMORY.md.history`);
- a memory whose file was renamed takes over its old line.

The corpus is never written: each test works on its own copy (`.memdir/` state left behind in the
corpus by other runs is not copied).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import unicodedata
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import TODAY, invoke_memdir

from memdir.core.index import Caps, entry_target, find_links, render_entry, split_lines
from memdir.folder import IndexWrite, MemoryDir

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "real"
if not CORPUS.is_dir():
    pytest.skip(f"the real-folder corpus is not at {CORPUS}", allow_module_level=True)

FOLDERS = sorted(p.name for p in CORPUS.iterdir() if p.is_dir())
folders = pytest.mark.parametrize("name", FOLDERS)

MAX_LINES, MAX_BYTES, ENTRY_MAX = 200, 25_000, 150
TYPES = frozenset({"user", "feedback", "project", "reference"})
HISTORY = Path(".memdir") / "MEMORY.md.history"
NO_CAPS = Caps(max_lines=10**6, max_bytes=10**9)  # what a folder needs, with nothing left out


# --- the reference reader: Claude Code's frontmatter rule -------------------------------------
#
# From Claude Code's bundled JS (parseFrontmatter / quoteProblematicValues):
#   FRONTMATTER = /^---\s*\n([\s\S]*?)---\s*\n?/
#   try YAML(block); on failure: each line matching /^([a-zA-Z_-]+):\s+(.+)$/ whose value is not
#   wrapped in matching quotes and is not a `[...]` that parses as a list, and that matches
#   /[{}[\]*&#!|>%@`]|: /, becomes `key: "value"` (\ -> \\, " -> \"); then leading tabs of every line
#   become two spaces each; YAML again. A result that is not a mapping reads as no fields.
# JS character classes differ from Python's, so they are spelled out: JS `\s` and JS `.`.

JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
JS_LINE_BREAKS = "\n\r\u2028\u2029"  # what JS `.` does not match, and where JS `^` (with /m) matches after
FRONTMATTER = re.compile(rf"---[{JS_SPACE}]*\n([\s\S]*?)---[{JS_SPACE}]*\n?")  # used with .match: JS `^`
KEY_VALUE = re.compile(rf"([a-zA-Z_-]+):[{JS_SPACE}]+([^{JS_LINE_BREAKS}]+)")  # used with .fullmatch: `^...$`
YAML_SPECIAL = re.compile(r"[{}[\]*&#!|>%@`]|: ")
LEADING_TABS = re.compile(rf"(?:^|(?<=[{JS_LINE_BREAKS}]))\t+")  # JS /^\t+/gm


def quote_problematic_values(block: str) -> str:
    """The frontmatter as Claude Code retries it after a YAML error."""
    out = []
    for line in block.split("\n"):
        found = KEY_VALUE.fullmatch(line)
        if found:
            key, value = found.groups()
            quoted = (value.startswith('"') and value.endswith('"')) or (value.startswith("'") and value.endswith("'"))
            if not quoted and not _is_flow_list(value) and YAML_SPECIAL.search(value):
                escaped = value.replace("\\", "\\\\").replace('"', '\\"')
                out.append(f'{key}: "{escaped}"')
                continue
        out.append(line)
    return LEADING_TABS.sub(lambda tabs: "  " * len(tabs.group()), "\n".join(out))


def _is_flow_list(value: str) -> bool:
    if not (value.startswith("[") and value.endswith("]")):
        return False
    try:
        return isinstance(yaml.safe_load(value), list)
    except yaml.YAMLError:
        return False


def claude_code_fields(text: str) -> dict[str, Any] | None:
    """The frontmatter fields Claude Code reads from a file's text; None when it reads none (no
    frontmatter block, or YAML that fails twice)."""
    block = FRONTMATTER.match(text)
    if block is None:
        return None
    for attempt in (block.group(1), quote_problematic_values(block.group(1))):
        try:
            data = yaml.safe_load(attempt)
        except yaml.YAMLError:
            continue
        return data if isinstance(data, dict) else {}
    return None


def one_line(value: object) -> str:
    return " ".join(str(value).split()) if value is not None else ""


def memory_type(fields: dict[str, Any]) -> str | None:
    """`type`, at the top level or else under `metadata:` (memdir.core.model.Memory.raw_type)."""
    value = fields.get("type")
    if value is None and isinstance(fields.get("metadata"), dict):
        value = fields["metadata"].get("type")
    return one_line(value).lower() if value is not None else None


def _as_date(value: object) -> dt.date | None:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value.strip()[:10])
        except ValueError:
            return None
    return None


def exclusion(fields: dict[str, Any]) -> str | None:
    """Why a typed memory is never indexed (DESIGN.md; memdir.core.model.exclusion), or None."""
    status = one_line(fields.get("status")).lower()
    if status in ("superseded", "quarantined", "archived"):
        return status
    if fields.get("superseded_by"):
        return "superseded"
    expires = _as_date(fields.get("expires"))
    if expires is not None and expires <= TODAY:
        return "expired"
    return None


def candidate_files(root: Path) -> Iterator[tuple[str, Path]]:
    """The `*.md` files memdir's store lists (store.list_files): not MEMORY.md, nothing under a
    dot-folder such as .memdir/ or .archive/, regular files only (symlinks are not followed)."""
    for path in sorted(root.rglob("*.md")):
        rel = path.relative_to(root)
        if path.name == "MEMORY.md" or any(part.startswith(".") for part in rel.parts):
            continue
        if path.is_symlink() or not path.is_file():
            continue
        yield rel.as_posix(), path


@dataclass(frozen=True)
class Reading:
    """What the reference reader makes of one folder."""

    typed: dict[str, dict[str, Any]]  # memories Claude Code reads with a valid type, by path
    excluded: dict[str, str]  # of those, the ones never indexed, with why

    @property
    def indexable(self) -> set[str]:
        return set(self.typed) - set(self.excluded)


def read_folder(root: Path) -> Reading:
    typed: dict[str, dict[str, Any]] = {}
    for rel, path in candidate_files(root):
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            continue  # not text; memdir reports it unreadable, and no corpus file is
        fields = claude_code_fields(text)
        if fields is not None and memory_type(fields) in TYPES:
            typed[rel] = fields
    excluded = {rel: why for rel, fields in typed.items() if (why := exclusion(fields)) is not None}
    return Reading(typed, excluded)


# --- MEMORY.md as a reader sees it ---------------------------------------------------------------


def all_files(root: Path) -> dict[str, str]:
    """Every file in the folder, by case-folded path: links resolve case-insensitively (issue #3)."""
    return {p.relative_to(root).as_posix().casefold(): p.relative_to(root).as_posix() for p in root.rglob("*")}


def resolve(target: str | None, files: dict[str, str]) -> str | None:
    """The folder file a normalised link target opens, if any."""
    return None if target is None else files.get(target.casefold())


def outside_fences(text: str) -> Iterator[tuple[int, str]]:
    """(0-based number, line) of each line outside fenced code, fence lines themselves excluded."""
    in_fence = False
    for number, line in enumerate(split_lines(text)):
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if not in_fence:
            yield number, line


def dead_entries(text: str, root: Path) -> list[str]:
    """Entry lines (list items opening with a link) that link a file inside the folder that does
    not exist. Links that leave the folder (`../x.md`) are not judged: their file is not copied."""
    files = all_files(root)
    dead = []
    for _, line in outside_fences(text):
        target = entry_target(line)
        if target is not None and not target.startswith("../") and resolve(target, files) is None:
            dead.append(line)
    return dead


def link_counts(text: str, root: Path) -> Counter[str]:
    """How many lines of MEMORY.md link each folder file (any link, in prose too)."""
    files = all_files(root)
    lines_linking: set[tuple[int, str]] = set()
    for link in find_links(text):
        path = resolve(link.target, files)
        if path is not None:
            lines_linking.add((link.line, path))
    return Counter(path for _, path in lines_linking)


def hand_written(text: str, root: Path, reading: Reading, *, blank: bool = False) -> list[str]:
    """The lines of MEMORY.md a person wrote: all but entry lines for memories, memdir's own note and
    (unless `blank`) blank lines, which carry nothing to lose. Entry lines that link a missing file are
    not counted either: dropping them is allowed (issue #2); the history keeps them (checked apart)."""
    entries = {number for number, line in outside_fences(text) if entry_target(line) is not None}
    files = all_files(root)
    kept = []
    for number, line in enumerate(split_lines(text)):
        if (not blank and not line.strip()) or line.startswith("<!-- memdir:"):
            continue
        if number in entries:
            target = entry_target(line)
            assert target is not None
            path = resolve(target, files)
            if path in reading.typed or (path is None and not target.startswith("../")):
                continue
        kept.append(line)
    return kept


def generated_lines(text: str, root: Path, paths: set[str]) -> dict[int, str]:
    """The entry lines of MEMORY.md for the memories at `paths` (memdir writes them), by 1-based number."""
    files = all_files(root)
    return {number + 1: line for number, line in outside_fences(text) if resolve(entry_target(line), files) in paths}


# --- running memdir -------------------------------------------------------------------------------


def copy_folder(name: str, base: Path) -> Path:
    """A writable copy of a corpus folder, without any .memdir/ state found in it."""
    root = base / name
    shutil.copytree(CORPUS / name, root, ignore=shutil.ignore_patterns(".memdir"), copy_function=shutil.copyfile)
    for folder, _, _ in os.walk(root):
        os.chmod(folder, 0o755)  # copytree copies the corpus' read-only folder modes
    return root


def read_index(root: Path) -> str:
    path = root / "MEMORY.md"
    return path.read_bytes().decode("utf-8") if path.exists() else ""


def cli_json(root: Path, *args: str) -> dict[str, Any]:
    result = invoke_memdir("--dir", str(root), *args, "--format", "json", cwd=root)
    assert result.exit_code in (0, 1), (args, result.exit_code, result.output)
    payload: dict[str, Any] = json.loads(result.stdout)
    return payload


@dataclass
class Run:
    """One folder indexed with the default caps: library twice, then the CLI, then lint."""

    root: Path
    reading: Reading
    original: str
    first: IndexWrite
    text: str  # MEMORY.md after the first library run
    second: IndexWrite
    second_text: str
    cli_index: dict[str, Any]
    cli_text: str
    lint: dict[str, Any]

    @property
    def left_out(self) -> set[str]:
        return {left.memory.path for left in self.first.result.left_out}

    def findings(self, code: str) -> list[dict[str, Any]]:
        return [f for f in self.lint["findings"] if f["code"] == code]


def run_folder(name: str, base: Path) -> Run:
    root = copy_folder(name, base)
    reading = read_folder(root)
    original = read_index(root)
    first = MemoryDir(root, today=TODAY).write_index()
    text = read_index(root)
    second = MemoryDir(root, today=TODAY).write_index()
    second_text = read_index(root)
    cli_index = cli_json(root, "index")
    cli_text = read_index(root)
    lint = cli_json(root, "lint", "--select", "I", "--extend-select", "I006")
    return Run(root, reading, original, first, text, second, second_text, cli_index, cli_text, lint)


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Each folder run once (on its own copy), shared by the checks of the default-caps scenario."""
    runs: dict[str, Run] = {}

    def get(name: str) -> Run:
        if name not in runs:
            runs[name] = run_folder(name, tmp_path_factory.mktemp("real"))
        return runs[name]

    return get


# --- the default caps -------------------------------------------------------------------------------


@folders
def test_memdir_reads_a_memory_exactly_when_claude_code_does(name: str, indexed: Any) -> None:
    run = indexed(name)
    result = run.first.result
    indexed_or_left = {m.path for m in result.entries} | {m.path for m in result.linked} | run.left_out
    excluded = {e.memory.path: e.reason for e in result.excluded}
    unreadable = {p.path: p.message for p in run.first.problems}
    assert indexed_or_left == run.reading.indexable, {
        "Claude Code reads, memdir does not index or report": {
            p: unreadable.get(p, "loaded, not indexed") for p in sorted(run.reading.indexable - indexed_or_left)
        },
        "memdir indexes, Claude Code does not read as a memory": sorted(indexed_or_left - run.reading.indexable),
    }
    assert set(excluded) == set(run.reading.excluded), (excluded, run.reading.excluded)


@folders
def test_every_memory_is_linked_or_left_out(name: str, indexed: Any) -> None:
    run = indexed(name)
    linked = set(link_counts(run.text, run.root))
    missing = sorted(run.reading.indexable - linked - run.left_out)
    assert not missing, f"{len(missing)} memories neither linked from MEMORY.md nor left out: {missing[:5]}"


@folders
def test_memory_linked_in_prose_gets_no_second_entry(name: str, indexed: Any) -> None:
    """One definition of "listed": a memory linked anywhere in MEMORY.md is listed already."""
    run = indexed(name)
    before, after = link_counts(run.original, run.root), link_counts(run.text, run.root)
    doubled = {p: (before[p], after[p]) for p in run.reading.typed if before[p] and after[p] > before[p]}
    assert not doubled, f"memories linked before and given another line (lines before, after): {doubled}"


@folders
def test_dead_entries_go_before_any_memory_is_left_out(name: str, indexed: Any) -> None:
    run = indexed(name)
    if not run.left_out:
        return  # caps do not bind: a dead line a person wrote may stay (lint I002 reports it)
    dead = dead_entries(run.text, run.root)
    assert not dead, (
        f"{len(run.left_out)} memories left out while {len(dead)} entry lines link missing files, e.g. {dead[0]!r}"
    )


@folders
def test_generated_entry_lines_are_at_most_150_characters(name: str, indexed: Any) -> None:
    run = indexed(name)
    memories = {m.path: m for m in run.first.result.entries}
    files = all_files(run.root)
    too_long, badly_cut = [], []
    for line in generated_lines(run.text, run.root, set(memories)).values():
        memory = memories[resolve(entry_target(line), files) or ""]
        if len(line) > ENTRY_MAX:
            too_long.append(f"{len(line)}: {line}")
        elif memory.description and not line.endswith(memory.description):
            problem = shortening_problem(line, memory.description)
            if problem:
                badly_cut.append(f"{problem}: {line}")
    assert not too_long, f"{len(too_long)} generated entry lines over {ENTRY_MAX} characters, e.g. {too_long[0]}"
    assert not badly_cut, badly_cut[:3]


def shortening_problem(line: str, description: str) -> str | None:
    """What is wrong with a line that shows `description` shortened, or None: it must end in an
    ellipsis after a prefix of the description, cut at a space when that prefix has one (text
    without spaces, such as Chinese, has no word boundary to cut at)."""
    for ellipsis in ("…", "..."):
        if line.endswith(ellipsis):
            head = line.removesuffix(ellipsis).rstrip()
            break
    else:
        return "shortened without an ellipsis"
    shown = [head[i + 3 :] for i in range(len(head)) if head.startswith(" — ", i)]
    prefix = next((s for s in shown if s and description.startswith(s)), None)
    if prefix is None:
        return "the shown text is not the start of the description"
    rest = description[len(prefix) :]
    # At a space; punctuation that ended the last word may be dropped before the ellipsis.
    # Between two Chinese or Japanese characters is a boundary too: such text has no spaces.
    wide = any(unicodedata.east_asian_width(c) in "WF" for c in (prefix[-1:] + rest[:1]))
    if " " in prefix and not (rest[:1].isspace() or re.match(r"[,;:.\-–—]+\s", rest) or wide):
        return "cut inside a word"
    return None


@folders
def test_lint_after_index_finds_nothing_stale_unindexed_or_long(name: str, indexed: Any) -> None:
    run = indexed(name)
    stale = run.findings("I001")
    # Only lines memdir wrote: a long line a person wrote (an entry for a file that is no memory) stays.
    generated = generated_lines(run.cli_text, run.root, {m.path for m in run.first.result.entries})
    long_entries = [f["line"] for f in run.findings("I006") if f["line"] in generated]
    unindexed = {f["path"] for f in run.findings("I003")} - run.left_out
    assert not stale, stale
    assert not long_entries, f"I006 on lines {long_entries} of MEMORY.md right after `memdir index`"
    assert not unindexed, f"I003 for memories that were not left out for the caps: {sorted(unindexed)}"


@folders
def test_index_twice_is_byte_identical(name: str, indexed: Any) -> None:
    run = indexed(name)
    assert not run.second.changed and run.second_text == run.text, "the second library run rewrote MEMORY.md"
    assert not run.cli_index["changed"] and run.cli_text == run.text, "`memdir index` after it rewrote MEMORY.md"


@folders
def test_no_line_a_person_wrote_is_lost(name: str, indexed: Any) -> None:
    run = indexed(name)
    history_path = run.root / HISTORY
    history = split_lines(history_path.read_text("utf-8")) if history_path.exists() else []
    kept = Counter(split_lines(run.cli_text)) + Counter(history)
    wanted = Counter(hand_written(run.original, run.root, run.reading))
    lost = wanted - kept
    assert not lost, f"{sum(lost.values())} hand-written lines in neither MEMORY.md nor its history: {list(lost)[:3]}"
    # Dead entry lines may leave MEMORY.md, never without a trace.
    gone = Counter(dead_entries(run.original, run.root)) - kept
    assert not gone, f"dead entry lines dropped without a trace in the history: {list(gone)[:3]}"
    # `index` writes MEMORY.md and its own state, never a file a person wrote.
    owned = {"MEMORY.md"}
    files = (p.relative_to(run.root).as_posix() for p in run.root.rglob("*") if p.is_file())
    changed = [
        rel
        for rel in files
        if rel not in owned and not rel.startswith(".memdir/")
        and (run.root / rel).read_bytes() != (CORPUS / name / rel).read_bytes()
    ]  # fmt: skip
    assert not changed, f"index changed files it does not own: {changed}"


# --- caps that bind ---------------------------------------------------------------------------------


def binding_caps(root: Path, which: str) -> tuple[Caps, int] | None:
    """Caps smaller than the folder needs: room for every live line but a third of the entries
    (dead entry lines must make room first). Also the number of indexable memories; None when there
    is no memory to leave out."""
    full = MemoryDir(root, today=TODAY, caps=NO_CAPS).plan_index()
    entries = [render_entry(m) for m in full.entries]
    if not entries:
        return None
    dead = dead_entries(full.text, root)
    cut = entries[len(entries) - max(1, len(entries) // 3) :]
    if which == "lines":
        return Caps(max_lines=full.lines - len(dead) - len(cut), max_bytes=NO_CAPS.max_bytes), len(entries)
    size = sum(len(line.encode()) + 1 for line in [*dead, *cut])
    return Caps(max_lines=NO_CAPS.max_lines, max_bytes=full.bytes - size), len(entries)


@folders
@pytest.mark.parametrize("which", ["lines", "bytes"])
def test_binding_caps_hold_and_dead_entries_go_first(name: str, which: str, tmp_path: Path) -> None:
    root = copy_folder(name, tmp_path)
    planned = binding_caps(root, which)
    if planned is None:
        pytest.skip("no memory to leave out")
    caps, _ = planned
    reading = read_folder(root)
    original = read_index(root)
    write = MemoryDir(root, today=TODAY, caps=caps).write_index()
    result, text = write.result, read_index(root)
    if result.refused is not None:
        # Refusing is only right when what memdir must keep (blank lines too) cannot fit by itself.
        live = hand_written(original, root, reading, blank=True)
        live_bytes = sum(len(line.encode()) + 1 for line in live)
        assert len(live) > caps.max_lines or live_bytes > caps.max_bytes, (
            f"refused although the live hand-written text ({len(live)} lines, {live_bytes} bytes) fits {caps}: "
            f"{result.refused}"
        )
        return
    # The caps hold.
    assert len(split_lines(text)) <= caps.max_lines, (len(split_lines(text)), caps)
    assert len(text.encode()) <= caps.max_bytes, (len(text.encode()), caps)
    # Dead links go first.
    left_out = {left.memory.path for left in result.left_out}
    dead = dead_entries(text, root)
    assert not (left_out and dead), (
        f"{len(left_out)} memories left out while {len(dead)} entry lines link missing files, e.g. {dead[0]!r}"
    )
    # Every memory is linked or left out.
    missing = sorted(reading.indexable - set(link_counts(text, root)) - left_out)
    assert not missing, f"neither linked nor left out: {missing[:5]}"
    # Greedy packing: nothing left out would still fit in the room that is left. An entry may need
    # a blank line before it (a list cannot start right after a paragraph), so two lines of room.
    lines, size = len(split_lines(text)), len(text.encode())
    would_fit = [
        left.memory.path
        for left in result.left_out
        if lines + 2 <= caps.max_lines and size + len(render_entry(left.memory).encode()) + 2 <= caps.max_bytes
    ]
    assert not would_fit, (
        f"left out although their line still fits ({lines} lines, {size} bytes of {caps}): {would_fit[:5]}"
    )


# --- a renamed memory ---------------------------------------------------------------------------


@folders
def test_renamed_memory_takes_over_its_old_line(name: str, tmp_path: Path) -> None:
    """Someone renames a memory file (same `name`, new path): its entry keeps its place."""
    root = copy_folder(name, tmp_path)
    reading = read_folder(root)
    first = MemoryDir(root, today=TODAY).write_index().result
    before = split_lines(read_index(root))
    # A memory with a `name` no other memory has, listed on its own entry line.
    names = Counter(one_line(fields.get("name")) for fields in reading.typed.values())
    listed = {entry_target(line) for line in before}
    movable = [
        m.path
        for m in first.entries
        if (title := one_line(reading.typed[m.path].get("name"))) and names[title] == 1 and m.path in listed
    ]
    if first.left_out or first.bytes > MAX_BYTES - 1_000 or not movable:
        pytest.skip("no memory to rename with room to spare in the index")
    moved = movable[0]
    old = root / moved
    new = old.with_name(f"{old.stem}-renamed.md")
    old.rename(new)
    new_path = new.relative_to(root).as_posix()

    MemoryDir(root, today=TODAY).write_index()
    after = split_lines(read_index(root))
    at = next(i for i, line in enumerate(before) if entry_target(line) == moved)
    assert len(after) == len(before), f"{moved} -> {new_path}: {len(before)} lines became {len(after)}"
    assert entry_target(after[at]) == new_path, f"line {at + 1} is now {after[at]!r}, not the renamed memory"
    changed = [i + 1 for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b and i != at]
    assert not changed, f"other lines changed too: {changed}"

"""The real-world test: memdir against 39 memory folders people actually wrote.

The folders live in the shared corpus beside the repository (`../shared/corpus/real/`), which the
project must not need at run time, so the whole module is skipped when it is absent. Every folder
is copied to a temporary directory first; the corpus itself is never written.

For each folder the real CLI runs in-process (`index --format json` and `lint --format json`, on
two copies; test_injected_broken_frontmatter_never_crashes runs them as processes), and the outcome
is checked against what this module works out on its own: which files are typed memories
(frontmatter parsed here with PyYAML), which have broken frontmatter, which MEMORY.md lines are
index entries and which were written by hand. memdir's own answers (`left_out`,
`excluded`, `refused`) are only trusted as far as they can be cross-checked.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import posixpath
import re
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
import yaml
from conftest import invoke_memdir

import memdir
from memdir import Caps

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "real"
if not CORPUS.is_dir():
    pytest.skip(f"real-world corpus not found at {CORPUS}", allow_module_level=True)

FOLDERS = sorted(p.name for p in CORPUS.iterdir() if p.is_dir())
TODAY = "2026-11-22"
TODAY_DATE = dt.date.fromisoformat(TODAY)
TYPES = {"user", "feedback", "project", "reference"}
MAX_LINES = 200
MAX_BYTES = 25_000
SUBPROCESS_TIMEOUT = 120


def test_corpus_is_complete() -> None:
    assert len(FOLDERS) == 39, FOLDERS


# --- the truth, worked out without memdir ------------------------------------------------------

_OPEN = re.compile(r"\A\ufeff?---[ \t]*\r?\n")


@dataclass(frozen=True)
class FileTruth:
    path: str  # POSIX, relative to the folder
    kind: str  # typed | untyped | no-frontmatter | broken
    data: dict[str, Any] = field(default_factory=dict, compare=False)
    lenient: bool = False  # not strict YAML; read only by Claude Code's retry


# Claude Code's second reading when YAML fails (quoteProblematicValues in its 2.1.197 bundle), written
# out again here from its JavaScript rather than taken from memdir: `\s` and `.` are JavaScript's.
_CC_LINE = re.compile(
    "([a-zA-Z_-]+):[\t\n\v\f\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+([^\n\r\u2028\u2029]+)"
)
_CC_SPECIAL = re.compile(r"[{}\[\]*&#!|>%@`]|: ")


def _is_list(value: str) -> bool:
    try:
        return isinstance(yaml.safe_load(value), list)
    except yaml.YAMLError:
        return False


def claude_code_retry(block: str) -> str:
    lines = block.split("\n")
    for i, line in enumerate(lines):
        found = _CC_LINE.fullmatch(line)
        if not found:
            continue
        key, value = found.groups()
        if (value[0] == value[-1] and value[0] in "\"'") or (value[0] + value[-1] == "[]" and _is_list(value)):
            continue
        if _CC_SPECIAL.search(value):
            escaped = value.replace("\\", "\\\\").replace('"', '\\"')
            lines[i] = f'{key}: "{escaped}"'
    retried = "\n".join(lines)
    return re.sub("(?:^|(?<=[\r\u2028\u2029]))\t+", lambda tabs: "  " * len(tabs[0]), retried, flags=re.M)


def read_frontmatter(text: str) -> tuple[str, dict[str, Any]]:
    """('none' | 'broken' | 'ok' | 'lenient', fields). A block opens on line 1 and closes at `---` or
    `...`; 'lenient' when only Claude Code's retry reads it."""
    opened = _OPEN.match(text)
    if not opened:
        return "none", {}
    block: list[str] = []
    for line in text[opened.end() :].splitlines(keepends=True):
        if line.rstrip("\r\n").rstrip(" \t") in ("---", "..."):
            kind = "ok"
            try:
                data = yaml.safe_load("".join(block))
            except yaml.YAMLError:
                kind = "lenient"
                try:
                    data = yaml.safe_load(claude_code_retry("".join(block)))
                except yaml.YAMLError:
                    return "broken", {}
                if not isinstance(data, dict):
                    return "broken", {}
            if data is None:
                data = {}
            return (kind, data) if isinstance(data, dict) else ("broken", {})
        block.append(line)
    return "broken", {}  # never closed


def memory_type(data: dict[str, Any]) -> str | None:
    value = data.get("type")
    if value is None and isinstance(data.get("metadata"), dict):
        value = data["metadata"].get("type")
    return value.strip().lower() if isinstance(value, str) else None


def survey(folder: Path) -> dict[str, FileTruth]:
    """Every file memdir should consider: `*.md` outside dot-folders, except MEMORY.md indexes."""
    found: dict[str, FileTruth] = {}
    for path in sorted(folder.rglob("*.md")):
        rel = path.relative_to(folder)
        if path.name == "MEMORY.md" or any(part.startswith(".") for part in rel.parts):
            continue
        if not path.is_file() or path.is_symlink():
            continue
        kind, data = read_frontmatter(path.read_bytes().decode("utf-8"))
        if kind == "none":
            truth = FileTruth(rel.as_posix(), "no-frontmatter")
        elif kind == "broken":
            truth = FileTruth(rel.as_posix(), "broken")
        else:
            typed = memory_type(data) in TYPES
            truth = FileTruth(rel.as_posix(), "typed" if typed else "untyped", data, kind == "lenient")
        found[truth.path] = truth
    return found


def policy_excluded(data: dict[str, Any]) -> bool:
    """DESIGN.md: superseded, expired, quarantined and archived memories are never indexed."""
    status = data.get("status")
    if isinstance(status, str) and status.strip().lower() in {"superseded", "quarantined", "archived"}:
        return True
    if data.get("superseded_by"):
        return True
    expires = data.get("expires")
    if isinstance(expires, dt.datetime):
        expires = expires.date()
    if isinstance(expires, str):
        with contextlib.suppress(ValueError):
            expires = dt.date.fromisoformat(expires.strip()[:10])
    return isinstance(expires, dt.date) and expires <= TODAY_DATE


# A list item ("-", "*", "+", "1.", "1)") whose first thing is a link, optionally in bold.
_ENTRY = re.compile(
    r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+(?:\*\*|__)?"
    r"\[(?:\\.|[^\]\\])*\]\((?P<target><[^>]*>|[^\s)]+)(?:[ \t]+\"[^\"]*\")?\)"
)


def lines_of(text: str) -> list[str]:
    """Lines split on LF only (a CR before it dropped), as a reader of the file sees them."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def entry_target(line: str) -> str | None:
    """The folder-relative target of an index entry line, None if the line is not one."""
    found = _ENTRY.match(line)
    if not found:
        return None
    target = found.group("target")
    if target.startswith("<"):
        target = target[1:-1]
    target = unquote(target.split("#", 1)[0]).replace("\\", "/")
    if not target or re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", target) or target.startswith("/"):
        return None
    return posixpath.normpath(target)


_ANY_LINK = re.compile(r"\]\((<[^>\n]*>|[^\s()]+)")


def listed_paths(text: str, typed: Iterable[str]) -> set[str]:
    """The memories some link in `text` reaches, in a list entry or a sentence; a link differing
    only in letter case counts (it works where people's file systems ignore case)."""
    by_fold = {path.casefold(): path for path in typed}
    found = set()
    for raw in _ANY_LINK.findall(text):
        target = entry_target(f"- [x]({raw})")
        if target is not None and target.casefold() in by_fold:
            found.add(by_fold[target.casefold()])
    return found


def is_subsequence(needles: list[str], haystack: list[str]) -> tuple[bool, str | None]:
    """Whether `needles` occur in `haystack` in order; else the first needle not found."""
    it = iter(haystack)
    for needle in needles:
        if not any(line == needle for line in it):
            return False, needle
    return True, None


# --- running memdir ----------------------------------------------------------------------------


@dataclass
class Run:
    name: str
    original: Path  # the corpus folder (read only)
    copy: Path  # the folder `index` ran on
    truth: dict[str, FileTruth]
    before: bytes | None  # MEMORY.md before
    after: bytes | None  # MEMORY.md after `index`
    index_code: int
    index_err: str
    index_json: dict[str, Any]
    lint_code: int
    lint_err: str
    lint_out: str
    check_code: int  # `index --check` right after `index`
    check_err: str

    @property
    def typed(self) -> dict[str, FileTruth]:
        return {p: t for p, t in self.truth.items() if t.kind == "typed"}

    @property
    def left_out(self) -> set[str]:
        return {item["path"] for item in self.index_json["left_out"]}

    @property
    def excluded(self) -> set[str]:
        return {item["path"] for item in self.index_json["excluded"]}

    @property
    def refused(self) -> bool:
        return self.index_json["refused"] is not None


def cli_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("MEMDIR_DIR", "MEMDIR_DEBUG", "CLAUDE_CONFIG_DIR")}
    env.update(HOME=str(home), MEMDIR_TODAY=TODAY, NO_COLOR="1", PYTHONIOENCODING="utf-8")
    return env


def memdir_cmd(folder: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "memdir", "--dir", str(folder), *args]


def run_folder(name: str, base: Path) -> Run:
    original = CORPUS / name
    index_copy, lint_copy, home = base / "index" / name, base / "lint" / name, base / "home"
    shutil.copytree(original, index_copy)
    shutil.copytree(original, lint_copy)
    home.mkdir()
    # Over the test's own environment (conftest's isolated_env): a home of the folder's own.
    env: dict[str, str | None] = {"HOME": str(home), "CLAUDE_CONFIG_DIR": None, "MEMDIR_TODAY": TODAY, "NO_COLOR": "1"}
    before = (index_copy / "MEMORY.md").read_bytes() if (index_copy / "MEMORY.md").exists() else None
    # lint sees the folder as its author left it, on its own copy; `index` and then `index --check`
    # run on the other copy.
    lint_code, lint_out, lint_err = _memdir_run(lint_copy, env, base, name, "lint", "--format", "json")
    index_code, index_out, index_err = _memdir_run(index_copy, env, base, name, "index", "--format", "json")
    after = (index_copy / "MEMORY.md").read_bytes() if (index_copy / "MEMORY.md").exists() else None
    check_code, _, check_err = _memdir_run(index_copy, env, base, name, "index", "--check")
    try:
        index_json = json.loads(index_out)
    except json.JSONDecodeError:
        pytest.fail(f"index --format json printed no JSON (exit {index_code}):\n{index_out}\n{index_err}")
    return Run(
        name, original, index_copy, survey(original), before, after,
        index_code, index_err, index_json, lint_code, lint_err, lint_out, check_code, check_err,
    )  # fmt: skip


def _memdir_run(folder: Path, env: dict[str, str | None], cwd: Path, name: str, *args: str) -> tuple[int, str, str]:
    """`memdir --dir FOLDER ARGS`, in-process."""
    done = invoke_memdir("--dir", str(folder), *args, env=env, cwd=cwd)
    assert done.exception is None or isinstance(done.exception, SystemExit), (name, args, done.exc_info)
    return done.exit_code, done.stdout, done.stderr


RunFolder = Callable[[str], Run]


@pytest.fixture(scope="module")
def corpus_run(tmp_path_factory: pytest.TempPathFactory) -> RunFolder:
    """Run each folder once per test worker, on first use, and share the outcome between the checks below."""
    cache: dict[str, Run] = {}

    def get(name: str) -> Run:
        if name not in cache:
            cache[name] = run_folder(name, tmp_path_factory.mktemp(f"corpus-{name[:40]}"))
        return cache[name]

    return get


folders = pytest.mark.parametrize("name", FOLDERS)
# The checks of what `memdir index`, `lint` and `index --check` did (corpus_run).
ran = pytest.mark.parametrize("name", FOLDERS)


# --- the checks --------------------------------------------------------------------------------


@ran
def test_index_and_lint_exit_cleanly(name: str, corpus_run: RunFolder) -> None:
    run = corpus_run(name)
    for command, code, err in (("index", run.index_code, run.index_err), ("lint", run.lint_code, run.lint_err)):
        assert code in (0, 1), f"{command} exited {code}: {err}"
        assert "Traceback" not in err, f"{command}: {err}"
        assert "internal error" not in err, f"{command}: {err}"
    assert run.index_code == (1 if run.refused else 0), run.index_json


@ran
def test_lint_json_matches_schema(name: str, corpus_run: RunFolder) -> None:
    run = corpus_run(name)
    report = json.loads(run.lint_out)
    assert set(report) == {"folder", "findings", "summary"}
    assert isinstance(report["folder"], str) and Path(report["folder"]).name == name
    keys = {"code", "name", "severity", "path", "line", "message", "fix"}
    for finding in report["findings"]:
        assert set(finding) == keys, finding
        fix = finding["fix"]
        if fix is not None:
            assert set(fix) == {"applicability", "description"} and fix["applicability"] in ("safe", "unsafe")
        assert re.fullmatch(r"[A-Z]\d{3}", finding["code"]), finding
        assert re.fullmatch(r"[a-z]+(-[a-z]+)*", finding["name"]), finding
        assert finding["severity"] in ("error", "warning", "info"), finding
        assert isinstance(finding["path"], str) and finding["path"], finding
        assert not Path(finding["path"]).is_absolute(), finding
        assert finding["line"] is None or (isinstance(finding["line"], int) and finding["line"] >= 1), finding
        assert isinstance(finding["message"], str) and finding["message"].strip(), finding
        assert finding["path"] == "MEMORY.md" or finding["path"] in run.truth, finding
    summary = report["summary"]
    severities = Counter(f["severity"] for f in report["findings"])
    assert summary["findings"] == len(report["findings"])
    assert (summary["errors"], summary["warnings"], summary["info"]) == (
        severities["error"], severities["warning"], severities["info"],
    )  # fmt: skip
    assert summary["by_code"] == dict(Counter(f["code"] for f in report["findings"]))
    assert summary["memories"] == sum(1 for t in run.truth.values() if t.kind in ("typed", "untyped"))
    # Exit code follows the findings: errors fail the run, warnings and info do not.
    assert run.lint_code == (1 if severities["error"] else 0)


@ran
def test_broken_frontmatter_is_reported_by_path(name: str, corpus_run: RunFolder) -> None:
    run = corpus_run(name)
    report = json.loads(run.lint_out)
    broken = {p for p, t in run.truth.items() if t.kind == "broken"}
    f002 = {f["path"] for f in report["findings"] if f["code"] == "F002"}
    assert f002 == broken
    # ... and none of them turns up in the index run as a memory.
    assert not (run.left_out | run.excluded) & broken


@ran
def test_what_only_claude_codes_retry_reads_is_a_memory_and_f013(name: str, corpus_run: RunFolder) -> None:
    """A file Claude Code reads after quoting values is read by memdir too (it counts among the memories
    and is indexed when typed, test_every_typed_memory_is_accounted_for), and F013 names it."""
    run = corpus_run(name)
    findings = json.loads(run.lint_out)["findings"]
    lenient = {p for p, t in run.truth.items() if t.lenient}
    assert {f["path"] for f in findings if f["code"] == "F013"} == lenient
    assert not {f["path"] for f in findings if f["code"] in ("F001", "F002", "F003")} & lenient


@ran
def test_lint_names_every_file_that_is_not_a_memory(name: str, corpus_run: RunFolder) -> None:
    """F001 for files without frontmatter, F006/F007 for frontmatter without a valid type."""
    run = corpus_run(name)
    findings = json.loads(run.lint_out)["findings"]
    by_code = {code: {f["path"] for f in findings if f["code"] == code} for code in ("F001", "F006", "F007")}
    assert by_code["F001"] == {p for p, t in run.truth.items() if t.kind == "no-frontmatter"}
    assert by_code["F006"] | by_code["F007"] == {p for p, t in run.truth.items() if t.kind == "untyped"}
    assert not by_code["F006"] & by_code["F007"]
    # Before `index`, lint predicts what index reports: I005 names exactly the memories left out.
    assert {f["path"] for f in findings if f["code"] == "I005"} == run.left_out


@ran
def test_no_hand_written_line_disappears(name: str, corpus_run: RunFolder) -> None:
    run = corpus_run(name)
    if run.refused:
        assert run.after == run.before, "index refused but MEMORY.md changed"
        return
    assert run.after is not None
    before = lines_of((run.before or b"").decode("utf-8"))
    after = lines_of(run.after.decode("utf-8"))
    typed = run.typed
    # An entry whose file is gone goes first when the caps bind; it is kept in .memdir's history.
    dropped = run.index_json["dead_dropped"]
    history = run.copy / ".memdir" / "MEMORY.md.history"
    assert all(line in history.read_text() for line in dropped) if dropped else True
    hand_written = []
    for line in before:
        target = entry_target(line)
        if line in dropped:
            continue
        if target is not None and target in typed:
            # An entry memdir manages: its memory must be accounted for.
            assert target in {entry_target(a) for a in after} | run.left_out | run.excluded, (
                f"the entry {line!r} is gone and {target} is neither indexed nor reported"
            )
        else:
            hand_written.append(line)
    kept, missing = is_subsequence(hand_written, after)
    assert kept, f"hand-written line lost or moved out of order: {missing!r}"


@ran
def test_every_typed_memory_is_accounted_for(name: str, corpus_run: RunFolder) -> None:
    run = corpus_run(name)
    typed = run.typed
    assert run.left_out <= set(typed), run.left_out - set(typed)
    assert run.excluded <= set(typed), run.excluded - set(typed)
    assert run.excluded == {p for p, t in typed.items() if policy_excluded(t.data)}
    assert not run.left_out & run.excluded
    if run.refused:  # nothing written: every indexable memory is reported as left out
        assert run.left_out == set(typed) - run.excluded
        return
    assert run.after is not None
    # A second entry line for the same file is not memdir's: it is kept verbatim as hand-written
    # text. Only the other entry lines count as what memdir indexed.
    before = lines_of((run.before or b"").decode("utf-8"))
    first_seen: set[str | None] = set()
    repeats = set()
    for line in before:
        target = entry_target(line)
        if target in first_seen:
            repeats.add(line)
        first_seen.add(target)
    after = [line for line in lines_of(run.after.decode("utf-8")) if line not in repeats]
    indexed = {t for t in map(entry_target, after) if t in typed}
    # A memory linked inside a sentence is listed too: it gets no entry line of its own.
    linked = set(run.index_json["linked_in_text"])
    assert linked <= listed_paths(run.after.decode("utf-8"), typed)
    assert indexed | linked == set(typed) - run.left_out - run.excluded, {
        "not indexed, not reported": sorted(set(typed) - run.left_out - run.excluded - indexed - linked),
        "indexed although reported": sorted(indexed & (run.left_out | run.excluded)),
    }
    assert run.index_json["entries"] == len(indexed - linked)


@ran
def test_index_fits_the_caps(name: str, corpus_run: RunFolder) -> None:
    run = corpus_run(name)
    if run.refused:
        # Refusing is only right when the hand-written text alone cannot fit.
        hand = [ln for ln in lines_of((run.before or b"").decode("utf-8")) if entry_target(ln) not in run.typed]
        assert len(hand) > MAX_LINES or len("".join(f"{ln}\n" for ln in hand).encode("utf-8")) > MAX_BYTES
        return
    assert run.after is not None
    text = run.after.decode("utf-8")
    assert len(lines_of(text)) <= MAX_LINES
    assert len(text.splitlines()) <= MAX_LINES
    assert len(run.after) <= MAX_BYTES
    assert run.index_json["lines"] == len(text.splitlines())
    assert run.index_json["bytes"] == len(run.after)
    if run.left_out:  # leaving memories out is only right when a cap binds
        assert len(lines_of(text)) >= MAX_LINES - 1 or len(run.after) > MAX_BYTES - 1_000, run.index_json


@ran
def test_second_index_changes_nothing(name: str, corpus_run: RunFolder) -> None:
    run = corpus_run(name)
    assert run.check_code == (1 if run.refused else 0), f"index --check after index: {run.check_err}"
    assert "Traceback" not in run.check_err and "internal error" not in run.check_err, run.check_err
    write = memdir.MemoryDir(run.copy, today=TODAY_DATE).write_index()
    assert not write.changed
    after = (run.copy / "MEMORY.md").read_bytes() if (run.copy / "MEMORY.md").exists() else None
    assert after == run.after


@ran
def test_lint_after_index_finds_the_index_current(name: str, corpus_run: RunFolder) -> None:
    """After `index`, lint has nothing to say about staleness; it reports the left-out memories."""
    run = corpus_run(name)
    report = memdir.MemoryDir(run.copy, today=TODAY_DATE).lint(select=["I"])
    codes = Counter(f.code for f in report.findings)
    assert codes["I001"] == 0 and codes["I003"] == 0, [f.to_dict() for f in report.findings]
    assert {f.path for f in report.findings if f.code == "I005"} == run.left_out
    assert (codes["I004"] > 0) == run.refused


TIGHT_CAPS = [Caps(lines, size) for lines in (10, 40, 120) for size in (1_000, 4_000, 25_000)]


@folders
def test_tighter_caps_still_keep_every_hand_written_line(name: str) -> None:
    """The cap logic on real folders, in-process (nothing written): under smaller caps memdir leaves
    memories out or refuses, and whatever it plans still fits, keeps the hand-written lines and
    indexes or reports every typed memory."""
    typed = {p for p, t in survey(CORPUS / name).items() if t.kind == "typed"}
    original = (CORPUS / name / "MEMORY.md").read_bytes().decode("utf-8")
    # Entries whose file is gone may go when a cap binds (they go first); every other line stays.
    hand = [
        line
        for line in lines_of(original)
        if entry_target(line) not in typed and not _links_a_missing_file(line, CORPUS / name)
    ]
    for caps in TIGHT_CAPS:
        # No write, and no parse cache: ../shared is read-only test data.
        result = memdir.MemoryDir(CORPUS / name, today=TODAY_DATE, caps=caps, cache=False).plan_index()
        left_out = {left.memory.path for left in result.left_out}
        excluded = {e.memory.path for e in result.excluded}
        if result.refused is not None:
            hand_bytes = len("".join(f"{line}\n" for line in hand).encode("utf-8"))
            assert len(hand) > caps.max_lines or hand_bytes > caps.max_bytes, (caps, result.refused)
            assert result.text == original
            continue
        lines = lines_of(result.text)
        assert len(lines) <= caps.max_lines and len(result.text.encode("utf-8")) <= caps.max_bytes, caps
        kept, missing = is_subsequence(hand, lines)
        assert kept, (caps, missing)
        indexed = listed_paths(result.text, typed)
        assert typed - left_out - excluded <= indexed, (caps, typed - left_out - excluded - indexed)
        if left_out:  # leaving memories out only when a cap binds (a loose bound: one entry)
            assert len(lines) >= caps.max_lines - 1 or len(result.text.encode("utf-8")) > caps.max_bytes - 1_000


def _links_a_missing_file(line: str, folder: Path) -> bool:
    target = entry_target(line)
    return target is not None and not (folder / target).exists()


# --- bugs found on the way ----------------------------------------------------------------------


def _index_twice(folder: Path) -> tuple[str, str, bool]:
    first = memdir.MemoryDir(folder, today=TODAY_DATE).write_index()
    text1 = (folder / "MEMORY.md").read_text(encoding="utf-8")
    second = memdir.MemoryDir(folder, today=TODAY_DATE).write_index()
    text2 = (folder / "MEMORY.md").read_text(encoding="utf-8")
    assert first.result.refused is None
    return text1, text2, second.changed


@pytest.mark.parametrize("file_name", ["project_issue-#829.md", "project_100%25-done.md"])
def test_index_is_idempotent_for_file_names_with_hash_or_percent(tmp_path: Path, file_name: str) -> None:
    folder = tmp_path / "memory"
    shutil.copytree(CORPUS / "0xthusharkiranreddy__KALI-V4-MCP", folder)
    (folder / file_name).write_text(
        "---\nname: issue 829\ndescription: Issue 829 is closed\ntype: project\n---\nDone.\n",
        encoding="utf-8",
    )
    text1, text2, changed = _index_twice(folder)
    assert not changed and text2 == text1
    assert sum(1 for line in lines_of(text2) if entry_target(line) is not None and "829" in line) == 1


def test_hand_written_line_with_a_unicode_line_separator_is_kept_verbatim(tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    shutil.copytree(CORPUS / "Akagilnc__project-template", folder)
    note = "Pasted from a web page:\u2028keep this note as one line"
    original = (folder / "MEMORY.md").read_text(encoding="utf-8")
    (folder / "MEMORY.md").write_text(original.replace("\n", f"\n{note}\n", 1), encoding="utf-8")
    text1, _, _ = _index_twice(folder)
    assert note in lines_of(text1)


def test_injected_broken_frontmatter_never_crashes(tmp_path: Path) -> None:
    """Broken files of every kind beside real memories: F002 names each, the rest still indexes."""
    folder = tmp_path / "memory"
    shutil.copytree(CORPUS / "0xthusharkiranreddy__KALI-V4-MCP", folder)
    broken = {
        "feedback_unclosed.md": "---\nname: unclosed\ntype: feedback\nbody without a closing line\n",
        "feedback_colon-crlf.md": "---\r\nname: colon\r\ndescription: Note: use npm\r\ntype: feedback\r\n---\r\nx\r\n",
        "project_list.md": "---\n- a\n- b\n---\nbody\n",
        "project_scalar.md": "---\njust a string\n---\nbody\n",
        "user_tabs.md": "---\nname: tabs\n\tdescription: tab indented\ntype: user\n---\n",
        "reference_bad-quote.md": '---\nname: "unterminated\ntype: reference\n---\n',
        "sub/feedback_nested.md": "---\nname: [unclosed\n  more: x\n---\n",
    }
    # Not YAML, but Claude Code reads them after quoting the values: memories, with F013.
    lenient = {
        "feedback_colon.md": "---\nname: colon\ndescription: Note: use npm: always\ntype: feedback\n---\nx\n",
        "sub/feedback_bracket.md": "---\nname: [unclosed\n---\n",
    }
    for rel, text in (broken | lenient).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(text.encode("utf-8"))
    truth = survey(folder)
    assert {p for p, t in truth.items() if t.kind == "broken"} == set(broken)
    assert {p for p, t in truth.items() if t.lenient} == set(lenient)
    env = cli_env(tmp_path)
    lint = subprocess.run(
        memdir_cmd(folder, "lint", "--format", "json"), env=env, cwd=tmp_path,
        capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT,
    )  # fmt: skip
    assert lint.returncode == 1 and "Traceback" not in lint.stderr, lint.stderr
    findings = json.loads(lint.stdout)["findings"]
    assert {f["path"] for f in findings if f["code"] == "F002"} == set(broken)
    assert {f["path"] for f in findings if f["code"] == "F013"} == set(lenient)
    index = subprocess.run(
        memdir_cmd(folder, "index", "--format", "json"), env=env, cwd=tmp_path,
        capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT,
    )  # fmt: skip
    assert index.returncode == 0 and "Traceback" not in index.stderr, index.stderr
    text = (folder / "MEMORY.md").read_text(encoding="utf-8")
    indexed = {entry_target(line) for line in lines_of(text)}
    assert {p for p, t in truth.items() if t.kind == "typed"} <= indexed
    assert "feedback_colon.md" in indexed
    assert not set(broken) & indexed

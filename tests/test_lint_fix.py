"""`memdir lint --fix` / `--diff` and `MemoryDir.fix`: what is fixed, what never is, and what is never lost."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest
from conftest import TODAY, MakeMemory
from typer.testing import CliRunner

from memdir import MemoryDir
from memdir.cli import app
from memdir.core.errors import MemoryChanged
from memdir.folder import FileChange

runner = CliRunner()
FIXTURES = Path(__file__).parent / "lint_fixtures"
GOOD = "\n**Why:** CI was red for a day.\n\n**How to apply:** Before any commit.\n"


def memdir(folder: Path, *args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["--dir", str(folder), *args])


def indexed(folder: Path) -> None:
    MemoryDir(folder, today=TODAY).write_index()


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under the folder, by relative path, but the parse cache (any read may refresh
    it, and create `.memdir/` to hold it)."""
    cache = {".memdir/parse-cache", ".memdir/.gitignore"}
    files = {p.relative_to(folder).as_posix(): p for p in sorted(folder.rglob("*")) if p.is_file()}
    return {rel: p.read_bytes() for rel, p in files.items() if rel not in cache}


def words(text: str) -> Counter[str]:
    """Words and numbers; markup (`**`, `__`, `:`) and punctuation are not words."""
    return Counter(re.findall(r"[^\W_]+", text))


def codes(folder: Path) -> list[str]:
    return [f.code for f in MemoryDir(folder, today=TODAY).lint().findings]


def copy_fixture(name: str, tmp_path: Path) -> Path:
    root = tmp_path / "fixture"
    shutil.copytree(FIXTURES / name, root)
    return root


# --- B003: relative dates ------------------------------------------------------------------------


def test_b003_fix_is_anchored_on_updated(folder: Path, make_memory: MakeMemory) -> None:
    path = make_memory(
        "project_freeze.md",
        description="The freeze starts tomorrow",
        body="The freeze starts next Thursday.\n" + GOOD,
        created="2026-11-01",
        updated="2026-11-20",
    )
    indexed(folder)
    result = memdir(folder, "lint", "--fix")
    text = path.read_text()
    assert "description: The freeze starts 2026-11-21\n" in text
    assert "The freeze starts 2026-11-26.\n" in text  # the Thursday of the week after 2026-11-20
    assert "tomorrow" not in text and "next Thursday" not in text
    assert result.exit_code == 0 and result.stdout.startswith("Fixed ")
    assert "B003" not in result.stdout
    assert "2026-11-21" in (folder / "MEMORY.md").read_text()


def test_b003_fix_falls_back_to_created(folder: Path, make_memory: MakeMemory) -> None:
    path = make_memory("user_x.md", body="Moved teams yesterday.\n", created="2026-06-10")
    MemoryDir(folder, today=TODAY).fix()
    assert "Moved teams 2026-06-09.\n" in path.read_text()


def _set_mtime(path: Path, day: dt.date, second: int = 0) -> None:
    noon = time.mktime((day.year, day.month, day.day, 12, 0, second, 0, 0, -1))  # local noon: the same date anywhere
    os.utime(path, (noon, noon))


def test_b003_fix_counted_from_the_modification_time_is_safe(folder: Path, make_memory: MakeMemory) -> None:
    """Claude Code writes no dates: an undated file was last written at its modification time, which
    anchors its relative dates as well as `updated` would, so `--fix` alone fixes them."""
    path = make_memory("user_x.md", body="Moved teams yesterday.\n")
    _set_mtime(path, dt.date(2026, 1, 7))
    dated = make_memory("user_y.md", body="Joined yesterday.\n", updated="2026-11-20")
    indexed(folder)
    text = memdir(folder, "lint")
    [undated_line] = [line for line in text.stdout.splitlines() if "user_x.md:" in line]
    assert "B003 [*] [warning]" in undated_line
    assert "(2026-01-06, counting from its modification time 2026-01-07)" in undated_line
    [dated_line] = [line for line in text.stdout.splitlines() if "user_y.md:" in line]
    assert "B003 [*] [warning]" in dated_line and "counting from its date 2026-11-20" in dated_line
    data = json.loads(memdir(folder, "lint", "--format", "json").stdout)
    fixes = {f["path"]: f["fix"] for f in data["findings"] if f["code"] == "B003"}
    assert fixes["user_x.md"]["applicability"] == fixes["user_y.md"]["applicability"] == "safe"

    assert memdir(folder, "lint", "--fix").exit_code == 0
    assert "Moved teams 2026-01-06.\n" in path.read_text()
    assert "Joined 2026-11-19.\n" in dated.read_text()


def test_b003_gives_no_date_where_a_copy_reset_every_mtime(folder: Path, make_memory: MakeMemory) -> None:
    """Files whose modification times were all set at one moment (a copy, a checkout) outside git
    have no age: the finding says so, names no date, and no fix (not even an unsafe one) writes one."""
    paths = [make_memory(f"user_{n}.md", body=f"Moved team {n} yesterday.\n") for n in "abc"]
    for path in paths:
        _set_mtime(path, dt.date(2026, 1, 7))
    indexed(folder)
    lines = [line for line in memdir(folder, "lint").stdout.splitlines() if "B003" in line]
    assert len(lines) == 3
    assert all("[*]" not in line and "no day to count from" in line and "add `created:`" in line for line in lines)
    before = [path.read_bytes() for path in paths]
    assert memdir(folder, "lint", "--fix", "--unsafe-fixes").exit_code == 0
    assert [path.read_bytes() for path in paths] == before


def _git(repo: Path, *args: str, when: str | None = None) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}  # fmt: skip
    if when is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"{when}T12:00:00"
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_b003_in_a_fresh_clone_counts_from_each_file_s_last_commit(tmp_path: Path, make_memory: MakeMemory) -> None:
    """A checkout sets every mtime to its own moment; then each undated file's last commit is its age."""
    repo = tmp_path / "repo"
    root = repo / ".claude" / "memory"
    root.mkdir(parents=True)
    (root / "MEMORY.md").write_text("")
    _git(repo, "init", "-q")
    old = make_memory("project_old.md", root=root, body="Freeze starts tomorrow.\n" + GOOD)
    make_memory("user_a.md", root=root, body="Role.\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "first", when="2026-03-02")
    new = make_memory("project_new.md", root=root, body="We ship next quarter.\n" + GOOD)
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "second", when="2026-08-12")
    for path in root.glob("*.md"):
        _set_mtime(path, dt.date(2026, 11, 20))  # what a clone does: one moment for all
    result = memdir(root, "lint", "--select", "B003")
    assert "(2026-03-03, counting from its last commit 2026-03-02)" in result.stdout
    assert "(in 2026-Q4, counting from its last commit 2026-08-12)" in result.stdout
    assert memdir(root, "lint", "--select", "B003", "--fix").exit_code == 0
    assert "Freeze starts 2026-03-03.\n" in old.read_text()
    assert "We ship in 2026-Q4.\n" in new.read_text()


@pytest.mark.parametrize(
    ("body", "fixed"),
    [
        ("The webhook failed last week.", "The webhook failed the week of 2026-11-09."),
        ("Last week the team called 80 accounts.", "The week of 2026-11-09 the team called 80 accounts."),
        ("We raise the rate next quarter.", "We raise the rate in 2027-Q1."),
        ("Budget is due by next quarter.", "Budget is due by 2027-Q1."),
        ("Next month we migrate.", "In 2026-12 we migrate."),
        ("The audit was last year.", "The audit was in 2025."),
        ("Die Abnahme ist nächste Woche.", "Die Abnahme ist 2026-W48."),
        ("The freeze ends at the end of next month.", "The freeze ends at 2026-12-31."),  # a day stays a day
    ],
)
def test_b003_fix_writes_a_period_as_a_period(folder: Path, make_memory: MakeMemory, body: str, fixed: str) -> None:
    """A quarter is written as a quarter: its first day would read as a precise date."""
    path = make_memory("project_x.md", body=body + "\n" + GOOD, updated="2026-11-20")
    MemoryDir(folder, today=TODAY).fix()
    assert path.read_text().split("---\n", 2)[2].startswith(fixed + "\n")


def test_b003_fix_leaves_code_alone(folder: Path, make_memory: MakeMemory) -> None:
    body = "Run `git log --since yesterday` first.\n\n```sh\n# tomorrow\nmake\n```\n"
    path = make_memory("user_x.md", body=body, updated="2026-11-20")
    indexed(folder)
    before = path.read_bytes()
    result = MemoryDir(folder, today=TODAY).fix()
    assert result.changes == [] and path.read_bytes() == before


def test_b003_fix_never_glues_a_date_onto_a_letter_or_digit(folder: Path, make_memory: MakeMemory) -> None:
    path = make_memory(
        "project_p0.md", description="本周P0要修完", body="本周P0要修完，明天10点复盘。\n" + GOOD, updated="2026-11-20"
    )
    MemoryDir(folder, today=TODAY).fix()
    text = path.read_text()
    assert "description: 2026-W47 P0要修完\n" in text  # 2026-11-20's week, a period (ISO week)
    assert "2026-W47 P0要修完，2026-11-21 10点复盘。\n" in text


def test_b003_leaves_what_add_would_leave(folder: Path, make_memory: MakeMemory) -> None:
    body = 'Click the "Next Week" button; tomorrow() and {today} are code.\n' + GOOD
    path = make_memory("project_ui.md", description="The 'Tomorrow' tab", body=body, updated="2026-11-20")
    assert "B003" not in codes(folder)
    before = path.read_bytes()
    MemoryDir(folder, today=TODAY).fix(unsafe=True)
    assert path.read_bytes() == before


def test_b003_fix_of_the_description_keeps_a_synced_index_in_sync(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_x.md", description="Joined the team yesterday", updated="2026-11-20")
    indexed(folder)
    assert "yesterday" in (folder / "MEMORY.md").read_text()
    assert memdir(folder, "lint", "--fix").exit_code == 0
    assert (folder / "MEMORY.md").read_text() == "- [x](user_x.md) — Joined the team 2026-11-19\n"
    assert codes(folder) == []


# --- B004: label markup --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "fixed"),
    [
        ("Why:", "**Why:**"),
        ("**Why**:", "**Why:**"),
        ("__Why:__", "**Why:**"),
        ("- Why:", "- **Why:**"),
        ("Warum:", "**Warum:**"),
    ],
)
def test_b004_fix_rewrites_the_markup_only(folder: Path, make_memory: MakeMemory, label: str, fixed: str) -> None:
    path = make_memory(
        "feedback_x.md", body=f"Rule.\n\n{label} CI was red.\n\n**How to apply:** always.\n", updated="2026-11-20"
    )
    memdir(folder, "lint", "--fix")
    assert f"\n{fixed} CI was red.\n" in path.read_text()
    assert "B004" not in codes(folder)


def test_b004_leaves_a_bold_sentence_alone(folder: Path, make_memory: MakeMemory) -> None:
    body = "Rule.\n\n**Why: CI was red for a day.**\n\n**How to apply:** always.\n"
    path = make_memory("feedback_x.md", body=body, updated="2026-11-20")
    indexed(folder)
    before = path.read_bytes()
    assert MemoryDir(folder, today=TODAY).fix().changes == []
    assert path.read_bytes() == before


# --- I001, I003, I007: the index is regenerated; I002 only with --unsafe-fixes -------------------


def test_index_fixes_regenerate_and_keep_hand_written_lines(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_role.md", description="Backend developer")
    make_memory("user_new.md", description="Not listed yet")
    make_memory("project_old.md", body="Old.\n" + GOOD, status="superseded", updated="2026-11-01")
    (folder / "MEMORY.md").write_text(
        "# Memory\n\nRead these first.\n\n- [role](user_role.md) — Outdated description\n"
        "- [old](project_old.md) — About old\n"
    )
    assert {"I001", "I003", "I007"} <= set(codes(folder))
    result = memdir(folder, "lint", "--fix")
    assert result.exit_code == 0, result.output
    assert (folder / "MEMORY.md").read_text() == (
        "# Memory\n\nRead these first.\n\n- [role](user_role.md) — Backend developer\n"
        "- [new](user_new.md) — Not listed yet\n"
    )
    assert codes(folder) == []
    assert (folder / ".memdir" / "MEMORY.md.prev").exists()


def test_i002_needs_unsafe_fixes(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_role.md", description="Backend developer")
    broken = "- [gone](user_gone.md) — Deleted by hand"
    (folder / "MEMORY.md").write_text(f"- [role](user_role.md) — Backend developer\n{broken}\n")
    safe = memdir(folder, "lint", "--fix")
    assert safe.exit_code == 1
    assert broken in (folder / "MEMORY.md").read_text()
    assert "1 fixable with `memdir lint --fix --unsafe-fixes`" in safe.stdout
    unsafe = memdir(folder, "lint", "--fix", "--unsafe-fixes")
    assert unsafe.exit_code == 0, unsafe.output
    assert (folder / "MEMORY.md").read_text() == "- [role](user_role.md) — Backend developer\n"
    assert broken in (folder / ".memdir" / "MEMORY.md.history").read_text()


def test_i002_in_prose_is_never_removed(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_role.md", description="Backend developer")
    prose = "See [the spec](spec.md) before changing anything."
    (folder / "MEMORY.md").write_text(f"{prose}\n- [role](user_role.md) — Backend developer\n")
    result = memdir(folder, "lint", "--fix", "--unsafe-fixes")
    assert result.exit_code == 1
    assert prose in (folder / "MEMORY.md").read_text()
    assert "I002" in result.stdout


# --- --diff ----------------------------------------------------------------------------------------


def test_diff_prints_a_unified_diff_and_writes_nothing(tmp_path: Path) -> None:
    root = copy_fixture("rich", tmp_path)
    before = snapshot(root)
    result = memdir(root, "lint", "--diff")
    assert result.exit_code == 1
    assert snapshot(root) == before  # no file changed, none created (not even .memdir/)
    out = result.stdout
    assert "--- a/feedback_lint.md\n+++ b/feedback_lint.md\n" in out
    assert "--- a/MEMORY.md\n+++ b/MEMORY.md\n" in out
    assert "-Why: CI was red for a day.\n+**Why:** CI was red for a day.\n" in out
    assert "+- [deploy](project_deploy.md) — We deploy to Fly.io\n" in out
    assert re.search(r"^@@ -\d+,\d+ \+\d+,\d+ @@", out, re.MULTILINE)
    assert "Would fix 8 issues in 2 files." in result.stderr


def test_diff_with_unsafe_fixes_shows_the_removed_entry(tmp_path: Path) -> None:
    root = copy_fixture("rich", tmp_path)
    result = memdir(root, "lint", "--diff", "--unsafe-fixes")
    assert "-- [old-deploy](project_old-deploy.md) — We deploy to Heroku\n" in result.stdout
    safe = memdir(root, "lint", "--diff")
    assert "-- [old-deploy]" not in safe.stdout


def test_diff_exits_0_when_there_is_nothing_to_fix(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("feedback_x.md", body="Rule.\n" + GOOD, updated="2026-11-20")
    (folder / "notes.md").write_text("# no frontmatter: a finding, but nothing to fix\n")
    indexed(folder)
    result = memdir(folder, "lint", "--diff")
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert "Nothing to fix." in result.stderr


def test_diff_and_fix_together_is_a_usage_error(folder: Path) -> None:
    result = memdir(folder, "lint", "--diff", "--fix")
    assert result.exit_code == 2
    assert "--diff" in result.stderr


# --- --exit-non-zero-on-fix ----------------------------------------------------------------------


def test_exit_non_zero_on_fix(folder: Path, make_memory: MakeMemory) -> None:
    body = "Rule.\n\nWhy: CI was red.\n\n**How to apply:** always.\n"  # B004 is info: never fails a run
    path = make_memory("feedback_x.md", body=body, updated="2026-11-20")
    indexed(folder)
    original = path.read_text()
    assert memdir(folder, "lint", "--fix").exit_code == 0
    path.write_text(original)
    flagged = memdir(folder, "lint", "--fix", "--exit-non-zero-on-fix")
    assert flagged.exit_code == 1
    assert "**Why:** CI was red." in path.read_text()
    again = memdir(folder, "lint", "--fix", "--exit-non-zero-on-fix")
    assert again.exit_code == 0  # nothing left to fix


# --- idempotence and no lost text ------------------------------------------------------------------

MESSY = """\
---
name: release-plan
description: Code freeze starts next Monday, release the day after tomorrow
type: project
updated: 2026-11-20
---
We freeze next Monday; QA signs off by end of month and we ship next Thursday.
The retro is next week, and tomorrow we plan the one after.

Why: The Q4 release must land before the holiday freeze.

**How to apply**: Check `make release-check` before merging (not yesterday's build).

- __Reason:__ keep the changelog honest
"""


def test_fix_is_idempotent_and_keeps_every_word(folder: Path) -> None:
    path = folder / "project_release-plan.md"
    path.write_text(MESSY)
    indexed(folder)
    first = MemoryDir(folder, today=TODAY).fix()
    assert {f.code for f in first.fixed} - {"I001"} == {"B003", "B004"}  # I001: the description changed
    fixed_text = path.read_text()
    # Every word of the original survives, but the relative-date phrases the fix replaced.
    replaced: Counter[str] = Counter()
    for finding in first.fixed:
        if finding.code == "B003":
            phrase = re.search(r"relative date '([^']+)'", finding.message)
            assert phrase is not None
            replaced += words(phrase.group(1))
    lost = words(MESSY) - replaced - words(fixed_text)
    assert not lost, f"the fix dropped {sorted(lost.elements())}"
    assert "Check `make release-check` before merging" in fixed_text
    assert "**Why:** The Q4 release" in fixed_text and "**How to apply:** Check" in fixed_text
    assert "- **Reason:** keep the changelog honest" in fixed_text
    # The second run finds nothing to do and writes nothing.
    before = snapshot(folder)
    second = MemoryDir(folder, today=TODAY).fix()
    assert second.changes == [] and second.fixed == []
    assert snapshot(folder) == before
    result = memdir(folder, "lint", "--fix", "--exit-non-zero-on-fix")
    assert result.exit_code == 0 and "Fixed" not in result.stdout
    assert snapshot(folder) == before


def test_fix_keeps_every_word_on_the_rich_fixture(tmp_path: Path) -> None:
    root = copy_fixture("rich", tmp_path)
    originals = {p.name: p.read_text() for p in root.glob("*.md")}
    result = MemoryDir(root, today=TODAY).fix(unsafe=True)
    replaced_phrases: Counter[str] = Counter()
    for finding in result.fixed:
        found = re.search(r"relative date '([^']+)'", finding.message)
        if found:
            replaced_phrases += words(found.group(1))
    for name, original in originals.items():
        if name == "MEMORY.md":
            continue
        lost = words(original) - replaced_phrases - words((root / name).read_text())
        assert not lost, f"{name}: the fix dropped {sorted(lost.elements())}"
    index = (root / "MEMORY.md").read_text()
    assert index.startswith("# Memory\n")  # the hand-written heading stays
    assert MemoryDir(root, today=TODAY).fix(unsafe=True).changes == []


# --- a file changed on disk while fixing ---------------------------------------------------------


def test_file_changed_between_plan_and_write_is_refused(
    folder: Path, make_memory: MakeMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = make_memory("feedback_x.md", body="Rule.\n\nWhy: CI was red.\n\n**How to apply:** always.\n")
    indexed(folder)
    index_before = (folder / "MEMORY.md").read_bytes()
    concurrent = path.read_text() + "\nAdded by another session while memdir was fixing.\n"
    original = MemoryDir._replace_fixed

    def edit_then_replace(self: MemoryDir, change: FileChange) -> None:
        (self.root / change.path).write_text(concurrent)  # another writer, between plan and write
        original(self, change)

    monkeypatch.setattr(MemoryDir, "_replace_fixed", edit_then_replace)
    result = memdir(folder, "lint", "--fix")
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1
    assert "changed while memdir was fixing it" in result.stderr and "Traceback" not in result.output
    assert path.read_text() == concurrent  # the other writer's text, untouched
    assert (folder / "MEMORY.md").read_bytes() == index_before


def test_library_fix_raises_memory_changed(
    folder: Path, make_memory: MakeMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = make_memory("feedback_x.md", body="Rule.\n\nWhy: CI was red.\n\n**How to apply:** always.\n")
    indexed(folder)
    original = MemoryDir._replace_fixed

    def edit_then_replace(self: MemoryDir, change: FileChange) -> None:
        (self.root / change.path).write_text(change.before.replace("Rule.", "Rule, edited elsewhere."))  # type: ignore[union-attr]
        original(self, change)

    monkeypatch.setattr(MemoryDir, "_replace_fixed", edit_then_replace)
    with pytest.raises(MemoryChanged, match=r"feedback_x\.md changed while memdir was fixing it"):
        MemoryDir(folder, today=TODAY).fix()
    assert "Rule, edited elsewhere.\n\nWhy: CI was red." in path.read_text()


# --- the library API -------------------------------------------------------------------------------


def test_library_fix_dry_run_writes_nothing(tmp_path: Path) -> None:
    root = copy_fixture("rich", tmp_path)
    before = snapshot(root)
    folder = MemoryDir(root, today=TODAY)
    result = folder.fix(dry_run=True)
    assert snapshot(root) == before
    assert [c.path for c in result.changes] == ["feedback_lint.md", "MEMORY.md"]
    change = result.changes[0]
    assert change.before == (root / "feedback_lint.md").read_text()
    assert "2026-11-26" in change.after and "**Why:**" in change.after
    assert {f.code for f in result.fixed} == {"B003", "B004", "I001", "I003"}
    left = {f.code for f in result.report.findings}
    assert not left & {"B003", "B004", "I001", "I003"}
    assert "I002" in left  # unsafe: not applied without `unsafe`
    # What the dry run promised is what the real run does.
    real = folder.fix()
    assert [(c.path, c.after) for c in real.changes] == [(c.path, c.after) for c in result.changes]
    assert (root / "feedback_lint.md").read_text() == change.after


def test_dry_run_respects_selection(tmp_path: Path) -> None:
    root = copy_fixture("rich", tmp_path)
    result = MemoryDir(root, today=TODAY).fix(select=["B004"], dry_run=True)
    assert {f.code for f in result.fixed} == {"B004"}
    [change] = [c for c in result.changes if c.path == "feedback_lint.md"]
    assert "next Thursday" in change.after and "**Why:**" in change.after


def test_fix_date_anchor_is_stable(folder: Path, make_memory: MakeMemory) -> None:
    """The anchor is the file's date, not today: fixing on another day gives the same date."""
    path = make_memory("user_x.md", body="Started last Monday.\n", updated="2026-11-20")
    text = path.read_text()
    MemoryDir(folder, today=dt.date(2027, 5, 1)).fix()
    later = path.read_text()
    path.write_text(text)
    MemoryDir(folder, today=TODAY).fix()
    assert path.read_text() == later and "2026-11-16" in later


# --- F013: frontmatter that only Claude Code's retry reads ------------------------------------------

ROSETTA = "---\nname: rosetta\ndescription: Rosetta Stone: 4 principles\ntype: feedback\n---\nUse them.\n" + GOOD


def f013(folder: Path) -> list[tuple[str, int | None, str, str | None]]:
    report = MemoryDir(folder, today=TODAY).lint(select=["F013"])
    return [(f.path, f.line, f.message, f.fixable) for f in report.findings]


def test_f013_names_the_values_claude_code_quotes(folder: Path) -> None:
    (folder / "feedback_rosetta.md").write_text(ROSETTA)
    [(path, line, message, fixable)] = f013(folder)
    assert (path, line, fixable) == ("feedback_rosetta.md", 3, "safe")
    assert "not strict YAML" in message and "`description`" in message
    assert "F002" not in codes(folder)


def test_f013_fix_quotes_those_values_as_claude_code_does_and_nothing_else(folder: Path) -> None:
    text = ROSETTA.replace("type: feedback\n", 'type: feedback\nsource: C:\\dev "main"#1\nextra:\tkeep  \n')
    (folder / "feedback_rosetta.md").write_text(text)
    read_before = MemoryDir(folder, today=TODAY).get("rosetta").fields
    result = memdir(folder, "lint", "--fix", "--select", "F013")
    assert result.exit_code == 0, result.output
    fixed = (folder / "feedback_rosetta.md").read_text()
    assert fixed == text.replace(
        "description: Rosetta Stone: 4 principles\n", 'description: "Rosetta Stone: 4 principles"\n'
    ).replace('source: C:\\dev "main"#1\n', 'source: "C:\\\\dev \\"main\\"#1"\n')
    after = MemoryDir(folder, today=TODAY).get("rosetta")
    assert after.doc.lenient is None and after.fields == read_before
    assert f013(folder) == []


def test_f013_fix_is_unsafe_when_yaml_alone_reads_a_quoted_value_otherwise(folder: Path) -> None:
    # The retry quotes `metadata` too: Claude Code reads it as text, YAML alone as a mapping.
    text = ROSETTA.replace("type: feedback\n", "type: feedback\nmetadata: {node: memory}\n")
    (folder / "feedback_rosetta.md").write_text(text)
    [(_, line, message, fixable)] = f013(folder)
    assert line == 3
    assert fixable == "unsafe" and "`metadata`" in message
    assert memdir(folder, "lint", "--fix", "--select", "F013").exit_code == 0
    assert (folder / "feedback_rosetta.md").read_text() == text
    assert memdir(folder, "lint", "--fix", "--unsafe-fixes", "--select", "F013").exit_code == 0
    fixed = MemoryDir(folder, today=TODAY).get("rosetta")
    assert fixed.doc.lenient is None and fixed.fields["metadata"] == "{node: memory}"


def test_f013_without_a_fix_when_quoting_alone_does_not_make_strict_yaml(folder: Path) -> None:
    text = ROSETTA.replace("type: feedback\n", "type: feedback\nmetadata:\n\tnode: memory\n")
    (folder / "feedback_rosetta.md").write_text(text)
    [(_, _, message, fixable)] = f013(folder)
    assert fixable is None and "tab" in message


def test_f002_stays_for_frontmatter_neither_reading_parses(folder: Path) -> None:
    (folder / "feedback_rosetta.md").write_text(ROSETTA.replace("Rosetta Stone: 4", '"Rosetta" Stone, 4'))
    assert codes(folder).count("F002") == 1 and f013(folder) == []


def test_f013_names_a_few_keys_and_fixes_them_all(folder: Path) -> None:
    many = "".join(f"note{'_' * i}: step {i}: done\n" for i in range(40))
    (folder / "feedback_rosetta.md").write_text(ROSETTA.replace("type: feedback\n", f"type: feedback\n{many}"))
    [(_, line, message, fixable)] = f013(folder)
    assert line == 3 and fixable == "safe"
    assert "quoting `description`, `note`, `note_` and 38 more" in message
    assert memdir(folder, "lint", "--fix", "--select", "F013").exit_code == 0
    fixed = (folder / "feedback_rosetta.md").read_text()
    assert fixed.count(': "') == 41 and MemoryDir(folder, today=TODAY).get("rosetta").doc.lenient is None

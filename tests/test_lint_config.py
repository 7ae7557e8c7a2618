"""Lint settings (`[tool.memdir.lint]`, `[lint]` in .memdir.toml) and suppressions (`memdir-ignore`, L001)."""

from __future__ import annotations

import datetime as dt
import json
import os
import textwrap
import time
from pathlib import Path

import pytest
from conftest import TODAY, MakeMemory
from typer.testing import CliRunner

from memdir import MemoryDir
from memdir.cli import app
from memdir.core.config import load_config

runner = CliRunner()
GOOD = "Rule.\n\n**Why:** reason.\n\n**How to apply:** always.\n"
LONG_ENTRY = "- [runbook](runbook.txt) — " + "The incident runbook: who to page and which dashboards to open first " * 2


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, folder: Path) -> Path:
    """A project folder holding the memory folder (tmp_path/memory), as the working directory.

    MEMDIR_DIR points at the folder, so it is found with or without a config file; the lint settings
    still come from the nearest config."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MEMDIR_DIR", str(folder))
    return tmp_path


def pyproject(project: Path, lint: str) -> Path:
    path = project / "pyproject.toml"
    path.write_text(
        '[project]\nname = "x"\n\n[tool.memdir]\ndir = "memory"\n\n[tool.memdir.lint]\n' + textwrap.dedent(lint)
    )
    return path


def dotfile(project: Path, lint: str) -> Path:
    path = project / ".memdir.toml"
    path.write_text('dir = "memory"\n\n[lint]\n' + textwrap.dedent(lint))
    return path


def lint(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["lint", *args])


def found(*args: str) -> set[tuple[str, str]]:
    """(code, path) of each finding of `memdir lint --format json`, run in the working directory."""
    result = lint("--format", "json", *args)
    assert result.exit_code in (0, 1), result.output
    return {(f["code"], f["path"]) for f in json.loads(result.stdout)["findings"]}


def codes(*args: str) -> set[str]:
    return {code for code, _ in found(*args)}


def indexed(folder: Path) -> None:
    MemoryDir(folder, today=TODAY).write_index()


# --- select / ignore / extend-select -----------------------------------------------------------------


@pytest.fixture
def mixed(folder: Path, make_memory: MakeMemory) -> Path:
    """B001, B002 and B003 on one memory, F008 on another, C003 on a third; the index in sync."""
    make_memory("feedback_x.md", body="Ship it tomorrow.\n", updated="2026-11-20")
    make_memory("user_long.md", description="x" * 151)
    make_memory("reference_log.md", body="Fixed in 3f2a9c1, 9bd04e7 and a71c2f0 after the outage.\n")
    indexed(folder)
    return folder


def test_without_config_every_default_rule_runs(project: Path, mixed: Path) -> None:
    assert codes() == {"B001", "B002", "B003", "F008", "C003"}


@pytest.mark.parametrize("write", [pyproject, dotfile], ids=["pyproject", "memdir.toml"])
def test_select_ignore_extend_select(project: Path, mixed: Path, write) -> None:  # type: ignore[no-untyped-def]
    write(project, 'select = ["B"]\n')
    assert codes() == {"B001", "B002", "B003"}
    write(project, 'select = ["B"]\nignore = ["missing-why", "B003"]\n')
    assert codes() == {"B002"}
    write(project, 'select = ["B001"]\nextend-select = ["F008", "C"]\n')
    assert codes() == {"B001", "F008", "C003"}
    write(project, 'ignore = ["B", "C003"]\n')
    assert codes() == {"F008"}


def test_options_add_to_the_config(project: Path, mixed: Path) -> None:
    pyproject(project, 'select = ["B001"]\nignore = ["C"]\n')
    assert codes("--extend-select", "F008,C003") == {"B001", "F008"}  # the config's ignore still holds
    assert codes("--ignore", "B001", "--extend-select", "F") == {"F008"}
    assert codes("--select", "B003") == {"B003"}  # --select replaces the config's select


def test_snake_case_keys_work_too(project: Path, mixed: Path) -> None:
    pyproject(project, 'select = ["B001"]\nextend_select = ["F008"]\nstale_project_days = 10\n')
    assert codes() == {"B001", "F008"}
    assert load_config(project).lint.stale_project_days == 10


def test_memdir_toml_beats_pyproject_in_the_same_folder(project: Path, mixed: Path) -> None:
    pyproject(project, 'select = ["F"]\n')
    assert codes() == {"F008"}
    dotfile(project, 'select = ["C"]\n')
    assert codes() == {"C003"}


# --- per-file-ignores ------------------------------------------------------------------------------


@pytest.fixture
def nested(folder: Path, make_memory: MakeMemory) -> Path:
    """feedback memories without Why/How at the top and in team/."""
    make_memory("feedback_x.md", body="Rule.\n", updated="2026-11-20")
    make_memory("feedback_y.md", body="Rule.\n", root=folder / "team", updated="2026-11-20")
    make_memory("feedback_z.md", body="Rule.\n", root=folder / "team", updated="2026-11-20")
    indexed(folder)
    return folder


def test_per_file_ignores_glob_without_slash_matches_the_name_anywhere(project: Path, nested: Path) -> None:
    pyproject(project, '[tool.memdir.lint.per-file-ignores]\n"feedback_y.md" = ["B001"]\n"*_z.md" = ["B"]\n')
    assert found("--select", "B001") == {("B001", "feedback_x.md")}
    assert ("B002", "team/feedback_y.md") in found("--select", "B002")
    assert ("B002", "team/feedback_z.md") not in found("--select", "B002")


def test_per_file_ignores_glob_with_slash_matches_the_path(project: Path, nested: Path) -> None:
    pyproject(project, '[tool.memdir.lint.per-file-ignores]\n"team/*.md" = ["missing-why"]\n')
    assert found("--select", "B001") == {("B001", "feedback_x.md")}
    pyproject(project, '[tool.memdir.lint.per-file-ignores]\n"*/feedback_x.md" = ["B001"]\n')
    assert ("B001", "feedback_x.md") in found("--select", "B001")  # the top-level file has no '/' in its path
    pyproject(project, '[tool.memdir.lint.per-file-ignores]\n"team/feedback_x.md" = ["B001"]\n')
    assert ("B001", "feedback_x.md") in found("--select", "B001")


def test_per_file_ignores_in_memdir_toml(project: Path, nested: Path) -> None:
    dotfile(project, '[lint.per-file-ignores]\n"feedback_*.md" = ["B001", "B002"]\n')
    assert codes("--select", "B") == set()


# --- stale-project-days ----------------------------------------------------------------------------


def test_stale_project_days(project: Path, make_memory: MakeMemory, folder: Path) -> None:
    make_memory("project_p.md", body=GOOD, updated="2026-10-01")  # 52 days before 2026-11-22
    indexed(folder)
    assert codes() == set()
    pyproject(project, "stale-project-days = 30\n")
    assert codes() == {"C007"}
    pyproject(project, "stale-project-days = 52\n")
    assert codes() == set()  # older than the limit, not as old as it
    pyproject(project, "stale-project-days = 51\n")
    assert codes() == {"C007"}


def test_stale_project_counts_an_undated_memory_from_its_file(project: Path, make_memory: MakeMemory,
                                                               folder: Path) -> None:  # fmt: skip
    """Claude Code writes no dates: its project memory untouched for 200 days is stale all the same."""
    path = make_memory("project_p.md", body=GOOD)
    day = TODAY - dt.timedelta(days=200)
    noon = time.mktime((day.year, day.month, day.day, 12, 0, 0, 0, 0, -1))
    os.utime(path, (noon, noon))
    indexed(folder)
    findings = json.loads(lint("--format", "json").stdout)["findings"]
    assert [f["message"] for f in findings if f["code"] == "C007"] == [
        f"project memory last changed {day.isoformat()} (200 days ago, by its modification time); "
        "confirm it and set `updated`, or archive it"
    ]


# --- bad values and unknown keys -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lint_table", "says"),
    [
        ('select = "B"\n', "`lint.select` must be a list"),
        ('ignore = ["B", 3]\n', "`lint.ignore` must be a list"),
        ('extend-select = [""]\n', "`lint.extend-select` must be a list"),
        ("stale-project-days = 0\n", "`lint.stale-project-days` must be a positive whole number"),
        ('stale-project-days = "90"\n', "`lint.stale-project-days` must be a positive whole number"),
        ("stale-project-days = true\n", "`lint.stale-project-days` must be a positive whole number"),
        ('per-file-ignores = ["x"]\n', "`lint.per-file-ignores` must be a table"),
        ('per-file-ignores = {"x.md" = "B001"}\n', "must be a list of rule codes or names"),
    ],
)
def test_bad_values_exit_2_with_one_line_naming_the_file(project: Path, lint_table: str, says: str) -> None:
    path = pyproject(project, lint_table)
    result = lint()
    assert result.exit_code == 2
    assert result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith(f"memdir: error: {path}: ") and says in line


def test_lint_must_be_a_table(project: Path) -> None:
    (project / ".memdir.toml").write_text('dir = "memory"\nlint = 3\n')
    result = lint()
    assert result.exit_code == 2
    assert result.stderr.strip() == f"memdir: error: {project / '.memdir.toml'}: `lint` must be a table"


@pytest.mark.parametrize(
    "lint_table",
    ['select = ["Z9"]\n', 'extend-select = ["no-such-rule"]\n', 'ignore = ["Q"]\n'],
)
def test_unknown_rule_in_config_names_the_file(project: Path, lint_table: str) -> None:
    path = pyproject(project, lint_table)
    result = lint()
    assert result.exit_code == 2
    [line] = result.stderr.splitlines()
    assert "no lint rule matches" in line
    assert str(path) in line, f"the error does not say the selector came from {path}: {line!r}"


def test_unknown_rule_in_per_file_ignores_is_reported(project: Path, folder: Path) -> None:
    path = pyproject(project, '[tool.memdir.lint.per-file-ignores]\n"x.md" = ["B0001"]\n')
    result = lint()
    assert result.exit_code == 2, f"a per-file-ignores code that names no rule was accepted silently: {result.output}"
    assert str(path) in result.stderr and "B0001" in result.stderr


def test_unknown_keys_warn_and_run(project: Path, mixed: Path) -> None:
    path = pyproject(project, 'select = ["F"]\ncolour = "red"\n')
    result = lint()
    assert result.exit_code == 0
    assert f"warning: {path}: unknown setting `lint.colour` ignored" in result.stderr
    assert "F008" in result.stdout  # the known keys still apply


# --- suppressions in frontmatter -------------------------------------------------------------------


def test_frontmatter_list_and_string_suppressions(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("feedback_a.md", body="Ship it tomorrow.\n", updated="2026-11-20", **{"memdir-ignore": "[B003, B001]"})
    make_memory("feedback_b.md", body="Ship it tomorrow.\n", updated="2026-11-20", **{"memdir-ignore": '"B002, B003"'})
    make_memory("feedback_c.md", body="Ship it tomorrow.\n", updated="2026-11-20", **{"memdir-ignore": "[B]"})
    indexed(folder)
    report = MemoryDir(folder, today=TODAY).lint()
    assert {(f.code, f.path) for f in report.findings} == {("B002", "feedback_a.md"), ("B001", "feedback_b.md")}


def test_frontmatter_suppression_covers_its_own_file_only(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_a.md", body="Moved tomorrow.\n", updated="2026-11-20", **{"memdir-ignore": "[B003]"})
    make_memory("user_b.md", body="Moved tomorrow.\n", updated="2026-11-20")
    indexed(folder)
    report = MemoryDir(folder, today=TODAY).lint()
    assert [(f.code, f.path) for f in report.findings] == [("B003", "user_b.md")]


# --- suppressions in MEMORY.md ---------------------------------------------------------------------


@pytest.fixture
def long_entries(folder: Path, make_memory: MakeMemory) -> Path:
    make_memory("user_role.md", description="Backend developer")
    (folder / "runbook.txt").write_text("Page the on-call.\n")
    return folder


def test_index_comment_alone_on_a_line_covers_the_whole_file(long_entries: Path) -> None:
    (long_entries / "MEMORY.md").write_text(
        f"<!-- memdir-ignore: I006, I002 -->\n- [role](user_role.md) — Backend developer\n{LONG_ENTRY}\n"
        f"{LONG_ENTRY.replace('runbook.txt', 'gone.txt')}\n"
    )
    report = MemoryDir(long_entries, today=TODAY).lint()
    assert [f.code for f in report.findings] == []


def test_index_comment_after_text_covers_that_line_only(long_entries: Path) -> None:
    (long_entries / "MEMORY.md").write_text(
        f"- [role](user_role.md) — Backend developer\n{LONG_ENTRY} <!-- memdir-ignore: I006 -->\n{LONG_ENTRY}\n"
    )
    report = MemoryDir(long_entries, today=TODAY).lint(extend_select=["I006"])  # I006 is off by default
    assert [(f.code, f.line) for f in report.findings] == [("I006", 3)]


# --- L001 ------------------------------------------------------------------------------------------


def test_l001_unused_suppression_and_one_naming_no_rule(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_a.md", **{"memdir-ignore": "[B003]"})  # no relative date any more
    make_memory("user_b.md", **{"memdir-ignore": "[not-a-rule]"})
    (folder / "MEMORY.md").write_text("<!-- memdir-ignore: I006 -->\n")
    indexed(folder)
    report = MemoryDir(folder, today=TODAY).lint(extend_select=["I006"])
    assert [(f.code, f.path, f.line, f.message) for f in report.findings] == [
        ("L001", "MEMORY.md", 1, "`memdir-ignore: I006` suppresses nothing; remove it"),
        ("L001", "user_a.md", 2, "`memdir-ignore: B003` suppresses nothing; remove it"),  # the field's line
        ("L001", "user_b.md", 2, "`memdir-ignore: not-a-rule` names no lint rule; remove it"),
    ]


def test_l001_silent_when_the_suppressed_rule_did_not_run(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_a.md", **{"memdir-ignore": "[B003]"})
    indexed(folder)
    linter = MemoryDir(folder, today=TODAY)
    assert [f.code for f in linter.lint().findings] == ["L001"]
    assert linter.lint(select=["L001"]).findings == []
    assert linter.lint(select=["L", "F"]).findings == []
    assert linter.lint(ignore=["B003"]).findings == []
    assert [f.code for f in linter.lint(select=["L001", "B003"]).findings] == ["L001"]


def test_l001_for_a_rule_name_that_names_no_rule_even_when_selected_alone(
    folder: Path, make_memory: MakeMemory
) -> None:
    make_memory("user_a.md", **{"memdir-ignore": "[B0003]"})
    indexed(folder)
    [finding] = MemoryDir(folder, today=TODAY).lint(select=["L001"]).findings
    assert finding.code == "L001" and "names no lint rule" in finding.message


def test_l001_silent_for_a_used_suppression(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_a.md", body="Moved tomorrow.\n", updated="2026-11-20", **{"memdir-ignore": "[relative-date]"})
    indexed(folder)
    assert MemoryDir(folder, today=TODAY).lint().findings == []


def test_l001_can_itself_be_ignored_per_file(project: Path, folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_a.md", **{"memdir-ignore": "[B003]"})
    indexed(folder)
    assert codes() == {"L001"}
    pyproject(project, '[tool.memdir.lint.per-file-ignores]\n"user_*.md" = ["L001"]\n')
    assert codes() == set()


def test_suppressions_in_the_cli_json(project: Path, folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_a.md", body="Moved tomorrow.\n", updated="2026-11-20", **{"memdir-ignore": "[B003]"})
    make_memory("user_b.md", **{"memdir-ignore": "[B003]"})
    indexed(folder)
    assert found() == {("L001", "user_b.md")}

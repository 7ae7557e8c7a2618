"""R001 in a real git repository, S002 on a generated key, rule selection, and `memdir rules`."""

from __future__ import annotations

import json
import random
import re
import shutil
import string
import subprocess
from pathlib import Path

import pytest
from conftest import TODAY, MakeMemory
from typer.testing import CliRunner

from memdir import MemoryDir
from memdir.cli import app
from memdir.lint import RULES, Applicability
from memdir.lint.registry import matching_rules, resolve_selection

runner = CliRunner()
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=memdir tests", "-c", "user.email=tests@memdir.invalid", *args],
        check=True,
        capture_output=True,
    )


def r001(folder: Path) -> list[tuple[str, int | None, str]]:
    report = MemoryDir(folder, today=TODAY).lint(select=["R001"])
    return [(f.path, f.line, f.message) for f in report.findings]


# --- R001 stale-file-reference, in a git work tree ------------------------------------------------


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with src/billing/invoice.py tracked, src/billing/old.py committed then deleted,
    an untracked notes/todo.md, an ignored build/out.js, and the memory folder at .claude/memory."""
    root = tmp_path / "repo"
    (root / "src" / "billing").mkdir(parents=True)
    (root / "src" / "billing" / "invoice.py").write_text("def render(): ...\n")
    (root / "src" / "billing" / "old.py").write_text("def legacy(): ...\n")
    (root / ".gitignore").write_text("build/\n")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "initial")
    git(root, "rm", "-q", "src/billing/old.py")
    git(root, "commit", "-q", "-m", "remove old.py")
    (root / "notes").mkdir()
    (root / "notes" / "todo.md").write_text("- nothing\n")  # untracked, not ignored: it counts
    (root / "build").mkdir()
    (root / "build" / "out.js").write_text("compiled\n")  # ignored: build output does not count
    memory = root / ".claude" / "memory"
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text("")
    return memory


@needs_git
def test_r001_tracked_and_deleted_files(repo: Path, make_memory: MakeMemory) -> None:
    make_memory(
        "reference_billing.md",
        root=repo,
        description="Invoices are rendered in src/billing/invoice.py",
        body="The legacy path was `src/billing/old.py`.\nThe todo list is notes/todo.md (untracked).\n",
    )
    assert r001(repo) == [("reference_billing.md", 6, "names src/billing/old.py, which is not in the repository")]


@needs_git
def test_r001_ignored_build_output_does_not_count(repo: Path, make_memory: MakeMemory) -> None:
    """R001's doc: paths are matched against `git ls-files`, "so ignored build output does not count"."""
    make_memory("reference_bundle.md", root=repo, body="The bundle is build/out.js.\n")
    assert (repo.parents[1] / "build" / "out.js").is_file()
    assert r001(repo) == [("reference_bundle.md", 6, "names build/out.js, which is not in the repository")]


@needs_git
def test_r001_path_from_a_sub_folder_counts_as_present(repo: Path, make_memory: MakeMemory) -> None:
    make_memory("reference_a.md", root=repo, body="See billing/invoice.py and billing/invoice.py:12.\n")
    make_memory("reference_b.md", root=repo, body="See billing/gone.py.\n")
    assert r001(repo) == [("reference_b.md", 6, "names billing/gone.py, which is not in the repository")]


@needs_git
def test_r001_ignores_urls_absolute_and_home_paths(repo: Path, make_memory: MakeMemory) -> None:
    body = (
        "Docs: https://example.com/docs/page.html and example.com/guide/intro.html.\n"
        "Config: /etc/nginx/nginx.conf and ~/.config/app/settings.json.\n"
        "A file URL file:///srv/app/main.py and an e-mail path user@host:repo/file.py.\n"
    )
    make_memory("reference_a.md", root=repo, body=body)
    assert r001(repo) == []


@needs_git
def test_r001_relative_links(repo: Path, make_memory: MakeMemory) -> None:
    body = (
        "Present: [invoice](../../src/billing/invoice.py).\n"
        "Gone: [old](../../src/billing/old.py).\n"
        "Outside the repository, not judged: ../../../elsewhere/tool.py\n"
    )
    make_memory("reference_links.md", root=repo, body=body)
    assert r001(repo) == [("reference_links.md", 7, "names ../../src/billing/old.py, which is not in the repository")]


@needs_git
def test_r001_reports_a_path_once_per_memory(repo: Path, make_memory: MakeMemory) -> None:
    make_memory("reference_a.md", root=repo, body="src/gone/a.py, then src/gone/a.py again.\n")
    make_memory("reference_b.md", root=repo, body="src/gone/a.py\n")
    assert [(path, line) for path, line, _ in r001(repo)] == [("reference_a.md", 6), ("reference_b.md", 6)]


def test_r001_outside_a_repository_checks_nothing(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("reference_a.md", body="See src/never/existed.py.\n")
    assert r001(folder) == []


@needs_git
def test_r001_runs_by_default_and_in_the_cli(repo: Path, make_memory: MakeMemory) -> None:
    make_memory("reference_a.md", root=repo, body="See src/never/existed.py.\n")
    MemoryDir(repo, today=TODAY).write_index()
    result = runner.invoke(app, ["--dir", str(repo), "lint", "--format", "json"])
    data = json.loads(result.stdout)
    assert [(f["code"], f["path"], f["line"]) for f in data["findings"]] == [("R001", "reference_a.md", 6)]
    assert result.exit_code == 0  # a warning
    assert runner.invoke(app, ["--dir", str(repo), "lint", "--strict"]).exit_code == 1


# --- S002 on a key generated at run time (kept out of the fixture table on purpose) ---------------


def test_s002_reports_a_generated_key(folder: Path, make_memory: MakeMemory) -> None:
    rng = random.Random(7)
    key = "gh" + "p_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))
    make_memory("reference_ci.md", body=f"CI pushes with {key} for now.\n")
    make_memory("reference_vault.md", body="The CI token is in the vault, item `ci-push`.\n")
    report = MemoryDir(folder, today=TODAY).lint(select=["S002"])
    [finding] = report.findings
    assert (finding.path, finding.line) == ("reference_ci.md", 6)
    assert key not in finding.message and "ghp_" in finding.message


# --- rule selection ------------------------------------------------------------------------------


def codes(rules: list) -> list[str]:  # type: ignore[type-arg]
    return [r.code for r in rules]


def test_all_selects_every_rule() -> None:
    assert codes(resolve_selection(["ALL"])) == sorted(RULES)
    assert codes(resolve_selection(["all"])) == sorted(RULES)
    assert codes(resolve_selection()) == sorted(code for code, r in RULES.items() if r.default)


def test_prefixes_codes_and_names() -> None:
    assert codes(resolve_selection(["F"])) == sorted(c for c in RULES if c.startswith("F"))
    assert codes(resolve_selection(["I00"])) == sorted(c for c in RULES if c.startswith("I00"))
    assert codes(resolve_selection(["b003"])) == ["B003"]
    assert codes(resolve_selection(["missing-why", "C001"])) == ["B001", "C001"]
    assert codes(resolve_selection(["B"], ignore=["relative-date", "B004"])) == ["B001", "B002"]


def test_extend_select_adds_and_ignore_wins() -> None:
    assert codes(resolve_selection(["B001"], extend_select=["F008"])) == ["B001", "F008"]
    assert codes(resolve_selection(["B"], ignore=["B"], extend_select=["B001"])) == []
    assert codes(resolve_selection(["ALL"], ignore=["ALL"])) == []


@pytest.mark.parametrize("selector", ["Z9", "F9", "F0010", "missing_why", "Missing-Why", " "])
def test_unknown_selector_is_a_value_error(selector: str) -> None:
    with pytest.raises(ValueError, match="no lint rule matches"):
        matching_rules(selector)


def test_empty_selector_names_no_rule(folder: Path, make_memory: MakeMemory) -> None:
    """An empty string is not a prefix of every code: `ignore=[""]` must not switch every rule off."""
    make_memory("user_x.md", description="x" * 151)  # F008, which `ignore=[""]` silently hides today
    with pytest.raises(ValueError, match="no lint rule matches"):
        matching_rules("")
    with pytest.raises(ValueError, match="no lint rule matches"):
        MemoryDir(folder, today=TODAY).lint(ignore=[""])


@pytest.mark.parametrize("where", ["select", "ignore", "extend_select"])
def test_unknown_selector_in_the_library(folder: Path, where: str) -> None:
    with pytest.raises(ValueError, match="no lint rule matches 'Z9'"):
        MemoryDir(folder, today=TODAY).lint(**{where: ["Z9"]})


@pytest.mark.parametrize("option", ["--select", "--ignore", "--extend-select"])
def test_unknown_selector_in_the_cli_exits_2(folder: Path, option: str) -> None:
    result = runner.invoke(app, ["--dir", str(folder), "lint", option, "B001,Z9"])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == "memdir: error: no lint rule matches 'Z9'; `memdir rules` lists them\n"


def test_cli_selectors_are_comma_separated_or_repeated(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("feedback_x.md", body="Ship it tomorrow.\n", updated="2026-11-20", description="x" * 151)
    MemoryDir(folder, today=TODAY).write_index()

    def found(*args: str) -> set[str]:
        result = runner.invoke(app, ["--dir", str(folder), "lint", "--format", "json", *args])
        return {f["code"] for f in json.loads(result.stdout)["findings"]}

    assert found() == {"B001", "B002", "B003", "F008"}
    assert found("--select", "B001, F008") == {"B001", "F008"}
    assert found("--select", "B001", "--select", "relative-date") == {"B001", "B003"}
    assert found("--ignore", "B,F") == set()


# --- memdir rules --------------------------------------------------------------------------------


def test_rules_table_has_a_fix_column() -> None:
    result = runner.invoke(app, ["rules"], env={"COLUMNS": "220"})
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    header = lines[0]
    assert header.split() == ["code", "name", "severity", "fix", "what", "it", "finds"]
    start, end = header.index("fix"), header.index("what it finds")
    rows = {line[:4]: line for line in lines[1:] if re.match(r"^[A-Z]\d{3} ", line)}
    assert set(rows) == set(RULES)
    for code, rule in RULES.items():
        cell = rows[code][start:end].strip()
        assert cell == (rule.fixable.value if rule.fixable else ""), (code, cell)
    assert rows["B003"][start:end].strip() == "safe" and rows["I002"][start:end].strip() == "unsafe"
    assert rows["B001"][start:end].strip() == ""


def test_rules_json_has_fixable() -> None:
    data = json.loads(runner.invoke(app, ["rules", "--format", "json"]).stdout)
    by_code = {r["code"]: r for r in data}
    assert set(by_code) == set(RULES)
    assert by_code["B004"]["fixable"] == "safe" and by_code["I002"]["fixable"] == "unsafe"
    assert by_code["C001"]["fixable"] is None and by_code["C001"]["fix"] == "None; this needs a person's judgement."


def test_rules_code_prints_every_section() -> None:
    result = runner.invoke(app, ["rules", "B003"])
    assert result.exit_code == 0
    assert result.stdout == (
        "B003 relative-date (warning, safe fix)\n\n"
        f"What it does: {RULES['B003'].summary}\n\n"
        f"Why it matters: {RULES['B003'].why}\n\n"
        "Example:\n\n    The release freeze starts next Thursday. The webhook failed last week.\n\n"
        "Instead:\n\n    The release freeze starts 2026-11-26. The webhook failed the week of 2026-11-09.\n\n"
        f"Fix: {RULES['B003'].fix}\n"
    )
    assert "Safe wherever the file has an age" in RULES["B003"].fix  # its date, its mtime or its last commit


@pytest.mark.parametrize("code", sorted(RULES))
def test_every_rule_explains_itself(code: str) -> None:
    rule = RULES[code]
    result = runner.invoke(app, ["rules", code])
    assert result.exit_code == 0
    out = result.stdout
    fix = f", {rule.fixable.value} fix" if rule.fixable else ""
    assert out.startswith(f"{code} {rule.name} ({rule.severity.value}{fix})\n\n")
    positions = [
        out.index(h) for h in ("What it does: ", "Why it matters: ", "\nExample:\n", "\nInstead:\n", "\nFix: ")
    ]
    assert positions == sorted(positions)
    assert (rule.fixable is None) == ("needs a person's judgement" in out)
    if rule.fixable is Applicability.UNSAFE:
        assert "unsafe" in out.split("\nFix: ", 1)[1]


def test_rules_by_name_and_lower_case_code() -> None:
    by_code = runner.invoke(app, ["rules", "B003"]).stdout
    assert runner.invoke(app, ["rules", "relative-date"]).stdout == by_code
    assert runner.invoke(app, ["rules", "b003"]).stdout == by_code


def test_rules_unknown_code_exits_2() -> None:
    result = runner.invoke(app, ["rules", "Z999"])
    assert result.exit_code == 2
    assert result.stderr == "memdir: error: no rule 'Z999'; `memdir rules` lists them\n"

"""The lint fixture table (tests/lint_fixtures/eval.yaml): every case, every rule covered, one text snapshot.

Each case is a small memory folder; eval.yaml says which codes it must and must not trigger. A rule
registered without a case that triggers it fails `test_every_rule_has_a_fixture`, unless it is in
TESTED_ELSEWHERE with the reason and the test that covers it.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from memdir import MemoryDir
from memdir.cli import app
from memdir.core.index import Caps
from memdir.lint import RULES, Finding

FIXTURES = Path(__file__).parent / "lint_fixtures"
TABLE = FIXTURES / "eval.yaml"
SNAPSHOT = Path(__file__).parent / "snapshots" / "lint_text.txt"
SNAPSHOT_CASE = "rich"
TODAY = dt.date(2026, 11, 22)

# Rules that cannot be a static folder in the table, and where they are tested instead.
TESTED_ELSEWHERE = {
    # Needs the folder inside a git work tree (`git ls-files`): test_lint_rules_more.py, test_r001_*.
    "R001": "needs a git repository",
    # Needs CLAUDE.md at the project root, above the copied folder: test_lint_claude_md.py.
    "D004": "needs a CLAUDE.md outside the memory folder",
    # A fixture holding a credential-shaped string would trip secret scanners (push protection) on this
    # repository; the fake keys are generated at run time: test_lint_formats.py,
    # test_secret_is_masked_in_every_format, and test_lint_rules_more.py, test_s002_reports_a_generated_key.
    "S002": "needs a secret generated at run time",
    # The same, in a file name: test_outward.py, test_lint_s009_names_the_file_and_no_format_writes_the_key.
    "S009": "needs a secret in a file name, made at run time",
}


@dataclass(frozen=True)
class Expect:
    code: str
    fields: dict[str, Any] = field(default_factory=dict)  # file, line, message: only those given are checked

    def matches(self, f: Finding) -> bool:
        if f.code != self.code:
            return False
        if "file" in self.fields and f.path != self.fields["file"]:
            return False
        if "line" in self.fields and f.line != self.fields["line"]:
            return False
        return "message" not in self.fields or str(self.fields["message"]) in f.message

    def __str__(self) -> str:
        return " ".join([self.code, *(f"{k}={v!r}" for k, v in self.fields.items())])


def _expect(entry: Any) -> Expect:
    if isinstance(entry, str):
        return Expect(entry)
    assert isinstance(entry, dict) and "code" in entry, f"bad entry in eval.yaml: {entry!r}"
    unknown = set(entry) - {"code", "file", "line", "message"}
    assert not unknown, f"unknown keys {unknown} in eval.yaml entry {entry!r}"
    return Expect(entry["code"], {k: v for k, v in entry.items() if k != "code"})


def load_table() -> list[dict[str, Any]]:
    cases = yaml.safe_load(TABLE.read_text(encoding="utf-8"))["cases"]
    assert isinstance(cases, list) and cases
    return cases


CASES = load_table()


def copy_case(case: dict[str, Any], tmp_path: Path) -> Path:
    """The case's folder copied to tmp_path/memory, with the symlinks the case asks for."""
    root = tmp_path / "memory"
    shutil.copytree(FIXTURES / case["case"], root, symlinks=True)
    for link, target in (case.get("symlinks") or {}).items():
        (root / link).symlink_to(target)
    return root


def run_case(case: dict[str, Any], root: Path) -> list[Finding]:
    caps = Caps(**case["caps"]) if case.get("caps") else Caps()
    return MemoryDir(root, today=TODAY, caps=caps).lint(extend_select=["ALL"]).findings


def _describe(findings: list[Finding]) -> str:
    return "\n".join(f"  {f.code} {f.path}:{f.line} {f.message}" for f in findings) or "  (no findings)"


@pytest.mark.parametrize("case", CASES, ids=[c["case"] for c in CASES])
def test_fixture_case(case: dict[str, Any], tmp_path: Path) -> None:
    unknown = set(case) - {"case", "about", "must", "must_not", "exact", "caps", "symlinks"}
    assert not unknown, f"unknown keys {unknown} in case {case['case']}"
    findings = run_case(case, copy_case(case, tmp_path))
    must = [_expect(e) for e in case.get("must") or []]
    must_not = [_expect(e) for e in case.get("must_not") or []]
    problems = [f"missing: {e}" for e in must if not any(e.matches(f) for f in findings)]
    problems += [f"unexpected: {e}" for e in must_not if any(e.matches(f) for f in findings)]
    if case.get("exact"):
        extra = sorted({f.code for f in findings} - {e.code for e in must})
        problems += [f"unexpected (exact): {code}" for code in extra]
    assert not problems, "\n".join(problems) + f"\nreported:\n{_describe(findings)}"


def test_every_rule_has_a_fixture() -> None:
    """A rule registered without a case that triggers it fails here: add a case to eval.yaml."""
    triggered = {_expect(e).code for case in CASES for e in case.get("must") or []}
    missing = sorted(set(RULES) - triggered - set(TESTED_ELSEWHERE))
    assert not missing, f"rules with no case in tests/lint_fixtures/eval.yaml that triggers them: {missing}"


def test_allow_list_is_current() -> None:
    """TESTED_ELSEWHERE names registered rules only, and none that the table covers after all."""
    triggered = {_expect(e).code for case in CASES for e in case.get("must") or []}
    assert set(TESTED_ELSEWHERE) <= set(RULES)
    assert not set(TESTED_ELSEWHERE) & triggered


def test_table_names_registered_codes_and_existing_folders() -> None:
    names = [c["case"] for c in CASES]
    assert len(names) == len(set(names)), "a case is listed twice"
    folders = {p.name for p in FIXTURES.iterdir() if p.is_dir()}
    assert folders == set(names), f"folders without a case: {folders - set(names)}; cases without a folder: " + str(
        set(names) - folders
    )
    for case in CASES:
        for entry in [*(case.get("must") or []), *(case.get("must_not") or [])]:
            assert _expect(entry).code in RULES, f"{case['case']}: {entry!r} names no registered rule"


def test_near_miss_cases_cover_every_family() -> None:
    """Each family of the table has a case that must stay silent for it."""
    silent = {_expect(e).code[0] for case in CASES if not case.get("must") for e in case.get("must_not") or []}
    families = {code[0] for code in RULES} - {"R"}  # R001 near misses are in test_lint_rules_more.py
    assert families <= silent, f"families without a near-miss case: {sorted(families - silent)}"


# --- the text report, as a snapshot ------------------------------------------------------------------

runner = CliRunner()


def test_text_report_snapshot(tmp_path: Path) -> None:
    """`memdir lint` on the rich fixture, byte for byte. MEMDIR_UPDATE_SNAPSHOTS=1 rewrites the file."""
    case = next(c for c in CASES if c["case"] == SNAPSHOT_CASE)
    copy_case(case, tmp_path)
    old = Path.cwd()
    os.chdir(tmp_path)  # paths in the report are relative to the working directory: memory/...
    try:
        result = runner.invoke(app, ["--dir", "memory", "lint"])
    finally:
        os.chdir(old)
    assert result.exit_code == 1, result.output
    text = result.stdout.replace(str(tmp_path), "<tmp>")
    assert "memory/" in text and "<tmp>" not in text  # relative paths, nothing machine-specific
    if os.environ.get("MEMDIR_UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.parent.mkdir(exist_ok=True)
        SNAPSHOT.write_text(text, encoding="utf-8")
    assert SNAPSHOT.exists(), "no snapshot yet: run with MEMDIR_UPDATE_SNAPSHOTS=1 and review the file"
    assert text == SNAPSHOT.read_text(encoding="utf-8"), (
        "the text report changed; if that is intended, rerun with MEMDIR_UPDATE_SNAPSHOTS=1 and review the diff"
    )

"""`memdir lint` report formats: text, concise, json, github, sarif; --output-file and MEMDIR_OUTPUT_FORMAT."""

from __future__ import annotations

import json
import random
import re
import shutil
import string
from pathlib import Path
from typing import Any

import pytest
from conftest import TODAY, MakeMemory, invoke_memdir

from memdir import MemoryDir
from memdir.lint import RULES, Applicability, LintReport, Severity
from memdir.lint.registry import Finding
from memdir.lint.report import json_pieces, render_github, render_json, render_text

FIXTURES = Path(__file__).parent / "lint_fixtures"
SARIF_SCHEMA = Path(__file__).parent / "data" / "sarif-2.1.0-subset.schema.json"
FORMATS = ("text", "concise", "json", "github", "sarif")


memdir = invoke_memdir


@pytest.fixture
def rich(tmp_path: Path) -> Path:
    """The rich fixture at tmp_path/memory; commands run from tmp_path see paths as memory/..."""
    root = tmp_path / "memory"
    shutil.copytree(FIXTURES / "rich", root)
    return root


def lint_in(root: Path, *args: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return memdir("--dir", root.name, "lint", *args, cwd=root.parent, env=env)


# --- text and concise ------------------------------------------------------------------------------


def test_text_lines_and_summary(rich: Path) -> None:
    result = lint_in(rich)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert (
        "memory/feedback_lint.md:9: B004 [*] [info] label 'Why:' is not in the form '**Why:**' (label-format)" in lines
    )
    assert "memory/notes.md: F001 [warning] has no frontmatter, so it is not a memory (missing-frontmatter)" in lines
    pattern = re.compile(r"^memory/[^:]+(:\d+)?: [A-Z]\d{3}( \[\*\])? \[(error|warning|info)\] .+ \([a-z-]+\)$")
    assert all(pattern.match(line) for line in lines[:-1]), lines
    assert lines[-1] == (
        "Found 15 issues (7 errors, 6 warnings, 2 info); 7 files checked. 8 fixable with `memdir lint --fix`, "
        "1 more with `memdir lint --fix --unsafe-fixes`."
    )


def test_text_star_marks_what_fix_can_fix(rich: Path) -> None:
    """render_text: "`[*]` marks what --fix can fix"; an unsafe fix needs --unsafe-fixes as well."""
    starred = {line.split(": ")[1].split(" ")[0] for line in lint_in(rich).stdout.splitlines() if " [*] " in line}
    safe = {f.code for f in MemoryDir(rich, today=TODAY).lint().findings if f.fixable is Applicability.SAFE}
    assert safe == {"B003", "B004", "I001", "I003"}
    assert starred == safe, f"marked [*] but not fixed by --fix: {sorted(starred - safe)}"


def test_text_when_clean(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_a.md")
    MemoryDir(folder, today=TODAY).write_index()
    result = memdir("--dir", str(folder), "lint")
    assert result.exit_code == 0
    assert result.stdout == "All checks passed: 1 memory in 2 files.\n"


def test_concise_one_line_a_finding_and_no_summary(rich: Path) -> None:
    result = lint_in(rich, "--format", "concise")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert len(lines) == 15
    assert (
        "memory/feedback_lint.md:7: B003 relative date 'next Thursday': write the date "
        "(2026-11-26, counting from its date 2026-11-20)"
    ) in lines
    assert "memory/notes.md: F001 has no frontmatter, so it is not a memory" in lines
    assert all(re.match(r"^memory/[^:]+(:\d+)?: [A-Z]\d{3} \S", line) for line in lines)
    assert not any(line.startswith(("Found", "All checks")) for line in lines)


# --- json -------------------------------------------------------------------------------------------


def test_json_schema_is_stable(rich: Path) -> None:
    result = lint_in(rich, "--format", "json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert list(data) == ["folder", "findings", "summary"]
    assert data["folder"] == str(rich)
    for finding in data["findings"]:
        assert list(finding) == ["code", "name", "severity", "path", "line", "message", "fix"]
        assert finding["code"] in RULES and finding["name"] == RULES[finding["code"]].name
        assert finding["severity"] in ("error", "warning", "info")
        assert not finding["path"].startswith(("/", "memory/")), "paths are relative to the folder"
        assert finding["line"] is None or (isinstance(finding["line"], int) and finding["line"] >= 1)
        assert finding["fix"] is None or (
            set(finding["fix"]) == {"applicability", "description"}
            and finding["fix"]["applicability"] in ("safe", "unsafe")
        )
    by_code = {f["code"]: f for f in data["findings"]}
    assert by_code["I002"]["fix"] == {
        "applicability": "unsafe",
        "description": "remove the entry for project_old-deploy.md",
    }
    assert by_code["B003"]["fix"] == {"applicability": "safe", "description": "replace 'next Thursday' with 2026-11-26"}
    assert by_code["F001"] == {
        "code": "F001", "name": "missing-frontmatter", "severity": "warning", "path": "notes.md", "line": None,
        "message": "has no frontmatter, so it is not a memory", "fix": None,
    }  # fmt: skip
    assert data["summary"] == {
        "files": 7, "memories": 5, "findings": 15, "errors": 7, "warnings": 6, "info": 2, "fixable": 8,
        "by_code": {"B001": 1, "B002": 1, "B003": 1, "B004": 2, "C003": 1, "C007": 1, "D001": 1, "F001": 1,
                    "I001": 1, "I002": 1, "I003": 4},
    }  # fmt: skip


# --- github -----------------------------------------------------------------------------------------


def test_github_workflow_commands(rich: Path) -> None:
    result = lint_in(rich, "--format", "github")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert len(lines) == 15
    assert (
        "::notice file=memory/feedback_lint.md,line=9,title=B004 label-format::"
        "label 'Why:' is not in the form '**Why:**'"  # ':' and ',' are not escaped in the message
    ) in lines
    assert (
        "::warning file=memory/notes.md,title=F001 missing-frontmatter::has no frontmatter, so it is not a memory"
        in lines
    )
    assert (
        "::error file=memory/MEMORY.md,line=4,title=I002 broken-index-link::"
        "links to project_old-deploy.md, which does not exist"
    ) in lines
    command = re.compile(r"^::(error|warning|notice) file=[^,:]+(,line=\d+)?,title=[A-Z]\d{3} [a-z-]+::.+$")
    assert all(command.match(line) for line in lines), lines


def test_github_escapes_properties_and_data(folder: Path, make_memory: MakeMemory) -> None:
    """Per GitHub's toolkit: data escapes % CR LF; properties also escape : and ,."""
    make_memory("user_a,b:c%3A.md", name='"50%, sure: yes"', description="d")  # sorts before user_a.md
    make_memory("user_a.md", name='"50%, sure: yes"', description="d")
    result = memdir("--dir", "memory", "lint", "--format", "github", "--select", "D001,I003", cwd=folder.parent)
    assert result.stdout == (
        "::error file=memory/user_a%2Cb%3Ac%253A.md,title=I003 unindexed-memory::"
        "not listed in MEMORY.md; run `memdir index`\n"
        "::error file=memory/user_a.md,title=I003 unindexed-memory::not listed in MEMORY.md; run `memdir index`\n"
        "::error file=memory/user_a.md,line=2,title=D001 duplicate-name::"
        "same name '50%25, sure: yes' as user_a,b:c%253A.md\n"
    )


def test_github_escapes_newlines_in_messages() -> None:
    finding = Finding("F002", "invalid-frontmatter", Severity.ERROR, "a.md", 3, "bad YAML:\r\n  line 3, col 5\n100%")
    out = render_github(LintReport([finding], files=1, memories=0), lambda p: f"dir:x/{p}")
    assert out == (
        "::error file=dir%3Ax/a.md,line=3,title=F002 invalid-frontmatter::bad YAML:%0D%0A  line 3, col 5%0A100%25\n"
    )
    assert out.count("\n") == 1


# --- sarif ------------------------------------------------------------------------------------------


def sarif_validator() -> Any:
    try:
        import jsonschema
    except ImportError:
        pytest.fail("jsonschema is not installed: install the `test` extra (jsonschema, rfc3986-validator)")
    validator = jsonschema.Draft7Validator(
        json.loads(SARIF_SCHEMA.read_text()), format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER
    )
    # Without rfc3986-validator (or rfc3987) jsonschema skips `uri-reference` silently.
    if "uri-reference" not in validator.format_checker.checkers:
        pytest.fail("jsonschema cannot check `uri-reference`: install rfc3986-validator (the `test` extra)")
    return validator


def errors(log: dict[str, Any]) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in sarif_validator().iter_errors(log)]


def test_the_schema_and_checker_can_fail() -> None:
    """The validator rejects what SARIF 2.1.0 forbids, so a pass below means something."""
    good = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "memdir"}}, "results": []}]}
    assert errors(good) == []
    location = {"physicalLocation": {"artifactLocation": {"uri": "memory/a b.md"}, "region": {"startLine": 0}}}
    bad: dict[str, Any] = {
        "version": "2.0.0",
        "runs": [
            {
                "tool": {"driver": {"name": "memdir", "rules": [{"id": "F001", "shortDescription": {}}]}},
                "results": [{"ruleIndex": -2, "level": "fatal", "message": {"text": "x"}, "locations": [location]}],
                "colour": "red",
            }
        ],
    }
    found = "\n".join(errors(bad))
    for expected in ("version", "'text' is a required property", "-2", "'fatal'", "'colour'", "a b.md", "startLine"):
        assert expected in found, f"{expected!r} not rejected:\n{found}"


def test_sarif_validates_and_matches_the_findings(rich: Path) -> None:
    result = lint_in(rich, "--format", "sarif")
    assert result.exit_code == 1
    log = json.loads(result.stdout)
    assert errors(log) == []
    [run] = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "memdir" and driver["version"]
    assert [r["id"] for r in driver["rules"]] == sorted(RULES)
    results = run["results"]
    assert len(results) == 15
    level = {"error": "error", "warning": "warning", "info": "note"}
    for r in results:
        assert driver["rules"][r["ruleIndex"]]["id"] == r["ruleId"]
        assert r["level"] == level[RULES[r["ruleId"]].severity.value]
        assert r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].startswith("memory/")
    b004 = next(r for r in results if r["ruleId"] == "B004")
    assert b004["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "memory/feedback_lint.md"},
        "region": {"startLine": 9},
    }
    f001 = next(r for r in results if r["ruleId"] == "F001")
    assert "region" not in f001["locations"][0]["physicalLocation"]


def test_sarif_uri_outside_the_working_directory_is_a_file_uri(rich: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = memdir("--dir", str(rich), "lint", "--format", "sarif", cwd=elsewhere)
    log = json.loads(result.stdout)
    assert errors(log) == []
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]}
    assert (rich / "notes.md").as_uri() in uris


def test_sarif_uri_of_a_file_name_with_a_space_is_valid(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_my notes.md", description="x" * 151)  # F008
    MemoryDir(folder, today=TODAY).write_index()
    result = memdir("--dir", "memory", "lint", "--format", "sarif", cwd=folder.parent)
    log = json.loads(result.stdout)
    [uri] = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]}
    assert errors(log) == [], f"artifactLocation.uri {uri!r} is not a valid URI reference"
    assert uri == "memory/user_my%20notes.md"


def test_sarif_of_a_clean_folder(folder: Path) -> None:
    log = json.loads(memdir("--dir", str(folder), "lint", "--format", "sarif").stdout)
    assert errors(log) == [] and log["runs"][0]["results"] == []


# --- --output-file and MEMDIR_OUTPUT_FORMAT ---------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_output_file_keeps_stdout_empty(rich: Path, tmp_path: Path, fmt: str) -> None:
    target = tmp_path / "report.out"
    result = lint_in(rich, "--format", fmt, "--output-file", str(target))
    assert result.exit_code == 1  # the findings still fail the run
    assert result.stdout == ""
    assert f"Wrote the {fmt} report (15 findings) to {target}" in result.stderr
    assert target.read_text() == lint_in(rich, "--format", fmt).stdout


def test_output_format_from_the_environment(rich: Path) -> None:
    from_env = lint_in(rich, env={"MEMDIR_OUTPUT_FORMAT": "json"})
    assert json.loads(from_env.stdout)["summary"]["findings"] == 15
    overridden = lint_in(rich, "--format", "concise", env={"MEMDIR_OUTPUT_FORMAT": "json"})
    assert overridden.stdout.startswith("memory/")
    assert "Found" not in overridden.stdout
    overridden = lint_in(rich, "--output-format", "text", env={"MEMDIR_OUTPUT_FORMAT": "sarif"})
    assert overridden.stdout.splitlines()[-1].startswith("Found 15 issues")
    bad = lint_in(rich, env={"MEMDIR_OUTPUT_FORMAT": "yaml"})  # no command has it: a usage error
    assert bad.exit_code == 2 and bad.stdout == ""
    assert bad.stderr.strip() == (
        "memdir: error: MEMDIR_OUTPUT_FORMAT must be one of text, json, concise, github, sarif, markdown, xml, "
        "not 'yaml'"
    )
    other = lint_in(rich, env={"MEMDIR_OUTPUT_FORMAT": "xml"})  # `context`'s: lint falls back to text
    assert other.exit_code == 1 and other.stdout.splitlines()[-1].startswith("Found 15 issues")


# --- secrets never reach a report unmasked ------------------------------------------------------------

RNG = random.Random(20261122)


def _rand(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(n))


def fake_secrets() -> list[str]:
    """Credential-shaped values built at run time, so this file holds nothing a secret scanner flags."""
    return [
        "sk-" + "ant-api03-" + _rand(93) + "AA",
        "gh" + "p_" + _rand(36),
        "AK" + "IA" + _rand(16, string.ascii_uppercase + string.digits),
        _rand(20) + "x9Q",  # as a password in a URL
    ]


def test_secret_is_masked_in_every_format(folder: Path, make_memory: MakeMemory) -> None:
    anthropic, github, aws, password = fake_secrets()
    body = (
        f"The staging key is {anthropic}.\n\nexport GITHUB_TOKEN={github}\n\n"
        f"AWS key id {aws}; the database is postgres://app:{password}@db.internal:5432/app\n"
    )
    make_memory("reference_keys.md", body=body)
    MemoryDir(folder, today=TODAY).write_index()
    secrets = (anthropic, github, aws, password)
    for fmt in FORMATS:
        result = memdir("--dir", str(folder), "lint", "--format", fmt)
        output = result.stdout + result.stderr
        assert result.exit_code == 1, (fmt, result.output)
        assert "S002" in output, f"{fmt}: the secrets were not reported"
        for value in secrets:
            assert value not in output, f"{fmt} shows a secret unmasked"
            assert value[8:24] not in output, f"{fmt} shows a long piece of a secret"
    report = json.loads(memdir("--dir", str(folder), "lint", "--format", "json", "--select", "S002").stdout)
    assert len(report["findings"]) >= 4
    assert all("…" in f["message"] for f in report["findings"])


def test_summary_counts_agree_with_their_nouns(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("project_b.md", expires="2026-02-30", body="Facts.\n\n**Why:** x.\n\n**How to apply:** y.\n")
    report = MemoryDir(folder, today=TODAY).lint(select=["F011"])
    assert render_text(report).splitlines()[-1] == "Found 1 issue (1 error, 0 warnings, 0 info); 2 files checked."


def test_json_pieces_make_the_report_of_thousands_of_findings(tmp_path: Path) -> None:
    # The CLI writes --format json as it is made, a thousand findings a piece: the pieces joined are
    # the report, commas right across the pieces' seams, and no piece holds more than its thousand.
    findings = [Finding("B003", "relative-date", Severity.WARNING, f"m{n}.md", n, f"明天 {n}") for n in range(2_500)]
    report = LintReport(findings, files=2_500, memories=2_500)
    pieces = list(json_pieces(report, tmp_path))
    assert "".join(pieces) == render_json(report, tmp_path)
    assert json.loads("".join(pieces)) == {"folder": str(tmp_path), **report.to_dict()}
    assert len(pieces) == 4 and max(piece.count('"code"') for piece in pieces) == 1_000
    empty = LintReport([], files=0, memories=0)
    assert json.loads("".join(json_pieces(empty, tmp_path)))["findings"] == []

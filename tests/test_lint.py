"""Each core lint rule: a case that finds something and a case that is clean."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import TODAY, MakeMemory

from memdir import MemoryDir
from memdir.core.config import Config
from memdir.lint import RULES, Severity
from memdir.lint.body import has_label

GOOD_FEEDBACK = "Rule.\n\n**Why:** reason.\n\n**How to apply:** always.\n"


def findings(folder: Path, code: str, config: Config | None = None) -> list[tuple[str, int | None, str]]:
    report = MemoryDir(folder, config=config, today=TODAY).lint(select=[code])
    return [(f.path, f.line, f.message) for f in report.findings]


def indexed(folder: Path) -> None:
    MemoryDir(folder, today=TODAY).write_index()


def test_every_rule_has_identity_and_doc() -> None:
    assert len(RULES) >= 18
    for code, r in RULES.items():
        assert code == r.code and r.code[0].isupper() and r.code[1:].isdigit() and len(r.code) == 4
        assert r.name == r.name.lower() and " " not in r.name
        assert len(r.doc) > 80 and r.summary.endswith(".")


def test_f001_missing_frontmatter(folder: Path) -> None:
    (folder / "notes.md").write_text("# Notes\n")
    assert findings(folder, "F001") == [("notes.md", None, "has no frontmatter, so it is not a memory")]
    (folder / "notes.md").unlink()
    assert findings(folder, "F001") == []


def test_f002_invalid_frontmatter(folder: Path, make_memory: MakeMemory) -> None:
    # A value that opens with a quote and goes on: neither YAML nor Claude Code's retry reads it.
    (folder / "feedback_bad.md").write_text('---\nname: x\ndescription: "Note" use npm\ntype: feedback\n---\n')
    [(path, line, message)] = findings(folder, "F002")
    assert (path, line) == ("feedback_bad.md", 3) and "invalid YAML" in message
    make_memory("feedback_bad.md", body=GOOD_FEEDBACK, description='"Note: use npm"')
    assert findings(folder, "F002") == []


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"\xff\xfe---\nname: x\n", "is not valid UTF-8 (byte 0xff at line 1)"),
        (b"---\nname: x\x00\n---\n", "is a binary file, not markdown"),
    ],
)
def test_f003_unreadable_file(folder: Path, content: bytes, expected: str) -> None:
    (folder / "user_x.md").write_bytes(content)
    assert [m for _, _, m in findings(folder, "F003")] == [expected]


def test_f003_directory_named_md_and_unreadable_index(folder: Path) -> None:
    (folder / "user_dir.md").mkdir()
    (folder / "MEMORY.md").write_bytes(b"\xff\n")
    found = findings(folder, "F003")
    assert ("user_dir.md", None, "is a directory, not a memory file") in found
    assert any(path == "MEMORY.md" and "not valid UTF-8" in message for path, _, message in found)


def test_f003_clean(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_x.md")
    assert findings(folder, "F003") == []


def test_f004_f005_missing_name_and_description(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_x.md", name='""', description=None)
    assert findings(folder, "F004") == [("user_x.md", 2, "`name` is empty (the index shows the file name instead)")]
    assert findings(folder, "F005") == [("user_x.md", 1, "no `description`: the index line will be a bare link")]
    make_memory("user_x.md")
    assert findings(folder, "F004") == findings(folder, "F005") == []


def test_f006_missing_type_suggests_from_file_name(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("feedback_x.md", type=None, body=GOOD_FEEDBACK)
    [(_, _, message)] = findings(folder, "F006")
    assert "the file name suggests `type: feedback`" in message
    make_memory("feedback_x.md", body=GOOD_FEEDBACK)
    assert findings(folder, "F006") == []


def test_f007_unknown_type_suggests_nearest(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("feedback_x.md", type="feedbak")
    make_memory("project_h.md", type="handoff")
    messages = sorted(m for _, _, m in findings(folder, "F007"))
    assert "did you mean `feedback`?" in messages[0]
    assert "use one of user, feedback, project, reference" in messages[1]


def test_f007_clean_with_nested_type(folder: Path) -> None:
    (folder / "x.md").write_text("---\nname: x\ndescription: d\nmetadata:\n  type: user\n---\nbody\n")
    assert findings(folder, "F007") == findings(folder, "F006") == []


def test_f008_long_description(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_x.md", description="x" * 151)
    assert findings(folder, "F008") == [("user_x.md", 2, "description is 151 characters (limit 150)")]
    make_memory("user_x.md", description="x" * 150)
    assert findings(folder, "F008") == []


def test_f011_invalid_field_value(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("project_a.md", expires="next week", importance="high")
    make_memory("project_b.md", created="2026-13-01", updated="2026-11-24 25:00:00", importance=5)
    make_memory("project_c.md", importance=True)
    make_memory("project_d.md", importance=".nan")
    assert findings(folder, "F011") == [
        ("project_a.md", 2, "`expires` is 'next week', not a date, so the memory never expires (write it as "
         "YYYY-MM-DD)"),
        ("project_a.md", 3, "`importance` is 'high', not a number from 0 to 1; memdir uses 0.5"),
        ("project_b.md", 2, "`created` is '2026-13-01', not a date, so the memory counts as undated (write it as "
         "YYYY-MM-DD)"),
        ("project_b.md", 3, "`updated` is '2026-11-24 25:00:00', not a date, so memdir reads only its day, 2026-11-24 "
         "(write it as YYYY-MM-DD)"),
        ("project_b.md", 4, "`importance` is 5, outside 0 to 1; memdir uses 1"),
        ("project_c.md", 2, "`importance` is 'True', not a number from 0 to 1; memdir uses 0.5"),
        ("project_d.md", 2, "`importance` is 'nan', not a number from 0 to 1; memdir uses 0.5"),
    ]  # fmt: skip


def test_f011_clean_with_every_form_of_date_and_importance(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("project_a.md", expires="2027-02-28", created="2026-01-01T09:30:00Z", importance=0)
    make_memory("project_b.md", updated='"2026-11-24 10:00"', modified="2026-11-24T10:00:00.000Z", importance=1)
    make_memory("project_c.md", updated_at="'2026-11-24'", importance=0.7)
    assert findings(folder, "F011") == []


def test_f012_stale_pending_supersede(folder: Path, make_memory: MakeMemory) -> None:
    pending = "{file: reference_old.md, digest: 3f2a9c1d0b7e6a54}"
    make_memory("reference_old.md")
    make_memory("reference_new.md", supersedes_on_accept=pending)  # quarantine lifted by hand
    make_memory("reference_waiting.md", status="quarantined", supersedes_on_accept=pending)
    assert findings(folder, "F012") == [
        ("reference_new.md", 2, "`supersedes_on_accept` on a memory that is active: nothing will apply it")
    ]


@pytest.mark.parametrize(
    "body",
    [
        GOOD_FEEDBACK,
        "Rule.\nWhy: reason\nHow to apply: always\n",
        "Rule.\n**Why**: reason\n**How to apply**: always\n",
        "규칙.\n**Why：** 이유\n**How to apply：** 항상\n",
        "Règle.\n**Pourquoi :** raison\n**Comment appliquer :** toujours\n",
        "Rule.\n\n## Why\nreason\n\n## How to apply\nalways\n",
        "- **Why:** reason\n- **How to apply:** always\n",
    ],
)
def test_b001_b002_accept_real_variants(folder: Path, make_memory: MakeMemory, body: str) -> None:
    make_memory("feedback_x.md", body=body)
    assert findings(folder, "B001") == findings(folder, "B002") == []


def test_b001_b002_missing(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("project_x.md", body="A fact.\n\nWhy this matters is obvious.\n")
    make_memory("user_u.md", body="No labels needed for user memories.\n")
    assert findings(folder, "B001") == [("project_x.md", 6, "project memory has no **Why:** line")]
    assert findings(folder, "B002") == [("project_x.md", 6, "project memory has no **How to apply:** line")]


def test_b001_configurable_translated_labels(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("feedback_x.md", body="Regel.\n**Begründung:** weil\n**Wann:** immer\n")
    assert len(findings(folder, "B001")) == 1
    config = Config(why_labels=("Why", "Begründung"), how_labels=("How to apply", "Wann"))
    assert findings(folder, "B001", config) == findings(folder, "B002", config) == []


def test_has_label_ignores_the_word_in_prose() -> None:
    assert not has_label("We asked why: nobody knew.", ("Why",))
    assert not has_label("Nobody knew why.\n", ("Why",))


def test_b003_relative_date_anchored_on_the_file_date(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_x.md", body="Line one.\nThe freeze starts next Thursday.\n", updated="2026-11-20")
    assert findings(folder, "B003") == [
        (
            "user_x.md",
            8,  # updated, name, description, type, two delimiters, then the body's second line
            "relative date 'next Thursday': write the date (2026-11-26, counting from its date 2026-11-20)",
        )
    ]
    make_memory("user_x.md", body="The freeze starts 2026-11-26. Use `--since yesterday` in code.\n")
    assert findings(folder, "B003") == []


def test_b003_falls_back_to_modification_time(folder: Path, make_memory: MakeMemory) -> None:
    path = make_memory("user_x.md", description="Ships tomorrow")
    stamp = 1_767_225_600  # 2026-01-01 00:00 UTC; local time may make it 2025-12-31
    os.utime(path, (stamp, stamp))
    [(_, line, message)] = findings(folder, "B003")
    assert line == 2 and "counting from its modification time" in message


def test_d001_duplicate_name(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_a.md", name="Role")
    make_memory("user_b.md", name="role")
    assert findings(folder, "D001") == [("user_b.md", 2, "same name 'role' as user_a.md")]
    make_memory("user_b.md", name="Other")
    assert findings(folder, "D001") == []
    make_memory("user_c.md", name="Lint before commit")
    make_memory("user_d.md", name="lint-before-commit")  # the name `add` would refuse
    assert [path for path, _, _ in findings(folder, "D001")] == ["user_d.md"]


def test_i001_stale_index(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_a.md")
    assert findings(folder, "I001") == [("MEMORY.md", 1, "out of date: `memdir index` would add 1 and remove 0 lines")]
    indexed(folder)
    assert findings(folder, "I001") == []
    (folder / "MEMORY.md").unlink()
    assert findings(folder, "I001") == [("MEMORY.md", None, "MEMORY.md is missing; `memdir index` would write 1 lines")]


def test_i002_broken_index_link(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_a.md")
    (folder / "MEMORY.md").write_text(
        "See [spec](../spec.md) and [web](https://x.y/z.md).\n- [a](user_a.md) — About a\n- [t]({module}_project.md)\n"
    )
    assert findings(folder, "I002") == [
        ("MEMORY.md", 1, "links to ../spec.md, which does not exist"),
        ("MEMORY.md", 3, "links to {module}_project.md, which does not exist"),
    ]
    (folder.parent / "spec.md").write_text("x")
    (folder / "MEMORY.md").write_text("See [spec](../spec.md).\n- [a](user_a.md) — About a\n")
    assert findings(folder, "I002") == []


def test_i003_unindexed_memory(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_a.md")
    make_memory("user_gone.md", status="superseded")
    assert findings(folder, "I003") == [("user_a.md", None, "not listed in MEMORY.md; run `memdir index`")]
    indexed(folder)
    assert findings(folder, "I003") == []


def test_i004_index_over_cap(folder: Path) -> None:
    (folder / "MEMORY.md").write_text("".join(f"- note {i}\n" for i in range(201)))
    found = findings(folder, "I004")
    assert len(found) == 1 and "201 lines" in found[0][2]
    (folder / "MEMORY.md").write_text("x" * 26_000 + "\n")
    found = findings(folder, "I004")
    assert len(found) == 1 and "hand-written text in MEMORY.md alone" in found[0][2]
    (folder / "MEMORY.md").write_text("# Memory\n")
    assert findings(folder, "I004") == []


def test_i005_left_out_memory(folder: Path, make_memory: MakeMemory) -> None:
    for i in range(201):
        make_memory(f"user_{i:03}.md", importance=0.9 if i else 0.1)
    found = findings(folder, "I005")
    assert found[0][0] == "user_000.md" and "200-line cap; importance 0.1" in found[0][2]
    assert len(found) == 2  # 201 memories, 199 entries + the note line


def test_s001_symlink_outside_folder(folder: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("---\nname: s\ndescription: key\ntype: user\n---\nAKIA...\n")
    (folder / "user_s.md").symlink_to(secret)
    (folder / "linked").symlink_to(tmp_path)
    found = findings(folder, "S001")
    assert [path for path, _, _ in found] == ["linked", "user_s.md"]
    assert "not followed" in found[1][2]
    report = MemoryDir(folder, today=TODAY).lint()
    assert all("secret" not in f.message or f.code == "S001" for f in report.findings)


def test_s001_symlink_inside_is_skipped_silently(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_a.md")
    (folder / "user_alias.md").symlink_to(folder / "user_a.md")
    assert findings(folder, "S001") == []
    assert [m.path for m in MemoryDir(folder).scan().memories] == ["user_a.md"]


def test_severity_and_exit_policy(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_x.md", description="x" * 200)
    indexed(folder)
    report = MemoryDir(folder, today=TODAY).lint()
    assert [f.code for f in report.findings] == ["F008"]
    assert report.findings[0].severity is Severity.WARNING
    assert not report.failed() and report.failed(strict=True)


def test_unknown_selector_is_an_error(folder: Path) -> None:
    with pytest.raises(ValueError, match="no lint rule matches 'Z9'"):
        MemoryDir(folder).lint(select=["Z9"])


def test_off_by_default_rules_run_only_when_selected(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_a.md")
    long_entry = "- [a](user_a.md) — " + "a hand-written entry that goes on " * 6
    (folder / "MEMORY.md").write_text(long_entry + "\n")
    assert not [f for f in MemoryDir(folder, today=TODAY).lint().findings if f.code == "I006"]
    for chosen in ({"extend_select": ["I006"]}, {"select": ["I006"]}, {"extend_select": ["ALL"]}):
        codes = [f.code for f in MemoryDir(folder, today=TODAY).lint(**chosen).findings]
        assert "I006" in codes, chosen

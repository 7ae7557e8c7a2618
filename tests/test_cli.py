"""The command-line interface, driven as a user would, with every path in tmp_path."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import MakeMemory, invoke_memdir
from typer.testing import CliRunner

from memdir.cli import app
from memdir.core.store import read_decisions

runner = CliRunner()


memdir = invoke_memdir


def test_help_lists_every_command() -> None:
    result = memdir("--help")
    assert result.exit_code == 0
    for command in ("init", "add", "list", "show", "edit", "rm", "where", "index", "lint", "rules"):
        assert command in result.stdout
        assert memdir(command, "--help").exit_code == 0


def test_init_creates_folder_index_and_state(tmp_path: Path) -> None:
    root = tmp_path / "a" / "memory"
    result = memdir("--dir", str(root), "init")
    assert result.exit_code == 0, result.output
    assert (root / "MEMORY.md").read_text() == ""
    assert (root / ".memdir" / ".gitignore").read_text().endswith("*\n")
    assert "Next steps" in result.stderr
    again = memdir("--dir", str(root), "init")
    assert again.exit_code == 0 and "already a memory folder" in again.stderr


def test_add_writes_from_template_converts_dates_and_reindexes(folder: Path) -> None:
    result = memdir(
        "--dir", str(folder), "add", "feedback", "Lint before commit",
        "-d", "Run lint before every commit: CI broke yesterday",
        "--why", "CI was red last week", "--how", "Before any commit until next month",
        "--importance", "0.8", "--expires", "2027-01-01", "--today", "2026-11-22",
        "--body", "Run `npm run lint` (not tomorrow, now).",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    text = (folder / "feedback_lint-before-commit.md").read_text()
    assert text == (
        "---\nname: Lint before commit\n"
        "description: 'Run lint before every commit: CI broke 2026-11-21'\n"
        "type: feedback\ncreated: 2026-11-22\nupdated: 2026-11-22\nimportance: 0.8\nexpires: 2027-01-01\n---\n"
        "Run `npm run lint` (not 2026-11-23, now).\n\n"
        "**Why:** CI was red 2026-11-09\n\n"
        "**How to apply:** Before any commit until 2026-12-01\n"
    )
    assert (folder / "MEMORY.md").read_text() == (
        "- [Lint before commit](feedback_lint-before-commit.md) — Run lint before every commit: CI broke 2026-11-21\n"
    )
    assert "'yesterday' -> 2026-11-21" in result.stderr


def test_add_no_dates_keeps_the_text_as_typed(folder: Path) -> None:
    result = memdir(
        "--dir", str(folder), "add", "project", "Release train",
        "-d", "The train leaves next Thursday", "--why", "Agreed yesterday", "--how", "本周P0 first",
        "--body", "Tomorrow we cut the branch.", "--today", "2026-11-22", "--expires", "next month", "--no-dates",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    text = (folder / "project_release-train.md").read_text()
    assert "description: The train leaves next Thursday\n" in text
    assert "Tomorrow we cut the branch.\n\n**Why:** Agreed yesterday\n\n**How to apply:** 本周P0 first\n" in text
    assert "created: 2026-11-22\n" in text and "expires: 2026-12-01\n" in text  # options are still dates
    assert "->" not in result.stderr  # no conversion reported


@pytest.mark.parametrize("kind", ["user", "reference"])
def test_add_writes_why_and_how_for_every_type(folder: Path, kind: str) -> None:
    """--why and --how were dropped without a word for the types whose template had no such lines."""
    result = memdir(
        "--dir", str(folder), "add", kind, "grafana", "-d", "API latency is on the api-overview board",
        "--why", "Incidents start there", "--how", "Check it before blaming the database", "--no-dates",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    text = (folder / f"{kind}_grafana.md").read_text()
    assert text.endswith(
        "---\nAPI latency is on the api-overview board\n\n**Why:** Incidents start there\n\n"
        "**How to apply:** Check it before blaming the database\n"
    )
    bare = memdir("--dir", str(folder), "add", kind, "plain", "-d", "Nothing more to say")
    assert bare.exit_code == 0 and (folder / f"{kind}_plain.md").read_text().endswith("---\nNothing more to say\n")


def test_add_refuses_an_existing_name(folder: Path) -> None:
    assert memdir("--dir", str(folder), "add", "user", "role", "-d", "Backend dev").exit_code == 0
    before = (folder / "user_role.md").read_bytes()
    for args in (["user", "role"], ["user", "Role"], ["project", "ROLE"]):
        result = memdir("--dir", str(folder), "add", *args, "-d", "other")
        assert result.exit_code == 1
        assert "already exists" in result.stderr
    assert (folder / "user_role.md").read_bytes() == before
    assert not (folder / "project_role.md").exists()


def test_add_body_from_stdin_and_hostile_names(folder: Path) -> None:
    result = memdir(
        "--dir", str(folder), "add", "reference", "../../etc/passwd", "-d", "d", "--body", "-", input="from stdin\n"
    )
    assert result.exit_code == 0, result.output
    assert (folder / "reference_etc-passwd.md").read_text().endswith("---\nfrom stdin\n")
    assert sorted(p.name for p in folder.iterdir()) == [".memdir", "MEMORY.md", "reference_etc-passwd.md"]
    bad = memdir("--dir", str(folder), "add", "user", "../..", "-d", "d")
    assert bad.exit_code == 2 and "no letters or digits" in bad.stderr


def test_add_usage_errors(folder: Path) -> None:
    assert memdir("--dir", str(folder), "add", "handoff", "x", "-d", "d").exit_code == 2
    missing = memdir("--dir", str(folder), "add", "user", "x")
    assert missing.exit_code == 2 and "--description" in missing.stderr
    assert memdir("--dir", str(folder), "add", "user", "x", "-d", "d", "--importance", "2").exit_code == 2
    bad_date = memdir("--dir", str(folder), "add", "user", "x", "-d", "d", "--expires", "someday")
    assert bad_date.exit_code == 2 and "--expires" in bad_date.stderr


def test_add_expires_accepts_a_relative_phrase(folder: Path) -> None:
    assert memdir("--dir", str(folder), "add", "project", "p", "-d", "d", "--expires", "next month").exit_code == 0
    assert "expires: 2026-12-01" in (folder / "project_p.md").read_text()


def test_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    result = memdir("--dir", str(tmp_path / "nope"), "list")
    assert result.exit_code == 2
    assert result.stderr.startswith("memdir: error: memory folder") and "memdir init" in result.stderr
    assert "Traceback" not in result.output


def test_list_table_and_json(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_a.md", updated="2026-11-01")
    make_memory("feedback_b.md", body="x\n**Why:** y\n**How to apply:** z\n")
    (folder / "broken.md").write_text('---\nname: "\n---\n')
    memdir("--dir", str(folder), "index")
    table = memdir("--dir", str(folder), "list", "--type", "user")
    assert table.exit_code == 0 and "About a" in table.stdout and "About b" not in table.stdout
    assert table.stderr.startswith("1 memory; 1 file could not be read"), table.stderr  # not "1 memories"
    data = json.loads(memdir("--dir", str(folder), "list", "--format", "json").stdout)
    assert [m["path"] for m in data["memories"]] == ["feedback_b.md", "user_a.md"]
    assert data["memories"][1] | {} == {
        "name": "a", "path": "user_a.md", "type": "user", "description": "About a", "created": None,
        "updated": "2026-11-01", "last_changed": "2026-11-01", "importance": 0.5, "status": "active",
        "indexed": True,
    }  # fmt: skip
    assert data["problems"][0]["path"] == "broken.md"


def test_show_by_name_file_or_stem(folder: Path, make_memory: MakeMemory) -> None:
    path = make_memory("team/user_role.md", name="My Role")
    for query in ("My Role", "my role", "user_role", "user_role.md", "team/user_role.md", "my-role"):
        result = memdir("--dir", str(folder), "show", query)
        assert result.exit_code == 0, (query, result.output)
        assert result.stdout == path.read_text()
    assert memdir("--dir", str(folder), "show", "nothing").exit_code == 2
    data = json.loads(memdir("--dir", str(folder), "show", "My Role", "--format", "json").stdout)
    assert data["fields"]["name"] == "My Role" and data["body"] == "Body."


def test_show_ambiguous_names_both(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_x.md", name="same")
    make_memory("project_x.md", name="same")
    result = memdir("--dir", str(folder), "show", "same")
    assert result.exit_code == 2 and "project_x.md, user_x.md" in result.stderr


def test_show_edit_rm_take_a_path_from_the_working_directory_or_an_absolute_one(
    tmp_path: Path, make_memory: MakeMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    root = repo / ".claude" / "memory"
    role = make_memory("user_role.md", root=root, description="Backend engineer")
    team = make_memory("team/project_ship.md", root=root)
    (repo / "docs").mkdir()
    (repo / "docs" / "user_role.md").write_text("not a memory\n")
    for cwd, query, path in (
        (repo, ".claude/memory/user_role.md", role),  # the README's form, from the repository root
        (repo, "./.claude/memory/user_role", role),
        (repo / "docs", "../.claude/memory/team/project_ship.md", team),
        (repo / "docs", str(role), role),  # absolute
        (repo / "docs", str(root / "team" / "project_ship.md"), team),
    ):
        result = memdir("show", query, cwd=cwd)
        assert result.exit_code == 0 and result.stdout == path.read_text(), (query, result.output)
    for query in ("docs/user_role.md", str(repo / "docs" / "user_role.md"), "/etc/hostname"):
        result = memdir("show", query, cwd=repo)
        assert result.exit_code == 2, (query, result.output)
        assert result.stderr == f"memdir: error: {query} is not in this memory folder ({root})\n"
    monkeypatch.setenv(
        "EDITOR", editor_script(tmp_path, "path.write_text(path.read_text().replace('Backend', 'Data'))")
    )
    assert memdir("edit", ".claude/memory/user_role.md", cwd=repo).exit_code == 0
    assert "description: Data engineer" in role.read_text()
    assert memdir("rm", str(team), cwd=repo / "docs").exit_code == 0
    assert not team.exists() and (root / ".archive" / "team" / "project_ship.md").exists()


def editor_script(tmp_path: Path, python_code: str) -> str:
    """An $EDITOR that runs python_code with the file path as `path`."""
    script = tmp_path / "editor.py"
    script.write_text(f"import sys, pathlib\npath = pathlib.Path(sys.argv[1])\n{python_code}\n")
    return f"{sys.executable} {script}"


def test_edit_validates_sets_updated_and_reindexes(
    folder: Path, make_memory: MakeMemory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_memory("user_a.md", updated="2026-01-01")
    memdir("--dir", str(folder), "index")
    monkeypatch.setenv(
        "EDITOR", editor_script(tmp_path, "path.write_text(path.read_text().replace('About a', 'Edited'))")
    )
    result = memdir("--dir", str(folder), "edit", "a")
    assert result.exit_code == 0, result.output
    text = (folder / "user_a.md").read_text()
    assert "description: Edited" in text and "updated: 2026-11-22" in text
    assert "— Edited" in (folder / "MEMORY.md").read_text()


def test_edit_that_breaks_yaml_is_kept_as_a_draft(
    folder: Path, make_memory: MakeMemory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = make_memory("user_a.md").read_text()
    monkeypatch.setenv(
        "EDITOR", editor_script(tmp_path, "path.write_text(path.read_text().replace('name: a', 'name: \"oops'))")
    )
    result = memdir("--dir", str(folder), "edit", "a")
    assert result.exit_code == 2
    assert (folder / "user_a.md").read_text() == original
    drafts = list((folder / ".memdir" / "drafts").iterdir())
    assert len(drafts) == 1 and 'name: "oops' in drafts[0].read_text()
    assert str(drafts[0]) in result.stderr.replace("\n", "")


def test_edit_without_changes_and_failing_editor(
    folder: Path, make_memory: MakeMemory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_memory("user_a.md")
    monkeypatch.setenv("EDITOR", editor_script(tmp_path, "pass"))
    assert "No changes" in memdir("--dir", str(folder), "edit", "a").stderr
    monkeypatch.setenv("EDITOR", editor_script(tmp_path, "sys.exit(3)"))
    failed = memdir("--dir", str(folder), "edit", "a")
    assert failed.exit_code == 2 and "exited with status 3" in failed.stderr


def test_rm_archives_and_purge_deletes(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_a.md")
    make_memory("user_b.md")
    (folder / "MEMORY.md").write_text("# Mine\n")
    memdir("--dir", str(folder), "index")
    result = memdir("--dir", str(folder), "rm", "a")
    assert result.exit_code == 0, result.output
    assert (folder / ".archive" / "user_a.md").exists() and not (folder / "user_a.md").exists()
    assert (folder / "MEMORY.md").read_text() == "# Mine\n\n- [b](user_b.md) — About b\n"
    make_memory("user_a.md")  # a new one with the same name archives beside the old
    memdir("--dir", str(folder), "rm", "user_a.md")
    assert (folder / ".archive" / "user_a-2.md").exists()
    assert memdir("--dir", str(folder), "rm", "b", "--purge").exit_code == 0
    assert not (folder / "user_b.md").exists() and not (folder / ".archive" / "user_b.md").exists()
    assert (folder / "MEMORY.md").read_text() == "# Mine\n\n"
    assert memdir("--dir", str(folder), "index", "--check").exit_code == 0


def test_index_check_stdout_and_json(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_a.md")
    check = memdir("--dir", str(folder), "index", "--check")
    assert check.exit_code == 1 and "out of date" in check.stderr
    printed = memdir("--dir", str(folder), "index", "--stdout")
    assert printed.exit_code == 0 and printed.stdout == "- [a](user_a.md) — About a\n"
    assert (folder / "MEMORY.md").read_text() == ""
    data = json.loads(memdir("--dir", str(folder), "index", "--format", "json").stdout)
    assert data["changed"] is True and data["entries"] == 1 and data["left_out"] == [] and data["refused"] is None
    assert memdir("--dir", str(folder), "index", "--check").exit_code == 0
    assert json.loads(memdir("--dir", str(folder), "index", "--format", "json").stdout)["changed"] is False


def test_index_keeps_previous_version_and_drop_missing(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_a.md")
    (folder / "MEMORY.md").write_text("- [a](user_a.md) — hand-tuned description\n- [gone](user_gone.md) — x\n")
    assert memdir("--dir", str(folder), "index").exit_code == 0
    assert (folder / ".memdir" / "MEMORY.md.prev").read_text().startswith("- [a](user_a.md) — hand-tuned")
    assert "user_gone.md" in (folder / "MEMORY.md").read_text()
    assert memdir("--dir", str(folder), "index", "--drop-missing").exit_code == 0
    assert (folder / "MEMORY.md").read_text() == "- [a](user_a.md) — About a\n"


def test_index_reports_left_out_and_refuses_oversized_hand_text(folder: Path, make_memory: MakeMemory) -> None:
    for i in range(205):
        make_memory(f"user_{i:03}.md", importance=0.1 if i == 7 else 0.5)
    result = memdir("--dir", str(folder), "index")
    assert result.exit_code == 0 and "left out 6 memories" in result.stderr and "user_007.md" in result.stderr
    for i in range(205, 240):
        make_memory(f"user_{i:03}.md", importance=0.2)
    many = memdir("--dir", str(folder), "index")
    assert "left out 41 memories" in many.stderr and "... and 21 more (`memdir index --check" in many.stderr
    assert many.stderr.count("(200-line cap, importance") == 20
    (folder / "MEMORY.md").write_text("".join(f"prose {i}\n" for i in range(300)))
    refused = memdir("--dir", str(folder), "index")
    assert refused.exit_code == 1 and "will not cut it" in refused.stderr
    assert (folder / "MEMORY.md").read_text().count("prose") == 300


def test_index_refuses_non_utf8_memory_md(folder: Path) -> None:
    (folder / "MEMORY.md").write_bytes(b"caf\xe9\n")
    result = memdir("--dir", str(folder), "index")
    assert result.exit_code == 1 and "not valid UTF-8" in result.stderr
    assert (folder / "MEMORY.md").read_bytes() == b"caf\xe9\n"


def test_lint_text_json_and_exit_codes(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("feedback_x.md", body="No reasons given.\n")
    memdir("--dir", str(folder), "index")
    text = memdir("--dir", str(folder), "lint")
    assert text.exit_code == 0  # warnings only
    assert "feedback_x.md:6: B001 [warning]" in text.stdout.replace(str(folder) + "/", "")
    assert memdir("--dir", str(folder), "lint", "--strict").exit_code == 1
    data = json.loads(memdir("--dir", str(folder), "lint", "--format", "json").stdout)
    assert set(data) == {"folder", "findings", "summary"}
    assert set(data["findings"][0]) == {"code", "name", "severity", "path", "line", "message", "fix"}
    assert data["summary"]["warnings"] == 2 and data["summary"]["by_code"] == {"B001": 1, "B002": 1}
    make_memory("user_y.md")  # not indexed: an error
    assert memdir("--dir", str(folder), "lint").exit_code == 1
    assert memdir("--dir", str(folder), "lint", "--exit-zero").exit_code == 0
    assert memdir("--dir", str(folder), "lint", "--ignore", "I001,I003").exit_code == 0
    selected = json.loads(memdir("--dir", str(folder), "lint", "--select", "missing-why", "--format", "json").stdout)
    assert [f["code"] for f in selected["findings"]] == ["B001"]
    assert memdir("--dir", str(folder), "lint", "--select", "Q").exit_code == 2


def test_rules_lists_and_explains() -> None:
    assert "F007" in memdir("rules").stdout
    one = memdir("rules", "relative-date")
    assert one.exit_code == 0 and one.stdout.startswith("B003 relative-date (warning, safe fix)")
    for section in ("What it does:", "Why it matters:", "Example:", "Instead:", "Fix:"):
        assert section in one.stdout
    assert memdir("rules", "X999").exit_code == 2
    assert len(json.loads(memdir("rules", "--format", "json").stdout)) >= 18


def test_bad_input_never_stops_the_others(folder: Path, make_memory: MakeMemory, tmp_path: Path) -> None:
    make_memory("user_good.md")
    (folder / "user_yaml.md").write_text('---\nname: x\ndescription: "a" b\ntype: user\n---\n')
    (folder / "user_none.md").write_text("just text\n")
    (folder / "user_empty.md").write_text("")
    (folder / "user_latin1.md").write_bytes("---\nname: caf\xe9\n---\n".encode("latin-1"))
    (folder / "user_dir.md").mkdir()
    (folder / "user_big.md").write_text("---\nname: big\n---\n" + "x" * 2_000_000)
    (folder / "user_link.md").symlink_to(tmp_path / "elsewhere.md")
    (folder / "MEMORY.md").write_text("Pure prose, no index at all.\nSecond paragraph.\n")
    result = memdir("--dir", str(folder), "index")
    assert result.exit_code == 0, result.output
    assert (folder / "MEMORY.md").read_text() == (
        "Pure prose, no index at all.\nSecond paragraph.\n\n- [good](user_good.md) — About good\n"
    )
    lint = memdir("--dir", str(folder), "lint", "--format", "json")
    assert lint.exit_code == 1 and "Traceback" not in lint.output
    by_path = {f["path"]: f["code"] for f in json.loads(lint.stdout)["findings"]}
    assert by_path == {
        "user_yaml.md": "F002", "user_none.md": "F001", "user_empty.md": "F001", "user_latin1.md": "F003",
        "user_dir.md": "F003", "user_big.md": "F003", "user_link.md": "S001",
    }  # fmt: skip


def test_unexpected_errors_are_one_line(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memdir import folder as memory_dir

    def boom(self: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(memory_dir.MemoryDir, "scan", boom)
    result = memdir("--dir", str(folder), "list")
    assert result.exit_code == 2
    assert (
        result.stderr
        == "memdir: error: internal error: RuntimeError: disk on fire (MEMDIR_DEBUG=1 shows the traceback)\n"
    )


def test_a_write_the_system_refuses_is_one_line_naming_the_file(
    folder: Path, make_memory: MakeMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The same PermissionError a read-only folder raises; injected because CI runs as root.
    from memdir import folder as memory_dir

    def refuse(path: Path, text: str, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", str(path))

    make_memory("user_a.md")
    monkeypatch.setattr(memory_dir, "atomic_write", refuse)
    result = memdir("--dir", str(folder), "index")
    assert result.exit_code == 2
    assert result.stderr == f"memdir: error: Permission denied: {folder / 'MEMORY.md'}\n"


def test_add_on_a_terminal_opens_the_template_in_the_editor(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memdir.cli import memories

    monkeypatch.setattr(memories, "_interactive", lambda: True)
    fill = (
        "text = path.read_text()\n"
        "text = text.replace('<one line, under 150 characters: what decides whether this memory matters>', "
        "'Deploys freeze next Friday')\n"
        "text = text.replace('<the memory itself>', 'No deploys from next Friday.')\n"
        "text = text.replace('<the incident, request or constraint behind it>', 'Audit')\n"
        "text = text.replace('<when and where it applies>', 'Any deploy')\n"
        "path.write_text(text)"
    )
    monkeypatch.setenv("EDITOR", editor_script(tmp_path, fill))
    result = memdir("--dir", str(folder), "add", "project", "freeze")
    assert result.exit_code == 0, result.output
    text = (folder / "project_freeze.md").read_text()
    assert "description: Deploys freeze 2026-11-27\n" in text
    assert "No deploys from 2026-11-27.\n\n**Why:** Audit\n\n**How to apply:** Any deploy\n" in text
    assert "(project_freeze.md) — Deploys freeze 2026-11-27" in (folder / "MEMORY.md").read_text()


def test_add_in_the_editor_with_no_dates_keeps_the_text_as_typed(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fill_in_editor(tmp_path, monkeypatch, "Deploys freeze next Friday", "No deploys from next Friday.")
    result = memdir("--dir", str(folder), "add", "user", "freeze", "--no-dates")
    assert result.exit_code == 0, result.output
    text = (folder / "user_freeze.md").read_text()
    assert "description: 'Deploys freeze next Friday'\n" in text and "No deploys from next Friday.\n" in text


def _fill_in_editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, description: str, body: str) -> None:
    from memdir.cli import memories

    monkeypatch.setattr(memories, "_interactive", lambda: True)
    fill = (
        "text = path.read_text()\n"
        f"text = text.replace('<one line, under 150 characters: what decides whether this memory matters>', "
        f"{description!r})\n"
        f"text = text.replace('<the memory itself>', {body!r})\n"
        "path.write_text(text)"
    )
    monkeypatch.setenv("EDITOR", editor_script(tmp_path, fill))


def test_add_in_the_editor_goes_through_the_write_path_screen(
    folder: Path, tmp_path: Path, make_memory: MakeMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-ant-api03-Xk2v9QmT4rL8pW1nB6yH3jF0sD5gA7cE2uK9iO4mN8bV1xZ6qR3tY0wP5lJ7hG2fS-abcdefAA"
    _fill_in_editor(tmp_path, monkeypatch, "Staging access for the API", f"Staging uses the key {key} for now.")
    result = memdir("--dir", str(folder), "add", "reference", "staging", "--source", "tool")
    assert result.exit_code == 0, result.output
    text = (folder / "reference_staging.md").read_text()
    assert key not in text and "[REDACTED:anthropic-api-key]" in text
    assert "source: tool" in text and "status: quarantined" in text
    assert "reference_staging.md" not in (folder / "MEMORY.md").read_text()

    make_memory("user_editor.md", description="Prefers vim for every edit", body="Prefers vim for every edit.")
    _fill_in_editor(tmp_path, monkeypatch, "Prefers vim for every edit", "Prefers vim for every edit.")
    result = memdir("--dir", str(folder), "add", "user", "vim")
    assert result.exit_code == 1 and "skipped 'vim': says the same as user_editor.md" in result.stderr
    assert "draft kept at" in result.stderr and not (folder / "user_vim.md").exists()


def test_add_in_the_editor_with_hints_left_keeps_a_draft(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memdir.cli import memories

    monkeypatch.setattr(memories, "_interactive", lambda: True)
    monkeypatch.setenv("EDITOR", editor_script(tmp_path, "path.write_text(path.read_text() + '\\nmore')"))
    result = memdir("--dir", str(folder), "add", "user", "me")
    assert result.exit_code == 2 and "still has <hints>" in result.stderr
    assert not (folder / "user_me.md").exists()
    assert len(list((folder / ".memdir" / "drafts").iterdir())) == 1


def test_edit_without_changes_keeps_crlf_bytes(folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = folder / "user_a.md"
    path.write_bytes(b"---\r\nname: a\r\ndescription: d\r\ntype: user\r\n---\r\nbody\r\n")
    monkeypatch.setenv("EDITOR", editor_script(tmp_path, "pass"))
    result = memdir("--dir", str(folder), "edit", "a")
    assert "No changes" in result.stderr
    assert path.read_bytes() == b"---\r\nname: a\r\ndescription: d\r\ntype: user\r\n---\r\nbody\r\n"
    monkeypatch.setenv(
        "EDITOR", editor_script(tmp_path, "path.write_bytes(path.read_bytes().replace(b'body', b'new'))")
    )
    assert memdir("--dir", str(folder), "edit", "a").exit_code == 0
    assert (
        path.read_bytes() == b"---\r\nname: a\r\ndescription: d\r\ntype: user\r\nupdated: 2026-11-22\r\n---\r\nnew\r\n"
    )


def test_memory_md_symlink_leaving_the_folder_is_never_written(
    folder: Path, tmp_path: Path, make_memory: MakeMemory
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (folder / "MEMORY.md").unlink()
    (folder / "MEMORY.md").symlink_to(victim)
    make_memory("user_a.md")
    result = memdir("--dir", str(folder), "index")
    assert result.exit_code == 1 and "symlink" in result.stderr
    assert victim.read_text() == "precious\n"
    lint = json.loads(memdir("--dir", str(folder), "lint", "--format", "json").stdout)
    assert ("MEMORY.md", "S001") in {(f["path"], f["code"]) for f in lint["findings"]}


def test_add_and_rm_refuse_before_touching_anything_when_memory_md_is_unreadable(
    folder: Path, make_memory: MakeMemory
) -> None:
    make_memory("user_a.md")
    (folder / "MEMORY.md").write_bytes(b"caf\xe9\n")
    added = memdir("--dir", str(folder), "add", "user", "b", "-d", "d")
    assert added.exit_code == 1 and "not valid UTF-8" in added.stderr
    assert not (folder / "user_b.md").exists()
    [logged] = read_decisions(folder)  # the screen let it through, the write did not happen: not "stored"
    assert logged["decision"] == "failed" and logged["screened"] == "stored" and "not valid UTF-8" in logged["error"]
    removed = memdir("--dir", str(folder), "rm", "a")
    assert removed.exit_code == 1 and (folder / "user_a.md").exists()


@pytest.mark.parametrize("quiet", [[], ["--quiet"]], ids=["", "quiet"])
def test_add_exits_3_when_the_file_is_written_but_the_index_refused_it(folder: Path, quiet: list[str]) -> None:
    (folder / "MEMORY.md").write_text("".join(f"prose {i}\n" for i in range(250)))
    result = memdir("--dir", str(folder), *quiet, "add", "user", "b", "-d", "d")
    assert result.exit_code == 3  # docs/cli.md: written, MEMORY.md not updated
    assert (folder / "user_b.md").exists()
    assert f"memdir: {folder / 'user_b.md'} is written, but MEMORY.md is not updated: the hand-written" in result.stderr
    assert [e["decision"] for e in read_decisions(folder)] == ["stored", "index-refused"]
    (folder / "MEMORY.md").write_text("")
    assert memdir("--dir", str(folder), "index").exit_code == 0  # what a script does then
    assert "user_b.md" in (folder / "MEMORY.md").read_text()


@pytest.mark.parametrize(("data", "message"), [(b"caf\xe9\n", "not valid UTF-8"), (b"a\x00b", "NUL")])
def test_add_rejects_bad_bytes_on_stdin(folder: Path, data: bytes, message: str) -> None:
    result = runner.invoke(app, ["--dir", str(folder), "add", "user", "b", "-d", "d", "--body", "-"], input=data)
    assert result.exit_code == 2 and message in result.stderr
    assert not (folder / "user_b.md").exists()


def test_index_names_files_it_could_not_read(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_a.md")
    (folder / "user_bad.md").write_text('---\nname: "\n---\n')
    result = memdir("--dir", str(folder), "index")
    assert result.exit_code == 0
    assert "user_bad.md" in result.stderr and "invalid YAML" in result.stderr


def test_every_line_index_removes_is_kept_in_the_history(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_a.md")
    (folder / "MEMORY.md").write_text("- [a](user_a.md) — my own words\n- [a](user_a.md) — said twice\n")
    memdir("--dir", str(folder), "index")
    make_memory("user_b.md")
    memdir("--dir", str(folder), "add", "user", "c", "-d", "d")
    history = (folder / ".memdir" / "MEMORY.md.history").read_text()
    assert "- [a](user_a.md) — my own words\n" in history and "- [a](user_a.md) — said twice\n" in history
    assert history.count("## ") == 1  # later runs removed nothing


def test_edit_does_not_overwrite_a_change_made_while_the_editor_was_open(
    folder: Path, make_memory: MakeMemory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = make_memory("user_a.md")
    sneaky = (
        f"pathlib.Path({str(path)!r}).write_text(pathlib.Path({str(path)!r}).read_text() + 'agent wrote this\\n')\n"
        "path.write_text(path.read_text().replace('Body.', 'Mine.'))"
    )
    monkeypatch.setenv("EDITOR", editor_script(tmp_path, sneaky))
    result = memdir("--dir", str(folder), "edit", "a")
    assert result.exit_code == 1 and "changed while" in result.stderr
    assert path.read_text().endswith("agent wrote this\n")
    assert any("Mine." in d.read_text() for d in (folder / ".memdir" / "drafts").iterdir())


def test_global_options_after_the_subcommand(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_a.md")
    assert memdir("index", "--dir", str(folder)).exit_code == 0
    assert memdir("lint", "-C", str(folder), "-q").exit_code == 0
    assert memdir("lint", f"--dir={folder}").exit_code == 0
    # A subcommand's own option keeps its value, even one spelled like a global option.
    added = memdir("add", "user", "odd", "-d", "--dir", "--dir", str(folder))
    assert added.exit_code == 0, added.output
    assert "description: --dir" in (folder / "user_odd.md").read_text()
    # `--dir` with nothing after it is still a usage error, not the working directory.
    assert memdir("lint", "--dir").exit_code == 2


def test_help_keeps_square_brackets_and_joins_a_paragraph_s_lines() -> None:
    # Rich's markup took "[recall]" for a style and dropped it; the docstring's line breaks stayed in.
    # (Help is click's plain layout now, 80 columns under CliRunner; "[recall])." ends a docstring line.)
    result = invoke_memdir("recall", "--help", env={"COLUMNS": "200"})
    assert "(configurable under [recall])" in " ".join(result.stdout.split())
    assert "[recall]). Relevance is lexical" in result.stdout


def test_a_file_given_as_the_folder_is_named_as_a_file(tmp_path: Path) -> None:
    # It said "does not exist; create it with memdir init", which init would then refuse.
    not_a_folder = tmp_path / "notes.txt"
    not_a_folder.write_text("x")
    for command in (["recall", "x"], ["index"], ["lint"], ["stats"], ["watch"]):
        result = invoke_memdir("--dir", str(not_a_folder), *command)
        assert result.exit_code == 2, (command, result.output)
        assert f"memory folder {not_a_folder} (given with --dir) is not a folder" in result.stderr, command


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        (["add"], "the file becomes <type>_<slug>.md."),
        (["show"], "with [REDACTED:<kind>]."),
        (["prune"], "Each archived file gets archived: <date> and archived_reason"),
        (["git", "setup"], "Adds /<path>/MEMORY.md merge=memdir"),
    ],
)
def test_help_keeps_angle_brackets(command: list[str], shown: str) -> None:
    # Markdown takes a bare <type> for an HTML tag and drops it; written as code it stays. Help is
    # plain text now, so the backticks show; what matters is that nothing between them is lost.
    result = invoke_memdir(*command, "--help", env={"COLUMNS": "250"})
    assert shown in " ".join(result.stdout.replace("`", "").split())

"""Claude Code integration: settings merge and removal, the session-start context, the stop record,
and the typer-free path the hooks take (claude_runtime.py, cli/hooks.py, cli/fast.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from conftest import MakeMemory, invoke_memdir

from memdir.cli.fast import _parse, _parse_hook, run_fast
from memdir.core.store import folder_lock
from memdir.folder import MemoryDir
from memdir.integrations import claude_runtime, claude_settings
from memdir.integrations.claude_runtime import CONTEXT_LIMIT, record_stop, session_start
from memdir.integrations.claude_settings import (
    SettingsConflict,
    SettingsError,
    SettingsScope,
    hook_event_of,
    install_hooks,
    memdir_hooks,
    uninstall_hooks,
)
from memdir.write.pending import read_pending

REPO = Path(__file__).resolve().parents[1]
TODAY = "2026-11-22"

SESSION_START_GROUP = {
    "matcher": "startup|clear|compact",
    "hooks": [{"type": "command", "command": "memdir hook session-start", "timeout": 10}],
}
PROMPT_GROUP = {"hooks": [{"type": "command", "command": "memdir hook user-prompt-submit", "timeout": 10}]}
STOP_GROUP = {"hooks": [{"type": "command", "command": "memdir hook stop", "timeout": 10}]}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A repository with a committed memory folder holding one memory."""
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    memory = root / ".claude" / "memory"
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text("# Memory\n\nHand-written note.\n", encoding="utf-8")
    (memory / "feedback_lint-first.md").write_text(
        "---\nname: lint-first\ndescription: Run the linter before every commit\ntype: feedback\n---\n"
        "Run it.\n\n**Why:** CI broke.\n\n**How to apply:** Before commits.\n",
        encoding="utf-8",
    )
    return root


def _settings(project: Path, name: str = "settings.json") -> Path:
    return project / ".claude" / name


def _write_json(path: Path, data: Any, indent: int | str = 2) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=indent, ensure_ascii=False)
    path.write_text(text, encoding="utf-8")
    return text


def _install(project: Path, scope: SettingsScope = SettingsScope.project, **options: Any) -> list[Any]:
    return install_hooks(scope, project, os.environ, **options)


def _uninstall(project: Path, scope: SettingsScope = SettingsScope.project, **options: Any) -> list[Any]:
    return uninstall_hooks(scope, project, os.environ, **options)


# --- settings: install -------------------------------------------------------------------


def test_install_creates_the_settings_file_with_the_three_hooks(project: Path) -> None:
    (change,) = _install(project)
    assert change.before is None and change.changed
    assert json.loads(_settings(project).read_text()) == {
        "hooks": {"SessionStart": [SESSION_START_GROUP], "UserPromptSubmit": [PROMPT_GROUP], "Stop": [STOP_GROUP]}
    }


def test_install_without_prompt_recall_leaves_the_prompt_hook_out_and_takes_it_out(project: Path) -> None:
    _install(project)
    _install(project, prompt_recall=False)
    assert json.loads(_settings(project).read_text()) == {
        "hooks": {"SessionStart": [SESSION_START_GROUP], "Stop": [STOP_GROUP]}
    }
    result = invoke_memdir("hooks", "install", "--scope", "project", "--prompt-recall", cwd=project)
    assert result.exit_code == 0, result.output
    assert json.loads(_settings(project).read_text())["hooks"]["UserPromptSubmit"] == [PROMPT_GROUP]
    _uninstall(project)
    assert not _settings(project).exists()  # memdir's entries were all it held: the file install created goes


def _installed_plugins(home: Path, text: str) -> None:
    path = home / ".claude" / "plugins" / "installed_plugins.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.mark.parametrize(
    ("where", "warned"), [(None, "memdir@memdir (user scope)"), ("{project}", "memdir@memdir (project scope)"),
                          ("/elsewhere", None)],
)  # fmt: skip
def test_install_warns_when_the_memdir_plugin_is_installed_too(
    project: Path, isolated_env: Path, where: str | None, warned: str | None
) -> None:
    # As Claude Code 2.1.332 writes it after `claude plugin install [--scope project] memdir@memdir`.
    install = {"scope": "user" if where is None else "project", "installPath": "/x", "version": "0.1.0"}
    if where is not None:
        install["projectPath"] = where.format(project=project)
    _installed_plugins(isolated_env, json.dumps({"version": 2, "plugins": {"memdir@memdir": [install]}}))
    result = invoke_memdir("hooks", "install", "--scope", "project", cwd=project)
    assert result.exit_code == 0, result.output
    if warned is None:
        assert "plugin" not in result.stderr
    else:
        assert f"the memdir plugin is installed ({warned})" in result.stderr


@pytest.mark.parametrize("text", ["not json", "[]", '{"plugins": {"memdir@memdir": 3}}', '{"version": 2}'])
def test_install_says_nothing_of_a_plugin_list_it_cannot_read(project: Path, isolated_env: Path, text: str) -> None:
    _installed_plugins(isolated_env, text)
    result = invoke_memdir("hooks", "install", "--scope", "project", cwd=project)
    assert result.exit_code == 0 and "plugin" not in result.stderr and "Traceback" not in result.output


def test_install_twice_changes_nothing_byte_for_byte(project: Path) -> None:
    _install(project, auto_memory_dir=project / ".claude" / "memory")
    first = {p: p.read_bytes() for p in (_settings(project), _settings(project, "settings.local.json"))}
    changes = _install(project, auto_memory_dir=project / ".claude" / "memory")
    assert not any(c.changed for c in changes)
    assert {p: p.read_bytes() for p in first} == first


def test_install_keeps_other_keys_hooks_and_order(project: Path) -> None:
    original = {
        "$schema": "https://json.schemastore.org/claude-code-settings.json",
        "permissions": {"allow": ["Bash(npm run lint)"], "deny": []},
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}],
            "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "./setup.sh"}]}],
        },
        "model": "opus",
        "env": {"NAME": "héllo"},
    }
    _write_json(_settings(project), original)
    _install(project)
    data = json.loads(_settings(project).read_text())
    assert list(data) == ["$schema", "permissions", "hooks", "model", "env"]
    assert list(data["hooks"]) == ["PreToolUse", "SessionStart", "UserPromptSubmit", "Stop"]
    assert data["hooks"]["PreToolUse"] == original["hooks"]["PreToolUse"]  # type: ignore[index]
    assert data["hooks"]["SessionStart"] == [original["hooks"]["SessionStart"][0], SESSION_START_GROUP]  # type: ignore[index]
    assert {k: v for k, v in data.items() if k != "hooks"} == {k: v for k, v in original.items() if k != "hooks"}


def test_install_then_uninstall_restores_a_claude_code_style_file_exactly(project: Path) -> None:
    # Claude Code writes JSON.stringify(settings, null, 2): no final newline, non-ASCII as is.
    text = _write_json(_settings(project), {"permissions": {"allow": ["Read(ü)"]}, "hooks": {"Notification": []}})
    (change,) = _install(project)
    assert change.notes == ()  # nothing but memdir's hooks changes
    _uninstall(project)
    assert _settings(project).read_text(encoding="utf-8") == text


@pytest.mark.parametrize("indent", [4, "\t"])
def test_install_keeps_the_files_indentation(project: Path, indent: int | str) -> None:
    _write_json(_settings(project), {"model": "opus"}, indent=indent)
    _install(project)
    text = _settings(project).read_text()
    unit = " " * indent if isinstance(indent, int) else indent
    assert f'\n{unit}"model": "opus"' in text and f'\n{unit}{unit}"SessionStart"' in text


def test_a_compact_file_is_rewritten_with_a_note(project: Path) -> None:
    _settings(project).parent.mkdir(parents=True, exist_ok=True)
    _settings(project).write_text('{"model": "opus", "permissions": {"allow": ["Bash(ls)"]}}\n')
    (change,) = _install(project)
    assert change.notes and "formatting changes" in change.notes[0]
    data = json.loads(_settings(project).read_text())
    assert data["model"] == "opus" and data["permissions"] == {"allow": ["Bash(ls)"]}


def test_an_empty_file_counts_as_no_settings(project: Path) -> None:
    _settings(project).parent.mkdir(parents=True, exist_ok=True)
    _settings(project).write_text("")
    _install(project)
    assert json.loads(_settings(project).read_text())["hooks"]["Stop"] == [STOP_GROUP]


def test_reinstall_with_another_command_replaces_the_entry_where_it_stands(project: Path) -> None:
    other = {"matcher": "startup", "hooks": [{"type": "command", "command": "./setup.sh"}]}
    _write_json(_settings(project), {"hooks": {"SessionStart": [SESSION_START_GROUP, other]}})
    _install(project, command="/opt/venv/bin/memdir")
    groups = json.loads(_settings(project).read_text())["hooks"]["SessionStart"]
    assert len(groups) == 2 and groups[1] == other
    assert groups[0]["hooks"][0]["command"] == "/opt/venv/bin/memdir hook session-start"


def test_a_memdir_command_in_someone_elses_group_is_moved_out_of_it(project: Path) -> None:
    mine = {"type": "command", "command": "./setup.sh"}
    shared = {"matcher": "startup", "hooks": [mine, {"type": "command", "command": "memdir hook session-start"}]}
    _write_json(_settings(project), {"hooks": {"SessionStart": [shared]}})
    _install(project)
    groups = json.loads(_settings(project).read_text())["hooks"]["SessionStart"]
    assert groups == [SESSION_START_GROUP, {"matcher": "startup", "hooks": [mine]}]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"hooks": {', "not valid JSON (line 1"),
        ("// comment\n{}", "not valid JSON"),
        ('{"model": "a", "model": "b"}', "appears twice"),
        ('{"x": NaN}', "not valid JSON"),
        ("[1, 2]", "not an object"),
        ('{"hooks": []}', "`hooks` is not an object"),
        ('{"hooks": {"Stop": {}}}', "`hooks.Stop` is not a list"),
    ],
)
def test_a_file_memdir_cannot_read_safely_is_refused_and_left_alone(project: Path, text: str, message: str) -> None:
    path = _settings(project)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    with pytest.raises(SettingsError, match=message.replace("(", r"\(")):
        _install(project)
    assert path.read_text() == text


def test_cli_refuses_invalid_json_with_one_line_and_exit_2(project: Path) -> None:
    path = _settings(project)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"hooks": ')
    result = invoke_memdir("hooks", "install", "--scope", "project", cwd=project)
    assert result.exit_code == 2
    assert "Traceback" not in result.output and len(result.stderr.strip().splitlines()) == 1
    assert "not valid JSON" in result.stderr and path.read_text() == '{"hooks": '


def test_scopes_pick_their_files(project: Path, isolated_env: Path) -> None:
    for scope, path in [
        ("project", _settings(project)),
        ("local", _settings(project, "settings.local.json")),
        ("user", isolated_env / ".claude" / "settings.json"),  # CLAUDE_CONFIG_DIR, set by conftest
    ]:
        result = invoke_memdir("hooks", "install", "--scope", scope, cwd=project / ".claude")
        assert result.exit_code == 0, result.output
        assert json.loads(path.read_text())["hooks"]["Stop"] == [STOP_GROUP]


def test_default_scope_is_local(project: Path) -> None:
    assert invoke_memdir("hooks", "install", cwd=project).exit_code == 0
    assert _settings(project, "settings.local.json").exists() and not _settings(project).exists()


def test_dry_run_prints_a_diff_and_writes_nothing(project: Path) -> None:
    result = invoke_memdir("hooks", "install", "--scope", "project", "--dry-run", cwd=project)
    assert result.exit_code == 0
    assert result.stdout.startswith("--- /dev/null\n+++ .claude/settings.json\n")
    assert '+            "command": "memdir hook session-start",' in result.stdout
    assert not _settings(project).exists()
    assert "would be created" in result.stderr


def test_a_symlinked_settings_file_stays_a_symlink(project: Path, tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "settings.json"
    _write_json(real, {"model": "opus"})
    _settings(project).parent.mkdir(parents=True, exist_ok=True)
    _settings(project).symlink_to(real)
    _install(project)
    assert _settings(project).is_symlink()
    assert "Stop" in json.loads(real.read_text())["hooks"]


# --- settings: uninstall -----------------------------------------------------------------


def test_uninstall_removes_only_memdirs_entries_and_the_containers_they_emptied(project: Path) -> None:
    guard = {"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}
    _write_json(_settings(project), {"model": "opus", "hooks": {"PreToolUse": [guard], "Notification": []}})
    _install(project)
    _uninstall(project)
    assert json.loads(_settings(project).read_text()) == {
        "model": "opus",
        "hooks": {"PreToolUse": [guard], "Notification": []},  # an empty list memdir did not empty stays
    }


def test_uninstall_drops_the_hooks_object_when_memdirs_were_all_it_held(project: Path) -> None:
    _write_json(_settings(project), {"model": "opus"})
    _install(project)
    _uninstall(project)
    assert json.loads(_settings(project).read_text()) == {"model": "opus"}


def test_uninstall_finds_entries_whatever_the_command_and_keeps_shared_groups(project: Path) -> None:
    mine = {"type": "command", "command": "./setup.sh"}
    _write_json(
        _settings(project),
        {
            "hooks": {
                "SessionStart": [
                    {
                        "matcher": "startup",
                        "hooks": [mine, {"type": "command", "command": "uvx memdir hook session-start"}],
                    }
                ],
                "Stop": [
                    {"hooks": [{"type": "command", "command": '"$CLAUDE_PROJECT_DIR"/.venv/bin/memdir hook stop'}]}
                ],
            }
        },
    )
    _uninstall(project)
    assert json.loads(_settings(project).read_text()) == {
        "hooks": {"SessionStart": [{"matcher": "startup", "hooks": [mine]}]}
    }


def test_uninstall_leaves_a_file_without_memdir_hooks_byte_for_byte(project: Path) -> None:
    path = _settings(project)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}')
    (change,) = _uninstall(project)
    assert not change.changed and path.read_text().startswith('{"hooks": {"Stop": [{')


def test_uninstall_without_a_settings_file_creates_none(project: Path) -> None:
    result = invoke_memdir("hooks", "uninstall", "--scope", "project", cwd=project)
    assert result.exit_code == 0 and "nothing to remove" in result.stderr
    assert not _settings(project).exists()


@pytest.mark.parametrize(
    ("command", "event"),
    [
        ("memdir hook session-start", "session-start"),
        ("memdir hook stop", "stop"),
        ("/home/me/.venv/bin/memdir hook stop", "stop"),
        ('"$CLAUDE_PROJECT_DIR"/.venv/bin/memdir hook session-start', "session-start"),
        ("uvx memdir hook stop", "stop"),
        ("python3 -m memdir --dir .claude/memory hook session-start", "session-start"),
        ("memdir -q hook stop || true", "stop"),
        ("memdir index", None),
        ("memdir hook", None),
        ("./memdir-helper hook stop", None),
        ("echo memdir", None),
        ("npx something hook stop", None),
        ("memdir hook 'unclosed", None),
    ],
)
def test_hook_commands_are_recognised_however_memdir_is_reached(command: str, event: str | None) -> None:
    assert hook_event_of(command) == event


# --- settings: autoMemoryDirectory --------------------------------------------------------


def test_auto_memory_dir_goes_to_local_settings_as_an_absolute_path(project: Path) -> None:
    result = invoke_memdir("hooks", "install", "--scope", "project", "--auto-memory-dir", cwd=project)
    assert result.exit_code == 0, result.output
    local = json.loads(_settings(project, "settings.local.json").read_text())
    assert local == {"autoMemoryDirectory": str((project / ".claude" / "memory").resolve())}
    assert "autoMemoryDirectory" not in json.loads(_settings(project).read_text())  # never the committed file


def test_auto_memory_dir_refuses_to_overwrite_another_value_and_writes_nothing(project: Path) -> None:
    _write_json(_settings(project, "settings.local.json"), {"autoMemoryDirectory": "~/elsewhere"})
    with pytest.raises(SettingsConflict, match="elsewhere"):
        _install(project, auto_memory_dir=project / ".claude" / "memory")
    assert not _settings(project).exists()  # the hooks file was not written either
    result = invoke_memdir("hooks", "install", "--scope", "project", "--auto-memory-dir", cwd=project)
    assert result.exit_code == 1 and "already sets autoMemoryDirectory" in result.stderr


def test_auto_memory_dir_needs_a_folder_other_than_claudes_own(tmp_path: Path) -> None:
    (tmp_path / "bare" / ".git").mkdir(parents=True)
    result = invoke_memdir("hooks", "install", "--auto-memory-dir", cwd=tmp_path / "bare")
    assert result.exit_code == 2 and "Claude Code's own" in result.stderr


def test_uninstall_auto_memory_dir_removes_only_a_value_pointing_at_the_folder(project: Path) -> None:
    invoke_memdir("hooks", "install", "--auto-memory-dir", cwd=project)
    assert invoke_memdir("hooks", "uninstall", "--auto-memory-dir", cwd=project).exit_code == 0
    assert not _settings(project, "settings.local.json").exists()
    _write_json(_settings(project, "settings.local.json"), {"autoMemoryDirectory": "/somewhere/else"})
    invoke_memdir("hooks", "uninstall", "--auto-memory-dir", cwd=project)
    assert json.loads(_settings(project, "settings.local.json").read_text()) == {
        "autoMemoryDirectory": "/somewhere/else"
    }


# --- hook session-start -------------------------------------------------------------------


def _payload(project: Path, **extra: str) -> str:
    return json.dumps(
        {
            "session_id": "s-1",
            "transcript_path": str(project / "t.jsonl"),
            "cwd": str(project),
            "hook_event_name": "SessionStart",
            "source": "startup",
            **extra,
        }
    )


def _context(output: str, event: str = "SessionStart") -> str:
    payload = json.loads(output)
    assert payload["hookSpecificOutput"]["hookEventName"] == event
    context = payload["hookSpecificOutput"]["additionalContext"]
    assert isinstance(context, str)
    return context


def test_session_start_reindexes_and_gives_the_index_as_context(project: Path, tmp_path: Path) -> None:
    # Run from elsewhere: the folder comes from the hook's cwd, not the process's.
    result = invoke_memdir("hook", "session-start", input=_payload(project), cwd=tmp_path)
    assert result.exit_code == 0, result.output
    index = (project / ".claude" / "memory" / "MEMORY.md").read_text()
    assert "- [lint-first](feedback_lint-first.md) — Run the linter before every commit" in index
    context = _context(result.stdout)
    assert context.startswith("# Long-term memory (memdir)\n")
    assert str(project / ".claude" / "memory") in context and context.endswith(index)


def test_session_start_tells_the_agent_when_it_first_replaced_hand_written_entries(project: Path) -> None:
    index = project / ".claude" / "memory" / "MEMORY.md"
    index.write_text("- [lint-first](feedback_lint-first.md) — my own words for it\n")
    first = _context(invoke_memdir("hook", "session-start", input=_payload(project), cwd=project).stdout)
    assert "replaced 1 hand-written entry line" in first and "MEMORY.md.prev" in first
    index.write_text("- [lint-first](feedback_lint-first.md) — my own words again\n")
    again = _context(invoke_memdir("hook", "session-start", input=_payload(project), cwd=project).stdout)
    assert "replaced" not in again  # said once: the first rewrite is the one nobody expected


def test_session_start_leaves_out_an_entry_whose_file_is_gone_and_says_so(project: Path) -> None:
    """MEMORY.md keeps a dead entry for a person to see; the session must not be told to read it."""
    index = project / ".claude" / "memory" / "MEMORY.md"
    invoke_memdir("hook", "session-start", input=_payload(project), cwd=project)
    dead = "- [release-freeze](project_release-freeze.md) — Release freeze starts next Thursday"
    index.write_text(index.read_text() + dead + "\n")
    result = invoke_memdir("hook", "session-start", input=_payload(project), cwd=project)
    assert dead in index.read_text()  # kept in the file, by design
    context = _context(result.stdout)
    assert "next Thursday" not in context and "lint-first" in context
    assert context.endswith(
        "<!-- memdir: 1 entry of MEMORY.md left out here because its file no longer exists "
        "(project_release-freeze.md); `memdir index --drop-missing` removes them -->\n"
    )


def test_session_start_without_input_resolves_from_the_working_directory(project: Path) -> None:
    result = invoke_memdir("hook", "session-start", input="", cwd=project)
    assert result.exit_code == 0 and "lint-first" in _context(result.stdout)


@pytest.mark.parametrize("stdin", ["not json", "[1, 2]", '{"cwd": 42}', "\x00\xff"])
def test_session_start_survives_bad_input(project: Path, stdin: str) -> None:
    result = invoke_memdir("hook", "session-start", input=stdin, cwd=project)
    assert result.exit_code == 0 and "Traceback" not in result.output
    assert "lint-first" in _context(result.stdout)


def test_session_start_without_a_folder_prints_nothing_and_exits_0(tmp_path: Path) -> None:
    (tmp_path / "bare" / ".git").mkdir(parents=True)
    result = invoke_memdir("hook", "session-start", input=_payload(tmp_path / "bare"), cwd=tmp_path)
    assert result.exit_code == 0 and result.stdout == ""
    assert "no memory folder" in result.stderr and len(result.stderr.splitlines()) == 1


def test_session_start_with_a_broken_memory_still_gives_the_rest(project: Path) -> None:
    (project / ".claude" / "memory" / "broken.md").write_text('---\nname: "unclosed\n---\nbody\n')
    result = invoke_memdir("hook", "session-start", input=_payload(project), cwd=project)
    assert result.exit_code == 0 and "lint-first" in _context(result.stdout)
    assert "1 file could not be read as a memory" in result.stderr


def test_session_start_with_an_unreadable_index_notes_it_and_exits_0(project: Path) -> None:
    (project / ".claude" / "memory" / "MEMORY.md").write_bytes(b"# Memory \xff\n")
    result = invoke_memdir("hook", "session-start", input=_payload(project), cwd=project)
    assert result.exit_code == 0 and result.stdout == "" and "not valid UTF-8" in result.stderr


def test_session_start_with_a_broken_config_notes_it_and_exits_0(project: Path) -> None:
    (project / ".memdir.toml").write_text("dir = [\n")
    result = invoke_memdir("hook", "session-start", input=_payload(project), cwd=project)
    assert result.exit_code == 0 and result.stdout == "" and "invalid TOML" in result.stderr


def test_session_start_keeps_the_context_under_claude_codes_inline_limit(
    project: Path, make_memory: MakeMemory
) -> None:
    root = project / ".claude" / "memory"
    for i in range(150):
        make_memory(
            f"project_topic-{i:03d}.md",
            root=root,
            description=f"Topic {i:03d}, " + "a fairly long description of a decision and its reasons " * 2,
            importance=0.9 if i == 149 else 0.5,
        )
    result = invoke_memdir("hook", "session-start", input=_payload(project), cwd=project)
    assert result.exit_code == 0
    context = _context(result.stdout)
    index = (root / "MEMORY.md").read_text()
    assert len(index) > 10_000  # MEMORY.md itself keeps its own, larger caps
    assert len(context) <= CONTEXT_LIMIT and len(result.stdout) < 10_000
    assert "topic-149" in context  # the most important survives; the least valuable go first
    assert "more memories left out" in context and str(root / "MEMORY.md") in context


def test_session_start_cuts_long_hand_written_text_at_a_line(project: Path) -> None:
    root = project / ".claude" / "memory"
    prose = "".join(f"Hand-written rule number {i}, with some words to make it long enough.\n" for i in range(300))
    (root / "MEMORY.md").write_text(prose)
    result = invoke_memdir("hook", "session-start", input=_payload(project), cwd=project)
    assert result.exit_code == 0
    context = _context(result.stdout)
    assert len(context) <= CONTEXT_LIMIT and "cut here to fit" in context
    body = context.split("\n\n", 3)[-1]
    assert all(line.startswith(("Hand-written rule", "<!-- memdir")) for line in body.splitlines())


def test_session_start_does_not_wait_long_for_a_held_lock(
    project: Path, monkeypatch: pytest.MonkeyPatch, make_memory: MakeMemory
) -> None:
    monkeypatch.setattr(claude_runtime, "LOCK_WAIT_SECONDS", 0.2)
    make_memory("user_role.md", root=project / ".claude" / "memory", description="Backend developer")
    before = (project / ".claude" / "memory" / "MEMORY.md").read_text()
    with folder_lock(project / ".claude" / "memory"):
        outcome = session_start({"cwd": str(project)}, dir_option=None, env=os.environ, cwd=project)
    assert (
        outcome.output is not None and "Backend developer" in outcome.output["hookSpecificOutput"]["additionalContext"]
    )
    assert "not rewritten" in outcome.notes[0]
    assert (project / ".claude" / "memory" / "MEMORY.md").read_text() == before


def test_global_dir_option_wins_over_the_hook_cwd(project: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "MEMORY.md").write_text("- [x](user_x.md) — x\n")
    (other / "user_x.md").write_text("---\nname: x\ndescription: Other folder\ntype: user\n---\nX.\n")
    result = invoke_memdir("--dir", str(other), "hook", "session-start", input=_payload(project), cwd=project)
    assert "Other folder" in _context(result.stdout) and "lint-first" not in result.stdout


def test_a_relative_dir_is_relative_to_the_hook_cwd(project: Path, tmp_path: Path) -> None:
    result = invoke_memdir("--dir", ".claude/memory", "hook", "session-start", input=_payload(project), cwd=tmp_path)
    assert "lint-first" in _context(result.stdout)


# --- hook stop -------------------------------------------------------------------------------


def test_stop_records_the_transcript_once_per_session(project: Path) -> None:
    pending = project / ".claude" / "memory" / ".memdir" / "pending-extractions.jsonl"
    for i in range(3):  # Stop fires after every reply
        result = invoke_memdir("hook", "stop", input=_payload(project, hook_event_name="Stop"), cwd=project)
        # Without an API key nothing extracts it: the first Stop says so (tests/test_pending.py), no other.
        assert result.exit_code == 0 and (result.stdout == "") == (i > 0)
    other = _payload(project, session_id="s-2", hook_event_name="Stop")
    invoke_memdir("hook", "stop", input=other, cwd=project)
    entries = read_pending(pending)
    assert [e["session_id"] for e in entries] == ["s-1", "s-2"]
    assert entries[0]["transcript_path"] == str(project / "t.jsonl") and entries[0]["cwd"] == str(project)
    assert entries[0]["recorded_at"][:4].isdigit()
    assert (pending.parent / ".gitignore").exists()


def test_stop_without_a_transcript_or_folder_records_nothing(project: Path, tmp_path: Path) -> None:
    result = invoke_memdir("hook", "stop", input=json.dumps({"cwd": str(project)}), cwd=project)
    assert result.exit_code == 0 and "no transcript_path" in result.stderr
    assert read_pending(project / ".claude" / "memory" / ".memdir" / "pending-extractions.jsonl") == []
    (tmp_path / "bare" / ".git").mkdir(parents=True)
    result = invoke_memdir("hook", "stop", input=_payload(tmp_path / "bare"), cwd=tmp_path)
    assert result.exit_code == 0 and "no memory folder" in result.stderr
    assert not list((tmp_path / "bare").rglob("pending-extractions.jsonl"))


def test_stop_appends_from_many_sessions_at_once_without_tearing(project: Path) -> None:
    def stop(i: int) -> None:
        record_stop(
            {"session_id": f"s-{i}", "transcript_path": f"/t/{i}.jsonl", "cwd": str(project)},
            dir_option=None,
            env=os.environ,
            cwd=project,
        )

    threads = [threading.Thread(target=stop, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    lines = (project / ".claude" / "memory" / ".memdir" / "pending-extractions.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["session_id"] for line in lines) == sorted(f"s-{i}" for i in range(16))


@pytest.mark.parametrize("event", ["session-start", "user-prompt-submit", "stop"])
def test_an_internal_error_never_blocks_the_session(project: Path, monkeypatch: pytest.MonkeyPatch, event: str) -> None:
    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(claude_runtime, "session_start", boom)
    monkeypatch.setattr(claude_runtime, "prompt_recall", boom)
    monkeypatch.setattr(claude_runtime, "record_stop", boom)
    result = invoke_memdir("hook", event, input=_payload(project), cwd=project)
    assert result.exit_code == 0  # never 2: a Stop hook exiting 2 keeps the agent going
    assert "internal error: RuntimeError: boom" in result.stderr and "Traceback" not in result.output


def test_quiet_silences_the_notes(tmp_path: Path) -> None:
    result = invoke_memdir("-q", "hook", "session-start", input="{}", cwd=tmp_path)
    assert result.exit_code == 0 and result.stderr == ""


# --- the prompt hook: recall for what the user just typed -------------------------------------

LINT_PROMPT = "should I run the linter before this commit?"


def _prompt_context(output: str) -> str:
    return _context(output, "UserPromptSubmit")


def _prompt(project: Path, prompt: str) -> str:
    return _payload(project, hook_event_name="UserPromptSubmit", prompt=prompt)


def test_prompt_hook_gives_the_recalled_memories_in_full(project: Path, tmp_path: Path) -> None:
    result = invoke_memdir("hook", "user-prompt-submit", input=_prompt(project, LINT_PROMPT), cwd=tmp_path)
    assert result.exit_code == 0 and result.stderr == "", result.output
    context = _prompt_context(result.stdout)
    assert context.startswith("# Memories recalled for this prompt (memdir)\n")
    assert "## lint-first" in context and "**Why:** CI broke." in context
    assert "feedback · recalled · feedback_lint-first.md" in context
    log = project / ".claude" / "memory" / ".memdir" / "recall.jsonl"
    assert LINT_PROMPT in log.read_text()  # logged like any other recall


@pytest.mark.parametrize(
    "prompt", ["what is the weather in Lisbon tomorrow?", "ok", "", "   ", f"/memdir:recall {LINT_PROMPT}"]
)
def test_prompt_hook_is_a_no_op_when_nothing_passes_the_gate(project: Path, prompt: str) -> None:
    result = invoke_memdir("hook", "user-prompt-submit", input=_prompt(project, prompt), cwd=project)
    assert result.exit_code == 0 and result.stdout == "" and result.stderr == ""


def test_prompt_hook_without_a_prompt_or_a_folder_prints_nothing(project: Path, tmp_path: Path) -> None:
    (tmp_path / "bare" / ".git").mkdir(parents=True)
    for stdin in ("", "not json", _payload(project), _prompt(tmp_path / "bare", LINT_PROMPT)):
        result = invoke_memdir("hook", "user-prompt-submit", input=stdin, cwd=tmp_path)
        assert result.exit_code == 0 and result.stdout == "", (stdin, result.output)
        assert "Traceback" not in result.output


@pytest.mark.parametrize("status", ["quarantined", "superseded", "archived"])
def test_prompt_hook_never_brings_up_a_memory_that_is_out_of_play(project: Path, status: str) -> None:
    path = project / ".claude" / "memory" / "feedback_lint-first.md"
    path.write_text(path.read_text().replace("type: feedback\n", f"type: feedback\nstatus: {status}\n"))
    result = invoke_memdir("hook", "user-prompt-submit", input=_prompt(project, LINT_PROMPT), cwd=project)
    assert result.exit_code == 0 and result.stdout == ""


def test_prompt_hook_can_be_turned_off_in_the_config(project: Path) -> None:
    (project / ".memdir.toml").write_text("[context]\nrecall-on-prompt = false\n")
    result = invoke_memdir("hook", "user-prompt-submit", input=_prompt(project, LINT_PROMPT), cwd=project)
    assert result.exit_code == 0 and result.stdout == ""


def test_prompt_hook_leaves_out_a_memory_too_long_for_claude_codes_inline_limit(project: Path) -> None:
    memory = project / ".claude" / "memory"
    (memory / "feedback_lint-config.md").write_text(
        "---\nname: lint-config\ndescription: The linter config lives in ruff.toml\ntype: feedback\n---\n"
        + "The linter reads ruff.toml before every commit. " * 400,
        encoding="utf-8",
    )
    result = invoke_memdir("hook", "user-prompt-submit", input=_prompt(project, LINT_PROMPT), cwd=project)
    context = _prompt_context(result.stdout)
    assert len(context) <= CONTEXT_LIMIT and "## lint-first" in context and "lint-config" not in context
    assert "1 recalled memory left out to stay short" in result.stderr
    (memory / "feedback_lint-first.md").unlink()  # only the long one is left: nothing, and the note
    result = invoke_memdir("hook", "user-prompt-submit", input=_prompt(project, LINT_PROMPT), cwd=project)
    assert result.exit_code == 0 and result.stdout == ""
    assert "1 recalled memory left out to stay short" in result.stderr


def test_prompt_hook_recalls_for_the_beginning_and_end_of_a_long_prompt(project: Path) -> None:
    paste = "\n".join(f"2026-11-22 10:{i % 60:02d} INFO worker {i} heartbeat ok" for i in range(2_000))
    prompt = f"{LINT_PROMPT}\n{paste}\nThanks!"
    assert len(prompt) > 50_000
    query = claude_runtime.prompt_query(prompt)
    assert len(query) <= claude_runtime.PROMPT_QUERY_LIMIT
    assert query.startswith(LINT_PROMPT) and query.endswith("heartbeat ok\nThanks!")
    assert claude_runtime.prompt_query("alpha beta gamma delta", 12) == "alpha\ndelta"  # whole words only
    result = invoke_memdir("hook", "user-prompt-submit", input=_prompt(project, prompt), cwd=project)
    assert "## lint-first" in _prompt_context(result.stdout)
    logged = json.loads((project / ".claude" / "memory" / ".memdir" / "recall.jsonl").read_text().splitlines()[-1])
    assert logged["query"] == query


# --- the typer-free path -----------------------------------------------------------------------


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")}
    env.update(HOME=str(home), CLAUDE_CONFIG_DIR=str(home / ".claude"), MEMDIR_TODAY=TODAY, NO_COLOR="1", **extra)
    env["PYTHONIOENCODING"] = "utf-8"
    return env


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["hook", "session-start"], ({"dir_option": None, "quiet": False, "no_cache": False}, "session-start")),
        (["hook", "stop"], ({"dir_option": None, "quiet": False, "no_cache": False}, "stop")),
        (
            ["hook", "user-prompt-submit"],
            ({"dir_option": None, "quiet": False, "no_cache": False}, "user-prompt-submit"),
        ),
        (["--dir", "m", "-q", "hook", "stop"], ({"dir_option": Path("m"), "quiet": True, "no_cache": False}, "stop")),
        (
            ["hook", "session-start", "--no-cache"],
            ({"dir_option": None, "quiet": False, "no_cache": True}, "session-start"),
        ),
    ],
)
def test_plain_hook_command_lines_take_the_fast_path(argv: list[str], expected: tuple[Any, str]) -> None:
    assert _parse_hook(argv) == expected
    assert _parse(argv) is None


@pytest.mark.parametrize(
    "argv",
    [
        ["hook"],
        ["hook", "--help"],
        ["hook", "session-start", "--help"],
        ["hook", "stop", "-h"],
        ["hook", "start"],
        ["hook", "stop", "extra"],
        ["hooks", "install"],
        ["-q", "--", "hook", "stop"],
    ],
)
def test_other_hook_command_lines_go_to_typer(argv: list[str]) -> None:
    assert _parse_hook(argv) is None
    assert run_fast(argv) is None


def test_a_stray_no_cache_variable_does_not_send_a_hook_to_typers_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMDIR_NO_CACHE", "maybe")
    assert _parse(["index"]) is None  # `index` leaves the complaint to typer
    assert _parse_hook(["hook", "stop"]) == ({"dir_option": None, "quiet": False, "no_cache": False}, "stop")


def test_hook_help_comes_from_typer() -> None:
    result = invoke_memdir("hook", "session-start", "--help")
    assert result.exit_code == 0 and "SessionStart hook" in result.stdout


@pytest.mark.parametrize("event", ["session-start", "user-prompt-submit", "stop"])
def test_fast_hook_path_imports_neither_typer_nor_rich_nor_pydantic(project: Path, tmp_path: Path, event: str) -> None:
    probe = (
        "import sys\nfrom memdir.cli import main\nsys.argv = ['memdir', 'hook', sys.argv[1]]\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    code = exc.code\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'rich', 'pydantic', 'click', 'yaml'))\n"
        "print(code, heavy, file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, event],
        input=_payload(project, prompt=LINT_PROMPT), capture_output=True, text=True, env=_env(tmp_path), cwd=tmp_path,
        timeout=60,
    )  # fmt: skip
    assert done.stderr.strip().splitlines()[-1] == "0 []", done.stdout + done.stderr
    if event == "session-start":
        assert "lint-first" in _context(done.stdout)
    if event == "user-prompt-submit":
        assert "lint-first" in _prompt_context(done.stdout)


def test_prompt_hook_loads_no_more_than_import_typer_does(project: Path, tmp_path: Path) -> None:
    """The prompt hook runs before every prompt: issue 19 holds it to 1.3 x `import typer`. Counted
    in modules imported beyond a bare interpreter's, not in seconds (make bench has the clock)."""

    # Each of these cost the hook a tenth of `import typer` or more, and it needs none of them.
    unneeded = ("typer", "rich", "click", "yaml", "hashlib", "anthropic", "memdir.write", "memdir.lint")
    heavy: list[str] = []

    def count(code: str, stdin: str = "") -> int:
        probe = (
            f"import sys\n{code}\nprint(len(sys.modules), file=sys.stderr)\n"
            f"print(sorted(m for m in sys.modules if m.startswith({unneeded!r})), file=sys.stderr)\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", probe], input=stdin, capture_output=True, text=True, env=_env(tmp_path),
            cwd=tmp_path, timeout=60,
        )  # fmt: skip
        heavy[:] = json.loads(done.stderr.strip().splitlines()[-1].replace("'", '"'))
        return int(done.stderr.strip().splitlines()[-2])

    bare = count("pass")
    typer = count("import typer")
    hook = count(
        "from memdir.cli import main\nsys.argv = ['memdir', 'hook', 'user-prompt-submit']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass",
        _prompt(project, LINT_PROMPT),
    )
    assert heavy == []
    assert hook - bare <= 1.3 * (typer - bare), (bare, typer, hook)


@pytest.mark.parametrize(
    ("argv", "stdin"),
    [
        (["hook", "session-start"], "payload"),
        (["-q", "hook", "session-start"], "payload"),
        (["hook", "session-start"], "not json"),
        (["hook", "session-start", "--dir", "{p}/.claude/memory"], ""),
        (["--dir", "{p}/missing", "hook", "session-start"], "payload"),
        (["hook", "stop"], "payload"),
        (["hook", "stop"], "{}"),
        (["hook", "user-prompt-submit"], "payload"),
        (["hook", "user-prompt-submit"], "{}"),
    ],
)
def test_fast_and_typer_hook_paths_behave_the_same(tmp_path: Path, project: Path, argv: list[str], stdin: str) -> None:
    fast_project = project
    typer_project = tmp_path / "typer-project"
    shutil.copytree(project, typer_project)

    def run_args(root: Path) -> list[str]:
        return [a.replace("{p}", str(root)) for a in argv]

    def run_input(root: Path) -> str:
        return _payload(root, prompt=LINT_PROMPT) if stdin == "payload" else stdin

    assert _parse_hook(run_args(fast_project)) is not None
    fast = subprocess.run(
        [sys.executable, "-m", "memdir", *run_args(fast_project)],
        input=run_input(fast_project), capture_output=True, text=True, env=_env(tmp_path), cwd=fast_project,
        timeout=60,
    )  # fmt: skip
    typer = invoke_memdir(*run_args(typer_project), input=run_input(typer_project), cwd=typer_project)
    assert fast.returncode == typer.exit_code == 0
    assert fast.stdout.replace(str(fast_project), str(typer_project)) == typer.stdout
    assert fast.stderr.replace(str(fast_project), str(typer_project)) == typer.stderr
    for relative in (".claude/memory/MEMORY.md", ".claude/memory/.memdir/pending-extractions.jsonl"):
        fast_file, typer_file = fast_project / relative, typer_project / relative
        assert fast_file.exists() == typer_file.exists()
        if fast_file.exists():
            fast_text = fast_file.read_text().replace(str(fast_project), str(typer_project))
            assert _without_times(fast_text) == _without_times(typer_file.read_text())


def _without_times(text: str) -> str:
    return "\n".join(line.split('"recorded_at"')[0] for line in text.splitlines())


def test_memdir_hooks_are_what_the_docs_show() -> None:
    docs = (REPO / "docs" / "claude-code.md").read_text()
    settings = {"hooks": {h.event: [h.group()] for h in memdir_hooks()}}
    assert json.dumps(settings, indent=2) in docs


# --- session start with `context.recall-on-start` ------------------------------------------------


def _branch(project: Path, head: str) -> None:
    (project / ".git" / "HEAD").write_text(head + "\n")


@pytest.mark.parametrize(
    ("head", "topic"),
    [
        ("ref: refs/heads/fix/friday-deploys", "fix friday deploys"),
        ("ref: refs/heads/feature/grafana_alerts-2", "feature grafana alerts 2"),
        ("ref: refs/heads/main", None),
        ("ref: refs/heads/master", None),
        ("0123456789abcdef0123456789abcdef01234567", None),  # detached
    ],
)
def test_session_topic_is_the_branch_name(project: Path, head: str, topic: str | None) -> None:
    _branch(project, head)
    assert claude_runtime.session_topic(project / ".claude") == topic


def test_session_topic_follows_a_worktrees_gitdir(tmp_path: Path) -> None:
    main = tmp_path / "main" / ".git" / "worktrees" / "wt"
    main.mkdir(parents=True)
    (main / "HEAD").write_text("ref: refs/heads/release-checklist\n")
    tree = tmp_path / "wt"
    tree.mkdir()
    (tree / ".git").write_text(f"gitdir: {main}\n")
    assert claude_runtime.session_topic(tree) == "release checklist"
    assert claude_runtime.session_topic(tmp_path / "elsewhere") is None  # no repository


@pytest.fixture
def recalling(project: Path, make_memory: MakeMemory) -> Path:
    """The project with `recall-on-start` on, a pinned memory and one about Friday deploys."""
    root = project / ".claude" / "memory"
    make_memory("user_role.md", root=root, description="Backend developer", pin="true", body="Writes Go.\n")
    make_memory("feedback_friday.md", root=root, description="No production deploys on Fridays",
                updated="2026-10-23", body="Don't deploy to production on a Friday.\n")  # fmt: skip
    (project / ".memdir.toml").write_text("[context]\nrecall-on-start = true\n")
    return project


def test_session_start_adds_pinned_and_recalled_bodies_when_configured(recalling: Path) -> None:
    _branch(recalling, "ref: refs/heads/fix/friday-deploys")
    result = invoke_memdir("hook", "session-start", input=_payload(recalling), cwd=recalling)
    assert result.exit_code == 0, result.output
    context = _context(result.stdout)
    index = (recalling / ".claude" / "memory" / "MEMORY.md").read_text()
    assert context.index(index) < context.index("# Memories loaded in full")
    assert "Writes Go." in context  # pinned
    assert "feedback · recalled · feedback_friday.md" in context
    assert "This memory is 30 days old; verify before asserting it as fact." in context
    from memdir.read.recall_log import read_log

    assert read_log(recalling / ".claude" / "memory")[-1]["query"] == "fix friday deploys"


def test_session_start_on_a_default_branch_adds_only_pinned_bodies(recalling: Path) -> None:
    _branch(recalling, "ref: refs/heads/main")
    result = invoke_memdir("hook", "session-start", input=_payload(recalling), cwd=recalling)
    context = _context(result.stdout)
    assert "Writes Go." in context and "Don't deploy" not in context
    assert not (recalling / ".claude" / "memory" / ".memdir" / "recall.jsonl").exists()


def test_session_start_without_the_setting_gives_the_index_alone(recalling: Path) -> None:
    (recalling / ".memdir.toml").unlink()
    _branch(recalling, "ref: refs/heads/fix/friday-deploys")
    context = _context(invoke_memdir("hook", "session-start", input=_payload(recalling), cwd=recalling).stdout)
    assert "Writes Go." not in context and "Memories loaded in full" not in context


def test_session_start_bodies_stay_within_the_limit(recalling: Path, make_memory: MakeMemory) -> None:
    root = recalling / ".claude" / "memory"
    for i in range(50):  # an index of about 6,000 characters
        make_memory(f"project_topic-{i:03d}.md", root=root,
                    description=f"Topic {i:03d}, a fairly long description of a decision and its reasons")  # fmt: skip
    make_memory("feedback_long.md", root=root, description="Long rule about friday deploys", pin="true",
                body="A very long pinned body. " * 400)  # fmt: skip
    _branch(recalling, "ref: refs/heads/fix/friday-deploys")
    result = invoke_memdir("hook", "session-start", input=_payload(recalling), cwd=recalling)
    context = _context(result.stdout)
    assert len(context) <= CONTEXT_LIMIT
    assert "A very long pinned body." not in context  # left out whole, never cut
    assert "Writes Go." in context


def test_session_start_says_when_the_index_leaves_no_room_for_bodies(recalling: Path, make_memory: MakeMemory) -> None:
    root = recalling / ".claude" / "memory"
    for i in range(120):  # an index longer than the hook's whole room
        make_memory(f"project_topic-{i:03d}.md", root=root,
                    description=f"Topic {i:03d}, a fairly long description of a decision and its reasons")  # fmt: skip
    _branch(recalling, "ref: refs/heads/fix/friday-deploys")
    result = invoke_memdir("hook", "session-start", input=_payload(recalling), cwd=recalling)
    assert result.exit_code == 0 and "Writes Go." not in _context(result.stdout)
    assert "2 memories to load in full left out: the index leaves the hook no room for them" in result.stderr


def test_session_start_with_recall_stays_on_the_fast_path(recalling: Path) -> None:
    _branch(recalling, "ref: refs/heads/fix/friday-deploys")
    probe = (
        "import sys\n"
        "from memdir.cli.fast import run_fast\n"
        "code = run_fast(['hook', 'session-start'])\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'rich', 'pydantic', 'anthropic'))\n"
        "print(code, heavy, file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], input=_payload(recalling), capture_output=True, text=True,
                          cwd=recalling, timeout=60)  # fmt: skip
    assert done.returncode == 0 and done.stderr.strip().splitlines()[-1] == "0 []", done.stderr
    assert "This memory is 30 days old" in _context(done.stdout)


def test_recall_on_start_must_be_a_boolean(tmp_path: Path) -> None:
    from memdir.core.config import load_config
    from memdir.core.errors import ConfigError

    (tmp_path / ".memdir.toml").write_text('[context]\nrecall-on-start = "yes"\n')
    with pytest.raises(ConfigError, match="recall-on-start"):
        load_config(tmp_path)


def test_the_extraction_log_starts_afresh_past_its_size(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memdir.core import store

    folder = MemoryDir(project / ".claude" / "memory")
    log = store.ensure_state_dir(folder.root) / claude_runtime.EXTRACT_HOOK_LOG
    log.write_bytes(b"x" * 200)
    monkeypatch.setattr(store, "LOG_MAX_BYTES", 100)
    started: list[list[str]] = []
    monkeypatch.setattr("subprocess.Popen", lambda command, **kwargs: started.append(command))
    assert claude_runtime.spawn_extraction(folder, "t.jsonl", {"ANTHROPIC_API_KEY": "k"}, project)
    assert started and log.with_name(log.name + ".1").read_bytes() == b"x" * 200
    assert log.read_bytes() == b""


def test_the_fast_path_knows_the_same_hook_events() -> None:
    assert all(_parse_hook(["hook", event]) is not None for event in claude_settings.EVENTS)


def test_session_bodies_say_when_none_fits_the_room_left(recalling: Path) -> None:
    from memdir.folder import MemoryDir

    notes: list[str] = []
    folder = MemoryDir(recalling / ".claude" / "memory", today=TODAY)
    assert claude_runtime.session_bodies(folder, None, 60, notes) == ""  # room, but not for the pinned one
    assert notes == ["1 memory to load in full left out: the index leaves the hook no room for them"]


@pytest.mark.parametrize("output_format", ["json", "yaml"])
def test_the_stop_hooks_extraction_speaks_text_whatever_memdir_output_format_says(
    project: Path, monkeypatch: pytest.MonkeyPatch, output_format: str
) -> None:
    """MEMDIR_OUTPUT_FORMAT set in the shell Claude Code started from reaches the detached extraction:
    its log is for people, and a value no command has must not stop the extraction from running."""
    folder = MemoryDir(project / ".claude" / "memory")
    transcript = project / "session.jsonl"
    transcript.write_text("")
    started: list[tuple[list[str], dict[str, str]]] = []
    monkeypatch.setattr("subprocess.Popen", lambda command, **kwargs: started.append((command, kwargs["env"])))
    env = {"ANTHROPIC_API_KEY": "k", "MEMDIR_OUTPUT_FORMAT": output_format}
    assert claude_runtime.spawn_extraction(folder, str(transcript), env, project)
    ((command, child_env),) = started
    assert command[:3] == [sys.executable, "-m", "memdir"]
    result = invoke_memdir(*command[3:], env=child_env, cwd=project)
    assert result.exit_code == 0 and result.stdout == "", result.output
    assert "nothing new to extract" in result.stderr

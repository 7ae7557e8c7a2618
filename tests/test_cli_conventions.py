"""The conventions people expect of a command line (issue 19): shell completion, NO_COLOR and
FORCE_COLOR, help that shows flags as flags, one-line usage errors, and `--format json` (with
MEMDIR_OUTPUT_FORMAT) on every command that reports, failures included. All in-process."""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main
from conftest import MakeMemory, invoke_memdir
from typer.testing import CliRunner

from memdir.cli import app
from memdir.cli.state import KNOWN_FORMATS, chosen_format, use_colour
from memdir.core.errors import ConfigError

memdir = invoke_memdir

# Commands that speak their caller's protocol, not a report of their own: Claude Code's hook JSON, git's driver.
PROTOCOL_COMMANDS = {"hook session-start", "hook user-prompt-submit", "hook stop", "git merge-driver", "mcp"}


def commands() -> Iterator[tuple[str, Any]]:
    """Every command of the tree, as `name` (`review accept`) and its click command."""

    def walk(prefix: str, group: Any) -> Iterator[tuple[str, Any]]:
        for name, command in group.commands.items():
            full = f"{prefix} {name}".strip()
            yield full, command
            if getattr(command, "commands", None):
                yield from walk(full, command)

    yield from walk("", typer.main.get_command(app))


def format_option(command: Any) -> Any:
    return next((p for p in command.params if "--format" in getattr(p, "opts", [])), None)


# --- colour: one rule, NO_COLOR and FORCE_COLOR per their specs ---------------------------------------


class Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize(
    ("env", "tty", "expected"),
    [
        ({}, True, True),
        ({}, False, False),
        ({"NO_COLOR": "1"}, True, False),
        ({"NO_COLOR": ""}, True, True),  # no-color.org: an empty NO_COLOR does not disable
        ({"FORCE_COLOR": "1"}, False, True),  # force-color.org: even when not a terminal
        ({"FORCE_COLOR": "yes please"}, False, True),
        ({"FORCE_COLOR": ""}, False, False),  # empty: as if unset
        ({"FORCE_COLOR": "0"}, True, False),  # docs/cli.md: 0 and false turn colour off
        ({"FORCE_COLOR": "false"}, True, False),
        ({"NO_COLOR": "1", "FORCE_COLOR": "1"}, True, False),  # NO_COLOR wins
        ({"TERM": "dumb"}, True, False),
        ({"TERM": "dumb", "FORCE_COLOR": "1"}, True, True),
    ],
)
def test_colour_follows_no_color_force_color_and_the_terminal(env: dict[str, str], tty: bool, expected: bool) -> None:
    assert use_colour(Stream(tty), env) is expected


def lint_with_a_finding(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_a.md", type="bogus")


def test_lint_is_in_colour_when_forced_and_plain_otherwise(
    folder: Path, make_memory: MakeMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    lint_with_a_finding(folder, make_memory)
    monkeypatch.delenv("NO_COLOR")
    plain = memdir("--dir", str(folder), "lint")
    assert plain.exit_code == 1 and "\x1b[" not in plain.stdout  # CliRunner's stdout is not a terminal
    coloured = memdir("--dir", str(folder), "lint", env={"FORCE_COLOR": "1"})
    assert coloured.exit_code == 1
    assert "user_a.md:2\x1b[0m: \x1b[1;31mF007\x1b[0m \x1b[31m[error]\x1b[0m" in coloured.stdout
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured.stdout) == plain.stdout
    for env in ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, {"FORCE_COLOR": "0"}):
        assert "\x1b[" not in memdir("--dir", str(folder), "lint", env=env).stdout
    # Machine formats and --output-file never carry colour.
    assert "\x1b[" not in memdir("--dir", str(folder), "lint", "-f", "json", env={"FORCE_COLOR": "1"}).stdout


def test_an_error_line_is_red_when_colour_is_on_and_plain_otherwise(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/cli.md: colour on warnings and errors too, by the same rule as lint's report."""
    monkeypatch.delenv("NO_COLOR")
    plain = memdir("--dir", str(folder), "show", "nope")
    assert plain.exit_code == 2 and plain.stderr.startswith("memdir: error: no memory matches 'nope'")
    coloured = memdir("--dir", str(folder), "show", "nope", env={"FORCE_COLOR": "1"})
    assert coloured.stderr == f"\x1b[31m{plain.stderr.rstrip()}\x1b[0m\n"
    usage = memdir("bogus", env={"FORCE_COLOR": "1"})
    assert usage.exit_code == 2 and usage.stderr.startswith("\x1b[31mmemdir: error: No such command 'bogus'")
    for env in ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, {"FORCE_COLOR": "0"}):
        assert "\x1b[" not in memdir("--dir", str(folder), "show", "nope", env=env).stderr
    as_json = memdir("--dir", str(folder), "show", "nope", "-f", "json", env={"FORCE_COLOR": "1"})
    assert "\x1b[" not in as_json.stdout and json.loads(as_json.stdout)["error"]["exit_code"] == 2


# --- help: flags as flags, option names whole -------------------------------------------------------


@pytest.mark.parametrize("width", [80, 40])
def test_help_shows_every_option_whole_and_flags_without_a_type(width: int) -> None:
    for name, command in [("", typer.main.get_command(app)), *commands()]:
        if getattr(command, "hidden", False):
            continue
        shown = command.get_help(typer.Context(command, info_name=f"memdir {name}".strip(), terminal_width=width))
        assert "<bool>" not in shown and "…" not in shown, name
        for param in command.params:
            for option in [*param.opts, *param.secondary_opts]:
                if option.startswith("-"):
                    assert re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", shown), (name, option)
    assert "--format" in memdir("lint", "--help").stdout  # and typer prints what get_help makes


# --- usage errors: one line on stderr ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["lint", "--foo"], "No such option: --foo (Possible options: --fix, --format) (try 'memdir lint --help')"),
        (["bogus"], "No such command 'bogus' (try 'memdir --help')"),
        (["show"], "Missing argument 'name' (try 'memdir show --help')"),
        # typer passes on pydantic's "Value error, " before the message: the line drops it.
        (
            ["list", "--type", "nope"],
            "Invalid value for '--type' / '-t': 'nope' is not one of 'user', 'feedback', 'project', "
            "'reference' (try 'memdir list --help')",
        ),
        (["hooks", "install", "--scope", "x"], "Invalid value for '--scope': 'x' is not one of"),
        (["context", "-k", "3"], "Invalid value for -k: -k only applies with --for TASK (try 'memdir context --help')"),
        (["--dir"], "Option '--dir' requires an argument (try 'memdir --help')"),
    ],
)
def test_a_usage_error_is_one_line_on_stderr(folder: Path, args: list[str], line: str) -> None:
    result = memdir(*args, env={"MEMDIR_DIR": str(folder)})
    assert result.exit_code == 2
    assert result.stdout == ""
    [only] = result.stderr.splitlines()
    assert only.startswith("memdir: error: ") and line in only, only


def test_no_arguments_still_prints_the_help() -> None:
    result = memdir()
    assert "Usage: memdir [OPTIONS] COMMAND" in result.output and "Commands:" in result.output


# --- --format json everywhere, MEMDIR_OUTPUT_FORMAT, errors as JSON -----------------------------------


def test_every_reporting_command_has_format_json() -> None:
    without = {name for name, command in commands() if format_option(command) is None}
    groups = {name for name, command in commands() if getattr(command, "commands", None)}
    assert without - groups == PROTOCOL_COMMANDS
    for name, command in commands():
        option = format_option(command)
        if option is not None:
            assert "json" in {str(getattr(c, "value", c)) for c in option.type_descriptor.choices or ()}, name


def test_known_formats_are_the_commands_formats() -> None:
    found: set[str] = set()
    for _, command in commands():
        option = format_option(command)
        if option is not None:
            found |= {str(getattr(choice, "value", choice)) for choice in option.type_descriptor.choices or ()}
    assert found == set(KNOWN_FORMATS)


def test_the_format_rule() -> None:
    env = {"MEMDIR_OUTPUT_FORMAT": "json"}
    assert chosen_format("text", ["text", "json"], "text", env) == "text"  # the flag first
    assert chosen_format(None, ["text", "json"], "text", env) == "json"
    assert chosen_format(None, ["text", "json"], "text", {}) == "text"
    assert chosen_format(None, ["text", "json"], "text", {"MEMDIR_OUTPUT_FORMAT": " JSON "}) == "json"
    assert chosen_format(None, ["text", "json"], "text", {"MEMDIR_OUTPUT_FORMAT": "sarif"}) == "text"
    assert chosen_format(None, ["markdown", "xml", "json"], "markdown", {"MEMDIR_OUTPUT_FORMAT": "text"}) == "markdown"
    with pytest.raises(ConfigError, match=r"MEMDIR_OUTPUT_FORMAT must be one of .* not 'yaml'"):
        chosen_format(None, ["text", "json"], "text", {"MEMDIR_OUTPUT_FORMAT": "yaml"})


def test_add_and_rm_report_json(folder: Path) -> None:
    added = memdir("--dir", str(folder), "add", "user", "b", "-d", "Bea writes Go", "--format", "json")
    assert added.exit_code == 0, added.output
    payload = json.loads(added.stdout)
    assert {k: payload[k] for k in ("path", "name", "type", "action", "superseded")} == {
        "path": "user_b.md", "name": "b", "type": "user", "action": "store", "superseded": None,
    }  # fmt: skip
    assert payload["index"]["entries"] == 1 and payload["index"]["refused"] is None
    removed = memdir("--dir", str(folder), "rm", "b", env={"MEMDIR_OUTPUT_FORMAT": "json"})
    assert removed.exit_code == 0
    assert json.loads(removed.stdout)["archived_to"] == str(folder / ".archive" / "user_b.md")


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["add", "user", "a", "-d", "again"], 1, "user_a.md already exists"),
        (["add", "user", "c"], 2, "--description/-d is required"),
        (["rm", "nobody"], 2, "no memory matches 'nobody'"),
        (["show", "nobody"], 2, "no memory matches 'nobody'"),
        (["extract", "session.jsonl"], 2, "needs an Anthropic API key"),
        (["extract"], 2, "give one of TRANSCRIPT, --messages FILE, --hook or --pending"),
        (["context", "-k", "3"], 2, "-k only applies with --for TASK"),
        (["review", "accept", "nobody"], 2, "nobody"),
    ],
)
@pytest.mark.parametrize("how", ["flag", "env"])
def test_a_failure_in_json_has_an_error_field(
    folder: Path, make_memory: MakeMemory, args: list[str], code: int, message: str, how: str
) -> None:
    make_memory("user_a.md")
    flag, env = (["--format", "json"], {}) if how == "flag" else ([], {"MEMDIR_OUTPUT_FORMAT": "json"})
    result = memdir("--dir", str(folder), *args, *flag, env=env)
    assert result.exit_code == code, result.output
    error = json.loads(result.stdout)["error"]
    assert error["exit_code"] == code and message in error["message"]
    assert result.stderr.count("memdir: error: ") == 1 and message in result.stderr


def test_the_text_form_of_a_failure_prints_nothing_on_stdout(folder: Path) -> None:
    result = memdir("--dir", str(folder), "rm", "nobody")
    assert result.exit_code == 2 and result.stdout == ""


def test_rm_in_json_exits_3_when_memory_md_refuses_the_change(folder: Path, make_memory: MakeMemory) -> None:
    # It printed the JSON and exited 0, where the text form exits 3 (docs/cli.md).
    make_memory("user_a.md")
    (folder / "MEMORY.md").write_text("".join(f"prose {i}\n" for i in range(250)))
    result = memdir("--dir", str(folder), "rm", "a", "--format", "json")
    assert result.exit_code == 3
    assert json.loads(result.stdout)["index"]["refused"]
    assert "is archived, but MEMORY.md is not updated" in result.stderr


def test_the_other_reporting_commands_print_json(folder: Path, tmp_path: Path) -> None:
    fresh = tmp_path / "fresh"
    init = json.loads(memdir("--dir", str(fresh), "init", "-f", "json").stdout)
    assert init["created"] == [str(fresh), str(fresh / ".memdir"), str(fresh / "MEMORY.md")]
    assert init["path"] == str(fresh)
    project = tmp_path / "project"
    project.mkdir()
    hooks = memdir("--dir", str(folder), "hooks", "install", "--project", str(project), "--dry-run", "-f", "json")
    assert hooks.exit_code == 0, hooks.output
    [change] = json.loads(hooks.stdout)["changes"]
    assert change["path"].endswith("settings.local.json") and change["changed"] and not (project / ".claude").exists()


def test_an_invalid_output_format_variable_is_a_usage_error(folder: Path) -> None:
    result = memdir("--dir", str(folder), "list", env={"MEMDIR_OUTPUT_FORMAT": "yaml"})
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith("memdir: error: MEMDIR_OUTPUT_FORMAT must be one of text, json")
    sarif = memdir("--dir", str(folder), "list", env={"MEMDIR_OUTPUT_FORMAT": "sarif"})  # lint's: text here
    assert sarif.exit_code == 0 and "0 memories" in sarif.stderr


def test_the_fast_index_path_honours_the_output_format_variable(
    folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # cli/fast.py runs `memdir index` without typer; it ignored MEMDIR_OUTPUT_FORMAT.
    from memdir.cli.fast import run_fast

    monkeypatch.setenv("MEMDIR_OUTPUT_FORMAT", "json")
    assert run_fast(["--dir", str(folder), "index"]) == 0
    assert json.loads(capsys.readouterr().out)["changed"] is False
    monkeypatch.setenv("MEMDIR_OUTPUT_FORMAT", "yaml")
    assert run_fast(["--dir", str(folder), "index"]) is None  # typer reports the bad value
    monkeypatch.setenv("MEMDIR_OUTPUT_FORMAT", "sarif")
    assert run_fast(["--dir", str(folder), "index", "--format", "json"]) == 0  # the flag wins
    assert json.loads(capsys.readouterr().out)["changed"] is False


# --- shell completion ------------------------------------------------------------------------------


def complete(words: str, cwd: Path | None = None) -> tuple[list[str], str]:
    """What bash would offer for the last word of `words` (in-process, through typer's own completion)."""
    env = {"_MEMDIR_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(len(words.split(" ")) - 1)}
    old = Path.cwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        outcome = CliRunner().invoke(app, [], env=env, prog_name="memdir")
    finally:
        os.chdir(old)
    assert outcome.exit_code == 0, outcome.output
    return outcome.stdout.split(), outcome.stderr


def test_completion_offers_memory_names_and_rule_codes(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("feedback_lint-first.md")
    make_memory("user_alice.md")
    make_memory("project_ship.md", status="quarantined", source="tool")
    assert complete(f"memdir --dir {folder} show l")[0] == ["lint-first"]
    assert complete(f"memdir --dir {folder} rm ")[0] == ["alice", "lint-first", "ship"]
    assert complete(f"memdir --dir {folder} add user x --supersedes a")[0] == ["alice"]
    assert complete(f"memdir --dir {folder} review accept ")[0] == ["ship"]
    assert complete(f"memdir --dir {folder} show feedback_")[0] == ["feedback_lint-first.md"]  # no name: paths
    assert complete("memdir lint --select F00")[0][:2] == ["F001", "F002"]
    assert complete("memdir lint --ignore F001,S00")[0][0] == "F001,S001"
    assert "ALL" in complete("memdir lint --extend-select ")[0]
    assert complete("memdir rules missing-d")[0] == ["missing-description"]


def test_history_completes_archived_memories_too(folder: Path, make_memory: MakeMemory) -> None:
    """`history` finds a memory in .archive/ (its main use: what happened to one that is gone)."""
    make_memory("feedback_lint-first.md")
    make_memory("project_old-launch.md", root=folder / ".archive")
    assert complete(f"memdir --dir {folder} history ")[0] == ["lint-first", "old-launch"]
    assert complete(f"memdir --dir {folder} history o")[0] == ["old-launch"]
    assert complete(f"memdir --dir {folder} show ")[0] == ["lint-first"]  # the others find live ones only


def test_completion_offers_nothing_outside_a_memory_folder(tmp_path: Path) -> None:
    assert complete("memdir show ", cwd=tmp_path) == ([], "")
    assert complete(f"memdir --dir {tmp_path / 'nowhere'} rm a") == ([], "")
    (tmp_path / ".memdir.toml").write_text("this is [not toml")
    assert complete("memdir show a", cwd=tmp_path) == ([], "")


def test_show_completion_prints_the_script(monkeypatch: pytest.MonkeyPatch) -> None:
    # typer finds the shell by walking up the process tree: under make or xdist that is sh or python,
    # which it does not support. A user's terminal has their shell; here, say it is bash.
    import typer.completion

    monkeypatch.setattr(typer.completion, "_get_shell_name", lambda: "bash")
    result = CliRunner().invoke(app, ["--show-completion"], prog_name="memdir")
    assert result.exit_code == 0, result.output
    assert "_MEMDIR_COMPLETE=complete_bash" in result.stdout and "complete -o default -F" in result.stdout
    assert "--install-completion" in invoke_memdir("--help").stdout

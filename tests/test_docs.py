"""Docs cannot drift: the generated reference and catalogue match the code, all is documented, the
README's Python example runs and every command's help works."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main
from conftest import invoke_memdir

from memdir.cli import app
from memdir.cli.fast import run_fast
from memdir.lint import RULES

ROOT = Path(__file__).resolve().parents[1]


def _commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every command of the CLI, groups and their subcommands included, with its path."""
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from _commands(sub, (*path, name))


COMMANDS = list(_commands(typer.main.get_command(app)))


def test_generated_docs_are_current() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_docs.py"), "--check"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_command_and_option_has_help() -> None:
    for path, command in COMMANDS[1:]:
        name = " ".join(path)
        assert (command.help or "").strip(), f"{name} has no help"
        for param in command.params:
            if "--help" not in param.opts:
                assert (param.help or "").strip(), f"{name} {param.opts} has no help"


def test_every_command_and_rule_appears_in_the_docs() -> None:
    cli = (ROOT / "docs" / "cli.md").read_text()
    rules = (ROOT / "docs" / "rules.md").read_text()
    for name in typer.main.get_command(app).commands:
        assert f"## memdir {name}\n" in cli
    for code, r in RULES.items():
        assert f"## {code} {r.name}\n" in rules


def test_readme_has_the_two_commands() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "make run" in readme and "make test" in readme


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[" ".join(p) or "memdir" for p, _ in COMMANDS])
def test_help_of_every_command_and_group_shows_its_usage(path: tuple[str, ...], command: Any) -> None:
    assert run_fast([*path, "--help"]) is None  # help is typer's, even for the fast `index` and `hook` paths
    result = invoke_memdir(*path, "--help")
    assert result.exit_code == 0, result.output
    usage = " ".join(result.output.split())  # rich wraps and pads the panel
    assert f"Usage: {' '.join(('memdir', *path))} [OPTIONS]" in usage, result.output
    assert (command.help or "").strip().split()[0] in usage
    for name, sub in getattr(command, "commands", {}).items():
        assert getattr(sub, "hidden", False) or name in usage, f"{path}: {name} missing from the help"


def _python_blocks(markdown: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```$", markdown, flags=re.DOTALL | re.MULTILINE)


def test_the_readme_python_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every ```python block of README.md, in order, in one namespace, in an empty folder."""
    blocks = _python_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    assert blocks, "README.md has no python example"
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {"__name__": "readme"}
    for block in blocks:
        exec(compile(block, str(ROOT / "README.md"), "exec"), namespace)
    assert any(tmp_path.rglob("*.md")), "the example wrote no memory"


def _tour(readme: str) -> list[tuple[list[str], str]]:
    """The commands of the README's tour, continued lines joined, each with what its comment says it
    shows (the word after `# ->`, else "")."""
    found = re.search(r"^## A short tour\n\n```sh\n(.*?)^```$", readme, flags=re.DOTALL | re.MULTILINE)
    assert found, "README.md has no tour"
    commands = []
    for line in found.group(1).replace("\\\n", " ").splitlines():
        shows = line.split("# ->", 1)[1].split()[0] if "# ->" in line else ""
        argv = shlex.split(line, comments=True)
        if argv:  # not a comment's second line
            commands.append((argv, shows))
    return commands


def test_the_readme_tour_shows_what_it_says(tmp_path: Path) -> None:
    """The tour, run as a new user runs it in a fresh repository: every command succeeds, and each
    shows what its comment says."""
    project = tmp_path / "my-project"
    (project / ".git").mkdir(parents=True)
    tour = _tour((ROOT / "README.md").read_text(encoding="utf-8"))
    ran = []
    for argv, shows in tour:
        if argv[0] != "memdir":
            assert argv[:2] in (["pip", "install"], ["cd", "my-project"]), argv
            continue
        result = invoke_memdir(*argv[1:], cwd=project)
        assert result.exit_code == 0, (argv, result.output)
        assert shows in result.stdout, (argv, shows, result.output)
        ran.append(argv[1])
    assert ran[-1] == "recall" and [line for _, line in tour if line], "the tour shows nothing"
    assert (project / ".claude" / "memory" / ".memdir" / ".gitignore").is_file()
    assert "2026-" in (project / ".claude" / "memory" / "project_mobile-release-freeze.md").read_text()


def test_make_run_regenerates_the_example_index(tmp_path: Path) -> None:
    """`make run`'s memdir commands (read from the Makefile) on a copy of examples/memory, as the
    README describes them: the index is regenerated with the hand-written heading and note kept and
    the memories it missed added, lint passes, and recall picks the release memory."""
    import shutil

    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = makefile[makefile.index("\nrun:") : makefile.index("\n\n", makefile.index("\nrun:"))]
    commands = [shlex.split(line.split("/memdir ", 1)[1]) for line in recipe.splitlines() if "$(BIN)/memdir " in line]
    assert [argv[2] for argv in commands] == ["index", "list", "lint", "recall"]
    copy = tmp_path / "example-memory"
    shutil.copytree(ROOT / "examples" / "memory", copy)
    before = (copy / "MEMORY.md").read_text(encoding="utf-8")
    results = {}
    for argv in commands:
        assert argv[:2] == ["--dir", "$(RUN_COPY)"], argv
        results[argv[2]] = invoke_memdir("--dir", str(copy), *argv[2:])
        assert results[argv[2]].exit_code == 0, (argv, results[argv[2]].output)
    after = (copy / "MEMORY.md").read_text(encoding="utf-8")
    assert "MEMORY.md written" in results["index"].stderr or "MEMORY.md updated" in results["index"].stderr
    assert after.startswith(before.split("\n- ", 1)[0])  # the hand-written heading and note
    assert after.count("\n- [") == 5 > before.count("\n- [")
    assert "project_release-freeze.md" in results["recall"].stdout

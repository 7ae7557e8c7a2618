"""Docs cannot drift: the generated reference and catalogue match the code, and all is documented."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import typer.main

from memdir.cli import app
from memdir.lint import RULES

ROOT = Path(__file__).resolve().parents[1]


def test_generated_docs_are_current() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_docs.py"), "--check"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_command_and_option_has_help() -> None:
    group = typer.main.get_command(app)
    for name, command in group.commands.items():
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

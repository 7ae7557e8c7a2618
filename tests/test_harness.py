"""The test harness itself (conftest.py): what it does before the first test must never stop the suite."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from conftest import compile_tree, made_once


def test_bytecode_is_written_checked_against_the_source(tmp_path: Path) -> None:
    source = tmp_path / "module.py"
    source.write_text("X = 1\n")
    compile_tree(tmp_path)
    cached = Path(importlib.util.cache_from_source(str(source)))
    assert cached.read_bytes()[4:8] == (3).to_bytes(4, "little")  # hash-based and checked: never stale


def test_a_tree_whose_bytecode_cannot_be_written_is_left_as_it_is(tmp_path: Path) -> None:
    """Bug: one source whose bytecode could not be written (a read-only checkout) raised while
    conftest.py was imported, and no test ran at all."""
    (tmp_path / "module.py").write_text("X = 1\n")
    (tmp_path / "__pycache__").write_text("a file where the bytecode's folder would be\n")
    compile_tree(tmp_path)  # no OSError


def test_the_cached_click_command_follows_what_a_sub_app_registers_later() -> None:
    """Bug (issue 18 review): CliRunner's click command, made once per worker (conftest), was made
    again only when the top app's own counts changed, so a command registered later on a group's
    app (`memdir hooks ...`) or one put in another's place was missing from every later call: a
    test of it failed with "No such command", or passed against the command it replaced."""
    import typer
    from typer.testing import CliRunner

    app, group = typer.Typer(), typer.Typer()
    app.add_typer(group, name="group")

    @group.command()
    def first() -> None:
        print("first")

    @app.command()
    def top() -> None:
        print("top")

    assert CliRunner().invoke(app, ["group", "first"]).output == "first\n"

    @group.command()
    def second() -> None:
        print("second")

    called = CliRunner().invoke(app, ["group", "second"])
    assert (called.exit_code, called.output) == (0, "second\n")

    def replaced() -> None:
        print("replaced")

    app.registered_commands[0] = typer.models.CommandInfo(name="top", callback=replaced)
    assert CliRunner().invoke(app, ["top"]).output == "replaced\n"


def test_a_command_is_made_once_for_each_shape_of_its_app() -> None:
    """made_once (the CliRunner's and the fork servers' cache) makes the click command once while the
    app stays as it is, and again when it changes."""
    import typer

    built: list[object] = []
    get_command = made_once(lambda app: built.append(object()) or built[-1])
    app = typer.Typer()

    @app.command()
    def first() -> None: ...

    command = get_command(app)
    assert get_command(app) is command and len(built) == 1

    @app.command()
    def second() -> None: ...

    assert get_command(app) is not command and len(built) == 2

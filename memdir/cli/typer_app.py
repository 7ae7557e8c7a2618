"""The typer application, its global options, and the group that reports every command's errors."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from memdir.cli import command_started
from memdir.cli.errors import hoist_global_options, report_failure
from memdir.cli.state import OutputFormat, State
from memdir.core.outward import for_terminal
from memdir.version import __version__

FormatOption = Annotated[OutputFormat, typer.Option("--format", "-f", help="Output format.")]


def _masked_usage(exc: typer.TyperException) -> None:
    """A usage error quotes the bad value (`'sk-ant-…' is not one of ...`): mask it and escape its
    control characters before typer draws the box (memdir.core.outward)."""
    message = getattr(exc, "message", None)
    if isinstance(message, str):
        exc.message = for_terminal(message)


class MemdirGroup(TyperGroup):
    """The command group; wraps every command in the error handler (cli/errors.py)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        def takes_value(command_name: str, option: str) -> bool:
            command = self.get_command(ctx, command_name)
            params = command.params if command is not None else []
            return any(option in p.opts and not getattr(p, "is_flag", True) for p in params)

        try:
            return super().parse_args(ctx, hoist_global_options(args, takes_value))
        except typer.TyperException as exc:
            _masked_usage(exc)
            raise

    def invoke(self, ctx: Any) -> Any:
        command_started()  # Ctrl-C is the command's KeyboardInterrupt from here (memdir/cli/__init__.py)
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort):
            raise
        except typer.TyperException as exc:
            _masked_usage(exc)
            raise
        except (Exception, KeyboardInterrupt) as exc:
            code = report_failure(exc)
            if code is None:
                raise
            raise typer.Exit(code) from None


app = typer.Typer(
    name="memdir",
    cls=MemdirGroup,
    help="Keep an AI agent's long-term memory as a healthy folder of typed markdown files.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,  # MemdirGroup reports errors; locals could hold an API key
    pretty_exceptions_show_locals=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    # Docstrings are written as markdown (docs/cli.md is made from them): a paragraph's lines join
    # when the terminal wraps them, and "[recall]" is text, not rich's markup for a style.
    rich_markup_mode="markdown",
)


def state(ctx: typer.Context) -> State:
    found = ctx.find_object(State)
    if found is None:  # a command invoked without the callback, e.g. from a test harness
        found = ctx.ensure_object(State)
    return found


def _version(value: bool) -> None:
    if value:
        print(f"memdir {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    ctx: typer.Context,
    dir: Annotated[
        Path | None,
        typer.Option(
            "--dir",
            "-C",
            help="The memory folder (else MEMDIR_DIR, config, .claude/memory/, Claude Code's folder).",
            show_default=False,
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only errors and requested data.")] = False,
    no_cache: Annotated[
        bool,
        typer.Option(
            "--no-cache",
            envvar="MEMDIR_NO_CACHE",
            help="Read and parse every file, ignoring the parse cache in .memdir/ (it is still safe when stale).",
        ),
    ] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit.")
    ] = False,
) -> None:
    """Keep an AI agent's long-term memory as a healthy folder of typed markdown files."""
    ctx.obj = State(dir_option=dir, quiet=quiet, no_cache=no_cache)

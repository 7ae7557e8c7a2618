"""The typer application, its global options, and the group that reports every command's errors.

Help is click's plain layout, not typer's rich panels: a flag reads as a flag (no `<bool>`), and an
option name is never cut to `--outpu…` in a narrow terminal. Usage errors are one line on stderr,
`memdir: error: No such option: --foo (try 'memdir lint --help')`, exit 2, like every other error.
"""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from typer.core import TyperGroup

from memdir.cli import command_started
from memdir.cli.complete import memory_names, memory_names_archived_too, quarantined_names
from memdir.cli.errors import USAGE, hoist_global_options, print_error, report_failure, usage_error_line
from memdir.cli.state import FORMAT_ENV, OutputFormat, State, chosen_format
from memdir.version import __version__

AnyFormat = TypeVar("AnyFormat", bound=StrEnum)


def resolve_format(ctx: typer.Context, param: typer.CallbackParam, value: AnyFormat) -> AnyFormat:
    """Every command's --format goes through here: the flag, else MEMDIR_OUTPUT_FORMAT, else the
    default (state.chosen_format), remembered on the run's State so that an error is JSON too."""
    kind = type(value)
    source = ctx.get_parameter_source(param.name or "")
    given = None if source is not None and source.name == "DEFAULT" else value.value
    chosen = kind(chosen_format(given, [member.value for member in kind], value.value, os.environ))
    state(ctx).output_format = chosen.value
    return chosen


FORMAT_FALLBACK = f"(else {FORMAT_ENV})"
FormatOption = Annotated[
    OutputFormat,
    typer.Option("--format", "-f", help=f"Output format: text or json {FORMAT_FALLBACK}.", callback=resolve_format),
]

_NAME_HELP = "Name, file name or path of the memory."
MemoryName = Annotated[str, typer.Argument(help=_NAME_HELP, show_default=False, autocompletion=memory_names)]
QuarantinedNames = Annotated[
    list[str] | None,
    typer.Argument(
        help="Names, file names or paths of the memories.",
        metavar="NAME",
        show_default=False,
        autocompletion=quarantined_names,
    ),
]
AnyMemoryName = Annotated[  # archived ones too, for `history`
    str, typer.Argument(help=_NAME_HELP, show_default=False, autocompletion=memory_names_archived_too)
]


def _is_help(exc: typer.TyperException) -> bool:
    """Whether `exc` is the one typer raises to print a group's help when it is called with no
    arguments (`memdir`, `memdir hooks`): no usage error. Its class lives in typer's private copy of
    click, so it is known by what it carries, the command's help."""
    command = getattr(exc, "ctx", None)
    return command is not None and exc.format_message() == command.get_help()


def _usage_failed(exc: typer.TyperException, ctx: Any) -> typer.Exit:
    """A usage error (typer's, or raised by a command) as one line on stderr, and JSON on stdout when
    the command's format is json; the bad value it quotes is masked and escaped by print_error."""
    command = getattr(exc, "ctx", None) or ctx
    message = usage_error_line(exc.format_message(), getattr(command, "command_path", None))
    print_error(message)
    found = ctx.find_object(State) if ctx is not None else None
    if found is not None:
        found.write_json_error(message, USAGE)
    return typer.Exit(exc.exit_code if isinstance(exc.exit_code, int) else USAGE)


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
            if _is_help(exc):
                raise  # `memdir` alone prints the help
            raise _usage_failed(exc, ctx) from None

    def invoke(self, ctx: Any) -> Any:
        command_started()  # Ctrl-C is the command's KeyboardInterrupt from here (memdir/cli/__init__.py)
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort):
            raise
        except typer.TyperException as exc:
            if _is_help(exc):
                raise
            raise _usage_failed(exc, ctx) from None
        except (Exception, KeyboardInterrupt) as exc:
            found = ctx.find_object(State)
            code = report_failure(exc, found.write_json_error if found is not None else None)
            if code is None:
                raise
            raise typer.Exit(code) from None


app = typer.Typer(
    name="memdir",
    cls=MemdirGroup,
    help="Keep an AI agent's long-term memory as a healthy folder of typed markdown files.",
    no_args_is_help=True,
    add_completion=True,  # --install-completion, --show-completion; cli/complete.py completes values
    pretty_exceptions_enable=False,  # MemdirGroup reports errors; locals could hold an API key
    pretty_exceptions_show_locals=False,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120},
    # Plain help (see the module's docstring). Docstrings are written as markdown for docs/cli.md,
    # which is made from them; on the terminal a paragraph's lines join when it wraps them.
    rich_markup_mode=None,
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

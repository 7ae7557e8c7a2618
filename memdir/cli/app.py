"""The typer application, its global options, and the per-run state every command reads."""

from __future__ import annotations

import datetime as dt
import os
import sys
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.console import Console

from memdir import __version__
from memdir.cli.errors import USAGE, CommandFailed, MemdirGroup
from memdir.config import Config, Location, load_config, locate
from memdir.errors import ConfigError, FolderNotFound
from memdir.memory_dir import MemoryDir

app = typer.Typer(
    name="memdir",
    cls=MemdirGroup,
    help="Keep an AI agent's long-term memory as a healthy folder of typed markdown files.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,  # MemdirGroup reports errors; locals could hold an API key
    pretty_exceptions_show_locals=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


class OutputFormat(StrEnum):
    text = "text"
    json = "json"


FormatOption = Annotated[OutputFormat, typer.Option("--format", "-f", help="Output format.")]


@dataclass
class State:
    """What the global options resolved to, shared by every command of one run."""

    dir_option: Path | None = None
    quiet: bool = False
    no_cache: bool = False
    cwd: Path = field(default_factory=Path.cwd)

    @cached_property
    def err(self) -> Console:
        return Console(stderr=True, highlight=False, soft_wrap=True)

    @cached_property
    def out(self) -> Console:
        return Console(highlight=False, soft_wrap=True)

    @cached_property
    def config(self) -> Config:
        config = load_config(self.cwd)
        for warning in config.warnings:
            self.warn(warning)
        return config

    @cached_property
    def location(self) -> Location:
        return locate(self.dir_option, self.cwd, os.environ, self.config)

    @cached_property
    def today(self) -> dt.date:
        """Today, or MEMDIR_TODAY (YYYY-MM-DD) for reproducible runs and tests."""
        fixed = os.environ.get("MEMDIR_TODAY")
        if not fixed:
            return dt.date.today()
        try:
            return dt.date.fromisoformat(fixed)
        except ValueError:
            raise ConfigError(f"MEMDIR_TODAY must be YYYY-MM-DD, not {fixed!r}") from None

    def folder(self, must_exist: bool = True) -> MemoryDir:
        where = self.location
        if must_exist and not where.path.is_dir():
            raise FolderNotFound(
                f"memory folder {where.path} does not exist ({where.reason}); "
                "create it with `memdir init` or pass --dir"
            )
        return MemoryDir(where.path, config=self.config, today=self.today, cache=not self.no_cache)

    def say(self, message: str) -> None:
        """Progress and results for people, on stderr so stdout stays clean for data."""
        if not self.quiet:
            self.err.print(message, markup=False)

    def warn(self, message: str) -> None:
        self.err.print(f"warning: {message}", markup=False, style="yellow")

    def show_path(self, path: Path) -> str:
        """A path as the user would type it: relative to the working directory when inside it."""
        try:
            return str(path.relative_to(self.cwd))
        except ValueError:
            return str(path)

    def write(self, text: str) -> None:
        """Data on stdout, byte-exact: no wrapping, no markup."""
        sys.stdout.write(text)
        sys.stdout.flush()


def state(ctx: typer.Context) -> State:
    found = ctx.find_object(State)
    if found is None:  # a command invoked without the callback, e.g. from a test harness
        found = ctx.ensure_object(State)
    return found


def fail(message: str, code: int = USAGE) -> NoReturn:
    """Stop a command with a one-line message and an exit code (usage error unless told)."""
    raise CommandFailed(message, code)


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

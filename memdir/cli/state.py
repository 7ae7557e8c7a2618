"""What the global options resolved to, shared by every command of one run, and how the CLI speaks.

Nothing here imports typer or rich: `memdir index` in a session-start hook runs without either
(see cli/fast.py), and rich is loaded only to draw a table.
"""

from __future__ import annotations

import datetime as dt
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TextIO

from memdir.cli.errors import USAGE, CommandFailed
from memdir.core.config import Config, Location, load_config, locate
from memdir.core.errors import ConfigError, FolderNotFound
from memdir.core.store import unreadable_note
from memdir.folder import MemoryDir

if TYPE_CHECKING:
    from rich.console import Console


class OutputFormat(StrEnum):
    text = "text"
    json = "json"


FORMAT_ENV = "MEMDIR_OUTPUT_FORMAT"
# Every format some command has (`lint` adds concise, github and sarif; `context` markdown and xml).
# tests/test_cli_conventions.py checks this against the commands' --format choices.
KNOWN_FORMATS = ("text", "json", "concise", "github", "sarif", "markdown", "xml")


def chosen_format(given: str | None, supported: Sequence[str], default: str, env: Mapping[str, str]) -> str:
    """The one rule for a command's output format: --format, else MEMDIR_OUTPUT_FORMAT, else the default.

    MEMDIR_OUTPUT_FORMAT is one setting for every command, so a format this command does not have
    (`sarif` for `add`) gives its default rather than an error; a value no command has is a usage error.
    """
    if given is not None:
        return given
    value = env.get(FORMAT_ENV, "").strip().lower()
    if not value:
        return default
    if value not in KNOWN_FORMATS:
        raise ConfigError(f"{FORMAT_ENV} must be one of {', '.join(KNOWN_FORMATS)}, not {value!r}")
    return value if value in supported else default


_OFF = ("0", "false")


def use_colour(stream: TextIO | None, env: Mapping[str, str] | None = None) -> bool:
    """The one rule for colour on `stream`: NO_COLOR, then FORCE_COLOR, then whether it is a terminal.

    NO_COLOR set and not empty turns colour off (no-color.org: an empty value does not). FORCE_COLOR
    set and not empty turns it on even in a pipe (force-color.org), except `0` and `false`, which
    turn it off as they do for Node's tools, where most people meet the variable. NO_COLOR wins when
    both are set. Otherwise: colour on a terminal whose TERM is not `dumb`.
    """
    env = os.environ if env is None else env
    if env.get("NO_COLOR", ""):
        return False
    forced = env.get("FORCE_COLOR", "")
    if forced:
        return forced.strip().lower() not in _OFF
    isatty = getattr(stream, "isatty", None)
    return bool(isatty is not None and isatty()) and env.get("TERM") != "dumb"


_STYLES = {
    "yellow": "\x1b[33m",
    "red": "\x1b[31m",
    "bold": "\x1b[1m",
    "bold red": "\x1b[1;31m",
    "cyan": "\x1b[36m",
    "dim": "\x1b[2m",
}


def paint(text: str, style: str) -> str:
    """`text` in an ANSI style of `_STYLES`; only for a stream `use_colour` says yes to."""
    return f"{_STYLES[style]}{text}\x1b[0m"


@dataclass
class State:
    """The global options of one run, and the places its output goes."""

    dir_option: Path | None = None
    quiet: bool = False
    no_cache: bool = False
    cwd: Path = field(default_factory=Path.cwd)
    # The output format the command resolved (typer_app.FormatOption): an error is JSON too when it is json.
    output_format: str | None = None
    json_written: bool = False  # one JSON document per run: an error after it adds none

    @cached_property
    def out(self) -> Console:
        """A rich console on stdout, for tables. Every string it prints is user text (names,
        descriptions, file names) or memdir's own, never markup: `[/tmp/app.log]` in a description
        must neither fail as a closing tag nor vanish as a style, nor `:warning:` become an emoji.
        Each string cell passes `outward.one_field` (secrets masked, control characters escaped)."""
        from memdir.cli.console import SafeConsole

        colour = use_colour(sys.stdout)  # rich must not read NO_COLOR and FORCE_COLOR by its own rules
        return SafeConsole(
            highlight=False, soft_wrap=True, markup=False, emoji=False, force_terminal=colour, no_color=not colour
        )

    @cached_property
    def _colour(self) -> bool:
        return use_colour(sys.stderr)

    @cached_property
    def colour_stdout(self) -> bool:
        return use_colour(sys.stdout)

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
            raise FolderNotFound.at(where.path, "create it with `memdir init` or pass --dir", where.reason)
        return MemoryDir(where.path, config=self.config, today=self.today, cache=not self.no_cache)

    def _stderr(self, message: str, style: str | None = None) -> None:
        from memdir.text.outward import for_terminal  # not for a run that prints nothing (a warm, quiet index)

        message = for_terminal(message)  # a warning can quote a name, a file name or a value
        if style and self._colour:
            message = paint(message, style)
        sys.stderr.write(message + "\n")
        sys.stderr.flush()

    def say(self, message: str) -> None:
        """Progress and results for people, on stderr so stdout stays clean for data."""
        if not self.quiet:
            self._stderr(message)

    def warn(self, message: str) -> None:
        self._stderr(f"warning: {message}", "yellow")

    def warn_unreadable(self, problems: Sequence[tuple[str, str]], consequence: str) -> None:
        """Name each file that could not be read as a memory: nothing may go missing unseen."""
        if problems:
            self.warn(f"{unreadable_note(len(problems))}, so {consequence} (`memdir lint` explains):")
            for path, why in problems:
                self.say(f"  {path}: {why}")

    def error(self, message: str) -> None:
        """A failure that is reported but does not stop the command by itself."""
        self._stderr(f"memdir: {message}", "red")

    def show_path(self, path: Path) -> str:
        """A path as the user would type it: relative to the working directory when inside it."""
        try:
            return str(path.relative_to(self.cwd))
        except ValueError:
            return str(path)

    def write(self, text: str) -> None:
        """Text on stdout: no wrapping, no markup; secrets masked and control characters other than
        tab and newline escaped (`outward.for_terminal`), since any of it may quote a memory."""
        from memdir.text.outward import for_terminal

        self.write_raw(for_terminal(text))

    def write_json(self, payload: object, indent: int | None = 2) -> None:
        """`payload` as JSON on stdout (one line when `indent` is None): secrets masked, no raw control character."""
        from memdir.text.outward import dumps

        self.write_raw(dumps(payload, indent=indent) + "\n")
        self.json_written = True

    def write_json_error(self, message: str, code: int) -> None:
        """A failed command's JSON on stdout, when its format is json and it printed none yet:
        `{"error": {"message": ..., "exit_code": ...}}` (docs/cli.md). The line on stderr is printed too."""
        if self.output_format == OutputFormat.json and not self.json_written:
            self.write_json({"error": {"message": message, "exit_code": code}})

    def write_raw(self, text: str | Iterable[str]) -> None:
        """`text` on stdout byte-exact, or its pieces as they come. Only for what the user asked to
        see as it is (`memdir show`, a machine-readable report)."""
        for piece in (text,) if isinstance(text, str) else text:
            sys.stdout.write(piece)
        sys.stdout.flush()


def fail(message: str, code: int = USAGE) -> NoReturn:
    """Stop a command with a one-line message and an exit code (usage error unless told)."""
    raise CommandFailed(message, code)

"""The CLI's one error handler: domain errors to one line and an exit code, never a traceback.

Expected errors (MemdirError) print `memdir: error: ...` on stderr and exit with the code
`exit_code` gives them: 1 for a request refused on its merits (a name that exists, an index that
cannot be written without cutting hand-written text), 2 for usage, configuration and input the
tool cannot work with. Ctrl-C exits 130. Anything unexpected prints a short message and exits 2; set
MEMDIR_DEBUG=1 to see the traceback. Usage errors are typer's own (exit 2).
"""

from __future__ import annotations

import os
import sys
from typing import Any

import typer
from typer.core import TyperGroup

from memdir.errors import IndexRefused, MemdirError, MemoryChanged, MemoryExists

REFUSED = 1
USAGE = 2
INTERRUPTED = 130


class CommandFailed(MemdirError):
    """A command's own failure, with the exit code it chose (see `fail`)."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def exit_code(error: MemdirError) -> int:
    """The one place that maps domain errors to the command-line contract's exit codes."""
    if isinstance(error, CommandFailed):
        return error.code
    if isinstance(error, MemoryExists | MemoryChanged | IndexRefused):
        return REFUSED
    return USAGE


def print_error(message: str) -> None:
    print(f"memdir: error: {message}", file=sys.stderr)


class MemdirGroup(TyperGroup):
    """The command group; wraps every command in the error handler."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, typer.TyperException):
            raise
        except MemdirError as exc:
            print_error(str(exc))
            raise typer.Exit(exit_code(exc)) from None
        except KeyboardInterrupt:
            print("memdir: interrupted", file=sys.stderr)
            raise typer.Exit(INTERRUPTED) from None
        except BrokenPipeError:
            # The reader went away (`memdir list | head`); stop writing without a complaint.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            raise typer.Exit(1) from None
        except OSError as exc:  # permissions, a full disk, a vanished folder: say which file
            where = f": {exc.filename}" if exc.filename else ""
            print_error(f"{exc.strerror or exc}{where}")
            raise typer.Exit(USAGE) from None
        except Exception as exc:
            if os.environ.get("MEMDIR_DEBUG"):
                raise
            print_error(f"internal error: {type(exc).__name__}: {exc} (MEMDIR_DEBUG=1 shows the traceback)")
            raise typer.Exit(USAGE) from None

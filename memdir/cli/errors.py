"""The CLI's one error handler: domain errors to one line and an exit code, never a traceback.

Expected errors (MemdirError) print `memdir: error: ...` on stderr and exit with their own code
(1 or 2). Ctrl-C exits 130. Anything unexpected prints a short message and exits 2; set
MEMDIR_DEBUG=1 to see the traceback. Usage errors are typer's own (exit 2).
"""

from __future__ import annotations

import os
import sys
from typing import Any

import typer
from typer.core import TyperGroup

from memdir.errors import MemdirError


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
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            print("memdir: interrupted", file=sys.stderr)
            raise typer.Exit(130) from None
        except BrokenPipeError:
            # The reader went away (`memdir list | head`); stop writing without a complaint.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            raise typer.Exit(1) from None
        except OSError as exc:  # permissions, a full disk, a vanished folder: say which file
            where = f": {exc.filename}" if exc.filename else ""
            print_error(f"{exc.strerror or exc}{where}")
            raise typer.Exit(2) from None
        except Exception as exc:
            if os.environ.get("MEMDIR_DEBUG"):
                raise
            print_error(f"internal error: {type(exc).__name__}: {exc} (MEMDIR_DEBUG=1 shows the traceback)")
            raise typer.Exit(2) from None

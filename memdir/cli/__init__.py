"""The command-line interface: a thin typer layer over the library, and its one error handler.

Expected errors (MemdirError) print one line on stderr and exit with their code; usage errors
exit 2; Ctrl-C exits 130; anything unexpected prints a short message, not a traceback, and
exits 2 (MEMDIR_DEBUG=1 shows the traceback).
"""

from __future__ import annotations

import os
import sys

import typer

# Importing the command modules registers their commands on the app.
from memdir.cli import folder, index, lint, memories  # noqa: F401
from memdir.cli.app import app
from memdir.errors import MemdirError

__all__ = ["app", "main"]


def main(argv: list[str] | None = None) -> None:
    sys.exit(run(argv))


def run(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code instead of exiting."""
    try:
        code = app(args=argv, prog_name="memdir", standalone_mode=False)
    except (typer.Abort, KeyboardInterrupt):
        return _interrupted()
    except MemdirError as exc:
        _error(str(exc))
        return exc.exit_code
    except typer.TyperException as exc:  # usage errors: typer's own message, exit 2
        show = getattr(exc, "show", None)
        if callable(show):
            show()
        else:
            _error(exc.format_message())
        return exc.exit_code
    except BrokenPipeError:
        # The reader went away (e.g. `memdir list | head`); quietly stop writing.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except Exception as exc:  # the last line of defence: never a wall of traceback
        if os.environ.get("MEMDIR_DEBUG"):
            raise
        _error(f"internal error: {type(exc).__name__}: {exc} (set MEMDIR_DEBUG=1 for the traceback)")
        return 2
    return code if isinstance(code, int) else 0


def _error(message: str) -> None:
    print(f"memdir: error: {message}", file=sys.stderr)


def _interrupted() -> int:
    print("memdir: interrupted", file=sys.stderr)
    return 130

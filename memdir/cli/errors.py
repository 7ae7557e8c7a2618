"""The CLI's one error handler: domain errors to one line and an exit code, never a traceback.

Expected errors (MemdirError) print `memdir: error: ...` on stderr and exit with the code their
class carries (`exit_code`, memdir/core/errors.py): 1 for a request refused on its merits (a name that
exists, an index that cannot be written without cutting hand-written text), 2 for usage,
configuration and input the tool cannot work with. Ctrl-C exits 130. Anything unexpected prints a
short message and exits 2; set MEMDIR_DEBUG=1 to see the traceback. Usage errors (an unknown option
or command, a missing argument, a bad choice) are one line too, exit 2 (cli/typer_app.py).

Exit 3 (`WRITTEN_NOT_INDEXED`) belongs to no error: a memory was written (added, edited, removed)
but MEMORY.md could not take the change, so a script knows the file is there and the index behind.
"""

from __future__ import annotations

import itertools
import os
import sys
from collections.abc import Callable

from memdir.core.errors import MemdirError, os_error_text

REFUSED = 1
USAGE = 2
WRITTEN_NOT_INDEXED = 3  # the memory file changed; MEMORY.md refused the change (docs/cli.md)
INTERRUPTED = 130


class CommandFailed(MemdirError):
    """A command's own failure, with the exit code it chose (see `fail`)."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.exit_code = code


def print_error(message: str) -> None:
    """The one line of a failed command, in red where colour is on (NO_COLOR, FORCE_COLOR, a terminal)."""
    from memdir.cli.state import paint, use_colour  # here, not above: state imports this module
    from memdir.text.outward import for_terminal  # an error can quote a name or value holding a key, or ESC

    line = f"memdir: error: {for_terminal(message)}"
    print(paint(line, "red") if use_colour(sys.stderr) else line, file=sys.stderr)


GLOBAL_WITH_VALUE = ("--dir", "-C")
GLOBAL_FLAGS = ("--quiet", "-q", "--no-cache")


def hoist_global_options(args: list[str], takes_value: Callable[[str, str], bool]) -> list[str]:
    """`memdir lint --dir X` read as `memdir --dir X lint`.

    Tools such as pre-commit append their arguments after the subcommand, and people type
    them there too. No subcommand has an option of these names; `takes_value(command, option)`
    says which of the subcommand's own options consume the next word, so `-d --dir` stays a
    description.
    """
    command = 0
    while command < len(args) and args[command].startswith("-"):
        command += 2 if args[command] in GLOBAL_WITH_VALUE else 1
    if command >= len(args):
        return args
    name = args[command]
    front, back = list(args[:command]), [name]
    rest = iter(args[command + 1 :])
    for arg in rest:
        if arg == "--":
            back += [arg, *rest]
        elif arg in GLOBAL_WITH_VALUE:
            value = next(rest, None)
            if value is None:  # let the parser say what is missing
                back.append(arg)
            else:
                front += [arg, value]
        elif arg in GLOBAL_FLAGS or arg.startswith("--dir="):
            front.append(arg)
        elif arg.startswith("-") and "=" not in arg and takes_value(name, arg):
            back += [arg, *itertools.islice(rest, 1)]
        else:
            back.append(arg)
    return front + back


def report_failure(exc: BaseException, also: Callable[[str, int], None] | None = None) -> int | None:
    """Report an exception the way the CLI promises and return the exit code; None for one the
    caller must let through (MEMDIR_DEBUG=1, or not an error at all). `also(message, code)` is
    told each reported error too (the JSON error of `--format json`, State.write_json_error)."""

    def error(message: str, code: int) -> int:
        print_error(message)
        if also is not None:
            also(message, code)
        return code

    if isinstance(exc, MemdirError):
        return error(str(exc), exc.exit_code)
    if isinstance(exc, KeyboardInterrupt):
        print("memdir: interrupted", file=sys.stderr)
        if also is not None:
            also("interrupted", INTERRUPTED)
        return INTERRUPTED
    if isinstance(exc, BrokenPipeError):
        # The reader went away (`memdir list | head`); stop writing without a complaint.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    if isinstance(exc, OSError):  # permissions, a full disk, a vanished folder: say which file
        return error(os_error_text(exc), USAGE)
    if isinstance(exc, Exception) and not os.environ.get("MEMDIR_DEBUG"):
        return error(f"internal error: {type(exc).__name__}: {exc} (MEMDIR_DEBUG=1 shows the traceback)", USAGE)
    return None


def usage_error_line(message: str, command_path: str | None) -> str:
    """A usage error as one line, like every other error: what is wrong, then where help is. Typer
    words a bad value as pydantic does (`Invalid value for 'type': Value error, 'x' is not ...`):
    the "Value error, " says nothing to a user, so it goes."""
    hint = f" (try '{command_path} --help')" if command_path else ""
    line = " ".join(message.split()).removesuffix(".").replace(": Value error, ", ": ", 1)
    return line + hint

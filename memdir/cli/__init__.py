"""The command-line interface: a thin layer over the library (see cli/errors.py for exits).

`main` runs the plain forms of `memdir index` and the Claude Code hooks without building the typer
app (cli/fast.py); everything else goes to typer. `app` is the typer application, built on first use.

Ctrl-C exits 130 without a traceback from `main`'s first instruction: most of start-up is imports,
and a KeyboardInterrupt raised inside one would print a traceback, so until a command starts, Ctrl-C
exits at once (`exit_quietly_on_ctrl_c`); from then on it is the command's KeyboardInterrupt, which
it cleans up after and reports (`command_started`). Nothing above `main` imports more than this
module: the console script imports `memdir` and `memdir.cli` before it calls `main`.
"""

from __future__ import annotations

import signal
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing before main() runs
if TYPE_CHECKING:
    from types import FrameType
    from typing import Any, NoReturn

    import typer

__all__ = ["app", "command_started", "main"]

# Importing a command module registers its commands on the app; `memdir --help` lists them in this order.
_COMMAND_MODULES = (
    "folder", "lint", "memories", "importing", "extract", "context", "recall", "lifecycle", "watch", "hooks", "git",
    "mcp",
)  # fmt: skip
INTERRUPTED = 130  # cli/errors.INTERRUPTED, without importing it first


def _typer_app() -> typer.Typer:
    import importlib

    for module in _COMMAND_MODULES:
        importlib.import_module(f"memdir.cli.{module}")
    from memdir.cli.typer_app import app

    return app


def main() -> None:
    exit_quietly_on_ctrl_c()
    from memdir.cli.fast import run_fast

    code = run_fast(sys.argv[1:])
    if code is not None:
        raise SystemExit(code)
    _typer_app()(prog_name="memdir")


def exit_quietly_on_ctrl_c() -> None:
    """Until `command_started`, Ctrl-C exits 130 at once, with nothing on stderr. A SIGINT that
    is ignored (a background job of a non-interactive shell) stays ignored."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _exit_interrupted)


def command_started() -> None:
    """From here on Ctrl-C raises KeyboardInterrupt in the command, as Python does by default."""
    if signal.getsignal(signal.SIGINT) is _exit_interrupted:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _exit_interrupted(signum: int, frame: FrameType | None) -> NoReturn:
    # SystemExit, not os._exit: `finally` blocks and atexit still run, and it prints nothing.
    raise SystemExit(INTERRUPTED)


def __getattr__(name: str) -> Any:
    if name == "app":
        return _typer_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

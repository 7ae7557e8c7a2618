"""The command-line interface: a thin layer over the library (see cli/errors.py for exits).

`main` runs the plain forms of `memdir index` and the Claude Code hooks without building the typer
app (cli/fast.py); everything else goes to typer. `app` is the typer application, built on first use.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import typer

__all__ = ["app", "main"]

# Importing a command module registers its commands on the app; `memdir --help` lists them in this order.
_COMMAND_MODULES = ("folder", "lint", "memories", "extract", "context", "recall", "lifecycle", "watch", "hooks", "git")


def _typer_app() -> typer.Typer:
    import importlib

    for module in _COMMAND_MODULES:
        importlib.import_module(f"memdir.cli.{module}")
    from memdir.cli.typer_app import app

    return app


def main() -> None:
    from memdir.cli.fast import run_fast

    code = run_fast(sys.argv[1:])
    if code is not None:
        raise SystemExit(code)
    _typer_app()(prog_name="memdir")


def __getattr__(name: str) -> Any:
    if name == "app":
        return _typer_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""The command-line interface: a thin layer over the library (see cli/errors.py for exits).

`main` runs the plain forms of `memdir index` without building the typer app (cli/fast.py);
everything else goes to typer. `app` is the typer application, built on first use.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import typer

__all__ = ["app", "main"]


def _typer_app() -> typer.Typer:
    # Importing the command modules registers their commands on the app, in this order.
    import memdir.cli.folder
    import memdir.cli.lint
    import memdir.cli.memories  # noqa: F401
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

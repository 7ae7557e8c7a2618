"""The command-line interface: a thin typer layer over the library (see cli/errors.py for exits)."""

from __future__ import annotations

# Importing the command modules registers their commands on the app.
from memdir.cli import folder, index, lint, memories  # noqa: F401
from memdir.cli.app import app

__all__ = ["app", "main"]


def main() -> None:
    app(prog_name="memdir")

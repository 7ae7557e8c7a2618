"""`memdir index` without typer: the command a session-start hook runs before every session.

Building the typer app costs more than the index itself (typer imports pydantic to coerce options:
about 0.1 s on a 2-core machine), so `main` first offers the command line to `run_fast`, which
accepts only the plain forms of `memdir [--dir D] [-q] [--no-cache] index [--check] [--stdout]
[--drop-missing] [--format text|json]` and runs the same `run_index` as the typer command. Anything
else (help, a typo, another command, an unusual spelling) returns None and goes to typer, which
owns every message about usage.
"""

from __future__ import annotations

import os
from pathlib import Path

from memdir.cli.errors import GLOBAL_FLAGS, GLOBAL_WITH_VALUE, hoist_global_options, report_failure

_FLAGS = {"--check": "check", "--stdout": "stdout", "--drop-missing": "drop_missing"}
_FORMAT = ("--format", "-f")
# What click reads as a boolean in an environment variable (case-insensitive).
_TRUE, _FALSE = {"1", "true", "t", "yes", "y", "on"}, {"0", "false", "f", "no", "n", "off"}


def run_fast(argv: list[str]) -> int | None:
    """Run `argv` if it is a plain `index` command line and return its exit code; else None."""
    parsed = _parse(argv)
    if parsed is None:
        return None
    from memdir.cli.index import run_index
    from memdir.cli.state import OutputFormat, State

    globals_, options, format = parsed
    try:
        st = State(**globals_)  # type: ignore[arg-type]
        return run_index(st, format=OutputFormat(format), **options)
    except (Exception, KeyboardInterrupt) as exc:
        code = report_failure(exc)
        if code is None:
            raise
        return code


def _parse(argv: list[str]) -> tuple[dict[str, object], dict[str, bool], str] | None:
    args = hoist_global_options(argv, lambda command, option: option in _FORMAT)
    no_cache = os.environ.get("MEMDIR_NO_CACHE", "").strip().lower()
    if no_cache not in _TRUE | _FALSE | {""}:
        return None
    globals_: dict[str, object] = {"dir_option": None, "quiet": False, "no_cache": no_cache in _TRUE}
    words = iter(args)
    for word in words:
        if word in GLOBAL_WITH_VALUE or word.startswith("--dir="):
            value = word.partition("=")[2] if "=" in word else next(words, "")
            if not value:
                return None
            globals_["dir_option"] = Path(value)
        elif word in GLOBAL_FLAGS:
            globals_["quiet" if word in ("-q", "--quiet") else "no_cache"] = True
        elif word == "index":
            break
        else:
            return None
    else:
        return None
    options = dict.fromkeys(_FLAGS.values(), False)
    format = "text"
    for word in words:
        if word in _FLAGS:
            options[_FLAGS[word]] = True
        elif word in _FORMAT or word.startswith("--format="):
            format = word.partition("=")[2] if "=" in word else next(words, "")
            if format not in ("text", "json"):
                return None
        else:
            return None
    return globals_, options, format

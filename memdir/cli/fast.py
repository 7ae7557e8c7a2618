"""`memdir index` and `memdir hook EVENT` without typer: what a session-start hook runs, and what
Claude Code runs before every prompt and after every reply.

Building the typer app costs about as much as the index itself (typer and every command module), so
`main` first offers the command line to `run_fast`. It takes only the plainest forms of those two
commands: the global options (`--dir D`, `-C D`, `--dir=D`, `-q`, `--quiet`, `--no-cache`) before or
after the command (moved as cli/errors.hoist_global_options moves them for typer), `hook` with one
event, and `index` with `--check`, `--stdout`, `--drop-missing` and `--format`/`-f text|json`. Any
other command line (help, a typo, another command, `--`, an option glued to its value) returns None
and goes to typer, which owns every message about usage. tests/test_cli_fast.py parses every command
line made of those pieces, and near misses of them, with the typer command too: the two read the same.

`run_hook`, the hooks' runner, lives here because it must not import typer either; the typer commands
in cli/hooks.py call it too.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from memdir.cli.errors import GLOBAL_FLAGS, GLOBAL_WITH_VALUE, hoist_global_options, report_failure
from memdir.core.errors import MemdirError, os_error_text

_INDEX_FLAGS = {"--check": "check", "--stdout": "stdout", "--drop-missing": "drop_missing"}
_FORMAT = ("--format", "-f")
# What click reads in a boolean environment variable such as MEMDIR_NO_CACHE (case and blanks aside);
# tests/test_cli_fast.py holds these to click's own reading.
_TRUE, _FALSE = {"1", "true", "t", "yes", "y", "on"}, {"0", "false", "f", "no", "n", "off"}

if TYPE_CHECKING:
    from memdir.cli.state import State


def run_fast(argv: list[str]) -> int | None:
    """Run `argv` if it is a plain `index` or `hook` command line and return its exit code; else None."""
    hook = _parse_hook(argv)
    if hook is not None:
        from memdir.cli.state import State

        globals_, event = hook
        return run_hook(event, State(**globals_))  # type: ignore[arg-type]
    parsed = _parse(argv)
    if parsed is None:
        return None
    from memdir.cli import command_started
    from memdir.cli.index import run_index
    from memdir.cli.state import OutputFormat, State

    globals_, options, format = parsed
    command_started()
    st = State(**globals_, output_format=format)  # type: ignore[arg-type]
    try:
        return run_index(st, format=OutputFormat(format), **options)
    except (Exception, KeyboardInterrupt) as exc:
        code = report_failure(exc, st.write_json_error)
        if code is None:
            raise
        return code


def _parse_globals(argv: list[str]) -> tuple[dict[str, object], str, list[str]] | None:
    """The global options, the command and the words after it; None for anything unusual.

    MEMDIR_NO_CACHE is read as True or False; a value click reads as neither counts as False here,
    and `_parse` gives such a command line to typer, which rejects it (a hook keeps it: see below).
    """
    args = hoist_global_options(argv, lambda command, option: option in _FORMAT)
    no_cache = os.environ.get("MEMDIR_NO_CACHE", "").strip().lower() in _TRUE
    globals_: dict[str, object] = {"dir_option": None, "quiet": False, "no_cache": no_cache}
    words = iter(args)
    for word in words:
        if word in GLOBAL_WITH_VALUE or word.startswith("--dir="):
            value = word.partition("=")[2] if "=" in word else next(words, "")
            if not value:
                return None
            globals_["dir_option"] = Path(value)
        elif word in GLOBAL_FLAGS:
            globals_["quiet" if word in ("-q", "--quiet") else "no_cache"] = True
        elif word in ("index", "hook"):
            return globals_, word, list(words)
        else:
            return None
    return None


def _parse_hook(argv: list[str]) -> tuple[dict[str, object], str] | None:
    """`memdir [globals] hook session-start|user-prompt-submit|stop`, nothing more (`--help` goes to typer).

    A hook must not exit 2 over a stray environment variable: from a Stop hook that would keep the
    agent going. So the hook command lines stay here whatever MEMDIR_NO_CACHE holds."""
    parsed = _parse_globals(argv)
    if parsed is None or parsed[1] != "hook" or len(parsed[2]) != 1:
        return None
    # The events the typer commands are named after; the module runs every hook, so it is loaded anyway.
    from memdir.integrations.claude_runtime import SESSION_START, STOP, USER_PROMPT_SUBMIT

    event = parsed[2][0]
    return (parsed[0], event) if event in (SESSION_START, USER_PROMPT_SUBMIT, STOP) else None


def _parse(argv: list[str]) -> tuple[dict[str, object], dict[str, bool], str] | None:
    """`memdir [globals] index [options]`: the global options, the index's flags and its format."""
    if os.environ.get("MEMDIR_NO_CACHE", "").strip().lower() not in _TRUE | _FALSE | {""}:
        return None  # typer says what is wrong with it
    parsed = _parse_globals(argv)
    if parsed is None or parsed[1] != "index":
        return None
    from memdir.cli.state import OutputFormat, chosen_format  # the one rule typer's --format follows too
    from memdir.core.errors import ConfigError

    globals_, _, rest = parsed
    words = iter(rest)
    options = dict.fromkeys(_INDEX_FLAGS.values(), False)
    given = None
    for word in words:
        if word in _INDEX_FLAGS:
            options[_INDEX_FLAGS[word]] = True
        elif word in _FORMAT or word.startswith("--format="):
            given = word.partition("=")[2] if "=" in word else next(words, "")
            if given not in tuple(OutputFormat):
                return None
        else:
            return None
    try:
        return globals_, options, chosen_format(given, tuple(OutputFormat), "text", os.environ)
    except ConfigError:  # a MEMDIR_OUTPUT_FORMAT no command has: typer says so
        return None


def run_hook(event: str, st: State) -> int:
    """`memdir hook EVENT`: read Claude Code's JSON on stdin, do the hook's work, print its output.

    Exits 0 whatever happens, with a note on stderr: a hook must never stand in a session's way,
    and exit 2 from a Stop hook would even tell Claude Code to keep the agent going.
    """
    from memdir.cli import command_started
    from memdir.integrations.claude_runtime import HOOK_INPUT_LIMIT
    from memdir.integrations.claude_runtime import run_hook as handle
    from memdir.text.outward import dumps, for_terminal

    command_started()
    notes: list[str] = []
    try:
        today = None
        try:
            today = st.today
        except Exception as exc:  # a bad MEMDIR_TODAY: index against the real date
            notes.append(str(exc))
        stdin_text = read_stdin(HOOK_INPUT_LIMIT)
        if stdin_text is None:
            notes.append(f"hook input is over {HOOK_INPUT_LIMIT:,} bytes; going on without it")
            stdin_text = ""
        outcome = handle(event, stdin_text, dir_option=st.dir_option, env=os.environ, cwd=st.cwd, today=today,
                         cache=not st.no_cache)  # fmt: skip
        notes += outcome.notes
        if outcome.output is not None:
            # UTF-8 whatever the locale says: Claude Code reads the bytes as UTF-8. The session's
            # context is a boundary: no secret in it, no raw control character (memdir.text.outward).
            data = (dumps(outcome.output, indent=None) + "\n").encode("utf-8")
            out = getattr(sys.stdout, "buffer", None)
            if out is not None:
                sys.stdout.flush()
                out.write(data)
                out.flush()
            else:
                sys.stdout.write(data.decode("utf-8"))
                sys.stdout.flush()
    except KeyboardInterrupt:
        return 130
    except (MemdirError, OSError) as exc:  # expected: a refused `.memdir/`, a log that is a symlink
        notes.append(os_error_text(exc) if isinstance(exc, OSError) else str(exc))
    except Exception as exc:
        if os.environ.get("MEMDIR_DEBUG"):
            raise
        notes.append(f"internal error: {type(exc).__name__}: {exc} (MEMDIR_DEBUG=1 shows the traceback)")
    if not st.quiet:
        for note in notes:
            print(for_terminal(f"memdir: hook {event}: {note}"), file=sys.stderr)
    return 0


def read_stdin(limit: int) -> str | None:
    """A hook's input on stdin, None when it runs past `limit` bytes (read no further: `/dev/zero`
    never ends); nothing when a person runs the command at a terminal."""
    stream = sys.stdin
    if stream is None or stream.isatty():
        return ""
    raw = getattr(stream, "buffer", None)
    data = raw.read(limit + 1) if raw is not None else stream.read(limit + 1).encode("utf-8")
    return data.decode("utf-8", "replace") if len(data) <= limit else None

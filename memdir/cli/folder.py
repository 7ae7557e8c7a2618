"""`memdir init`, `where` and `index`: create the memory folder, say which one is in use, index it."""

from __future__ import annotations

from typing import Annotated

import typer

from memdir.cli.index import run_index
from memdir.cli.state import OutputFormat
from memdir.cli.typer_app import FormatOption, app, state


@app.command()
def init(ctx: typer.Context, format: FormatOption = OutputFormat.text) -> None:
    """Create the memory folder, an empty MEMORY.md and .memdir/ (tool state, ignored by git)."""
    st = state(ctx)
    folder = st.folder(must_exist=False)
    created = folder.init()
    if format is OutputFormat.json:
        st.write_json({"path": str(folder.root), "created": created, "reason": st.location.reason})
        return
    where = st.show_path(folder.root)
    if created:
        st.say(f"Initialised memory folder {where} ({st.location.reason}).")
    else:
        st.say(f"{where} is already a memory folder; nothing to do.")
    st.say(
        "Next steps:\n"
        '  memdir add feedback lint-before-commit -d "Run the linter before every commit" '
        '--why "CI was red for a day" --how "Before any git commit"\n'
        "  memdir index    # regenerate MEMORY.md (e.g. in a session-start hook)\n"
        "  memdir lint     # check the folder (e.g. in CI)"
    )


@app.command()
def where(ctx: typer.Context, format: FormatOption = OutputFormat.text) -> None:
    """Print the memory folder in use and why it is the one."""
    st = state(ctx)
    found = st.location
    exists = found.path.is_dir()
    if format is OutputFormat.json:
        payload = {"path": str(found.path), "source": found.source, "reason": found.reason, "exists": exists}
        st.write_json(payload)
        return
    st.write(f"{found.path}\n")
    st.say(f"  {found.reason}" + ("" if exists else "; it does not exist yet (`memdir init` creates it)"))


@app.command()
def index(
    ctx: typer.Context,
    check: Annotated[
        bool, typer.Option("--check", help="Exit 1 if MEMORY.md is not what index would write; write nothing.")
    ] = False,
    stdout: Annotated[bool, typer.Option("--stdout", help="Print the index instead of writing it.")] = False,
    drop_missing: Annotated[
        bool, typer.Option("--drop-missing", help="Also remove list entries whose linked file is gone.")
    ] = False,
    format: FormatOption = OutputFormat.text,
) -> None:
    """Regenerate MEMORY.md from the memory files, within 200 lines and 25,000 bytes.

    Hand-written lines (headings, prose, notes) are kept in place. When not everything fits,
    the least valuable entries are left out (lowest importance, then oldest) and listed.
    """
    code = run_index(state(ctx), check=check, stdout=stdout, drop_missing=drop_missing, format=format)
    if code:
        raise typer.Exit(code)

"""`memdir git setup` (register the MEMORY.md merge driver) and `memdir git merge-driver` (what git
runs). The merging itself is memdir/integrations/gitmerge.py."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from memdir.cli.errors import REFUSED
from memdir.cli.state import OutputFormat
from memdir.cli.typer_app import FormatOption, app, state

git_app = typer.Typer(
    help="Share the memory folder through git: `git setup` makes git merge MEMORY.md by regenerating it. "
    "See docs/team.md.",
    no_args_is_help=True,
)
app.add_typer(git_app, name="git")


@git_app.command()
def setup(
    ctx: typer.Context,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print what would change; write nothing.")] = False,
    format: FormatOption = OutputFormat.text,
) -> None:
    """Register memdir's merge driver for the folder's MEMORY.md in its git repository.

    Adds `/<path>/MEMORY.md merge=memdir` to the repository's .gitattributes (commit it) and sets
    merge.memdir.name and merge.memdir.driver in this clone's git config (each clone runs setup
    once). Only what is missing or different is changed, so running it again changes nothing.
    """
    from memdir.integrations.gitmerge import setup_merge_driver

    st = state(ctx)
    result = setup_merge_driver(st.location.path, dry_run=dry_run)
    for warning in result.warnings:
        st.warn(warning)
    if format is OutputFormat.json:
        changes = [{"file": c.file, "key": c.key, "before": c.before, "after": c.after} for c in result.changes]
        st.write_json(
            {
                "repository": str(result.repository),
                "index_path": result.index_path,
                "dry_run": dry_run,
                "changes": changes,
            }
        )
        return
    if not result.changes:
        st.say(f"{result.index_path}: the memdir merge driver is already set up; nothing changed.")
        return
    # A dry run's list is what was asked for (stdout, even with --quiet); after a change it is progress.
    report = st.write if dry_run else lambda line: st.say(line.rstrip("\n"))
    for change in result.changes:
        if change.file == ".gitattributes":
            where = st.show_path(result.repository / ".gitattributes")
            report(f"{where}: {'would add' if dry_run else 'added'} `{change.after}`\n")
        else:
            was = f" (was {change.before!r})" if change.before is not None else ""
            verb = "would set" if dry_run else "set"
            report(f"git config (this clone): {verb} {change.key} = {change.after}{was}\n")
    if dry_run:
        st.say("Dry run: nothing written.")
    else:
        st.say(
            f"git now merges {result.index_path} by regenerating it. Commit .gitattributes; "
            "every clone runs `memdir git setup` once."
        )


@git_app.command("merge-driver", hidden=True)
def merge_driver(
    ctx: typer.Context,
    base: Annotated[Path, typer.Argument(help="%O: the common ancestor's MEMORY.md.", show_default=False)],
    ours: Annotated[Path, typer.Argument(help="%A: ours; receives the result.", show_default=False)],
    theirs: Annotated[Path, typer.Argument(help="%B: theirs.", show_default=False)],
    path: Annotated[
        str | None, typer.Argument(help="%P: MEMORY.md's path in the repository.", show_default=False)
    ] = None,
    marker_size: Annotated[int, typer.Option("--marker-size", min=1, help="%L: conflict marker length.")] = 7,
) -> None:
    """What git runs to merge MEMORY.md (see `memdir git setup`): writes the merged index into OURS.

    Exits 0 when MEMORY.md merged cleanly; 1 when a person must look (the file then holds
    conflict markers, or an index to regenerate once conflicting memory files are resolved).
    """
    from memdir.integrations.gitmerge import run_merge_driver

    st = state(ctx)
    merged = run_merge_driver(base, ours, theirs, path, today=st.today, marker_size=marker_size)
    for note in merged.notes:
        st.error(f"{path or 'MEMORY.md'}: {note}")  # git shows it among its merge messages
    if not merged.clean:
        raise typer.Exit(REFUSED)

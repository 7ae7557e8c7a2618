"""`memdir lint` and `memdir rules`: check a memory folder, and explain each check."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from memdir.cli.app import FormatOption, OutputFormat, app, fail, state


def _selectors(values: list[str] | None) -> list[str]:
    return [part.strip() for value in values or [] for part in value.split(",") if part.strip()]


@app.command()
def lint(
    ctx: typer.Context,
    format: FormatOption = OutputFormat.text,
    select: Annotated[
        list[str] | None,
        typer.Option("--select", help="Only these rules: codes, code prefixes (F, I00) or names; comma-separated."),
    ] = None,
    ignore: Annotated[
        list[str] | None, typer.Option("--ignore", help="Skip these rules (same forms as --select).")
    ] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Warnings fail the run too.")] = False,
    exit_zero: Annotated[bool, typer.Option("--exit-zero", help="Exit 0 even when there are findings.")] = False,
) -> None:
    """Check the memory folder: frontmatter, bodies, duplicates, and MEMORY.md against its caps.

    Exit 0 when clean (warnings and info do not fail unless --strict), 1 on findings, 2 on a
    usage or configuration error.
    """
    from memdir.lint.report import render_json, render_text

    st = state(ctx)
    folder = st.folder()
    try:
        report = folder.lint(select=_selectors(select), ignore=_selectors(ignore))
    except ValueError as exc:
        fail(str(exc))
    if format is OutputFormat.json:
        st.write(render_json(report, folder.root))
    else:
        st.write(render_text(report, lambda p: st.show_path(folder.root / p)))
    if report.failed(strict) and not exit_zero:
        raise typer.Exit(1)


@app.command()
def rules(
    ctx: typer.Context,
    code: Annotated[str | None, typer.Argument(help="A rule code or name to explain.", show_default=False)] = None,
    format: FormatOption = OutputFormat.text,
) -> None:
    """List the lint rules, or explain one."""
    from rich.table import Table

    from memdir.lint import RULES

    st = state(ctx)
    chosen = sorted(RULES.values(), key=lambda r: r.code)
    if code is not None:
        chosen = [r for r in chosen if code.upper() == r.code or code == r.name]
        if not chosen:
            fail(f"no rule {code!r}; `memdir rules` lists them")
    if format is OutputFormat.json:
        payload = [
            {"code": r.code, "name": r.name, "severity": r.severity.value, "summary": r.summary, "doc": r.doc}
            for r in chosen
        ]
        st.write(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")
        return
    if code is not None:
        r = chosen[0]
        st.write(f"{r.code} {r.name} ({r.severity.value})\n\n{r.summary}\n\n{r.doc}\n")
        return
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("code", "name", "severity", "what it finds"):
        table.add_column(column, overflow="fold")
    for r in chosen:
        table.add_row(r.code, r.name, r.severity.value, r.summary)
    st.out.print(table)

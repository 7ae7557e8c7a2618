"""`memdir lint` and `memdir rules`: check a memory folder, fix what is safe, and explain each check."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from memdir.cli.complete import rule_codes, rule_codes_and_names
from memdir.cli.state import OutputFormat, fail, paint
from memdir.cli.typer_app import FORMAT_FALLBACK, FormatOption, app, resolve_format, state
from memdir.core.model import plural

if TYPE_CHECKING:
    from memdir.folder import FileChange


class LintFormat(StrEnum):
    text = "text"
    concise = "concise"
    json = "json"
    github = "github"
    sarif = "sarif"


def _selectors(values: list[str] | None) -> list[str]:
    return [part.strip() for value in values or [] for part in value.split(",") if part.strip()]


_SELECT_HELP = "codes, code prefixes (F, I00), names or ALL; comma-separated or repeated"


@app.command()
def lint(
    ctx: typer.Context,
    format: Annotated[
        LintFormat,
        typer.Option(
            "--format", "--output-format", "-f", help=f"Report format {FORMAT_FALLBACK}.", callback=resolve_format
        ),
    ] = LintFormat.text,
    output_file: Annotated[
        Path | None, typer.Option("--output-file", "-o", help="Write the report to this file instead of stdout.")
    ] = None,
    select: Annotated[
        list[str] | None, typer.Option("--select", help=f"Only these rules: {_SELECT_HELP}.", autocompletion=rule_codes)
    ] = None,
    extend_select: Annotated[
        list[str] | None,
        typer.Option(
            "--extend-select",
            help="These rules on top of the selection (e.g. off-by-default ones).",
            autocompletion=rule_codes,
        ),
    ] = None,
    ignore: Annotated[
        list[str] | None,
        typer.Option("--ignore", help="Skip these rules (same forms as --select).", autocompletion=rule_codes),
    ] = None,
    fix: Annotated[bool, typer.Option("--fix", help="Apply safe fixes, then report what is left.")] = False,
    unsafe_fixes: Annotated[
        bool, typer.Option("--unsafe-fixes", help="With --fix or --diff, apply unsafe fixes too.")
    ] = False,
    diff: Annotated[
        bool, typer.Option("--diff", help="Print the changes --fix would make, as a unified diff; write nothing.")
    ] = False,
    exit_non_zero_on_fix: Annotated[
        bool,
        typer.Option("--exit-non-zero-on-fix", help="Exit 1 when --fix changed anything, even if nothing is left."),
    ] = False,
    strict: Annotated[bool, typer.Option("--strict", help="Warnings fail the run too.")] = False,
    exit_zero: Annotated[bool, typer.Option("--exit-zero", help="Exit 0 even when there are findings.")] = False,
) -> None:
    """Check the memory folder: frontmatter, bodies, content, duplicates, secrets, and MEMORY.md.

    Exit 0 when clean (warnings and info do not fail unless --strict), 1 on findings (with
    --diff: when there is something to fix), 2 on a usage or configuration error. Settings come
    from `[tool.memdir.lint]` in pyproject.toml or `[lint]` in .memdir.toml; options add to them.
    """
    from memdir.lint.report import json_pieces, render_concise, render_github, render_json, render_sarif, render_text

    st = state(ctx)
    folder = st.folder()
    chosen = {"select": _selectors(select), "ignore": _selectors(ignore), "extend_select": _selectors(extend_select)}
    if diff and fix:
        fail("--diff previews what --fix would do; give one of them")
    fixed = 0
    try:
        if diff or fix:
            result = folder.fix(**chosen, unsafe=unsafe_fixes, dry_run=diff)
            report, fixed = result.report, len(result.fixed)
            if diff:
                st.write(_unified_diff(result.changes))
                files = plural(len(result.changes), "file", "files")
                st.say(f"Would fix {plural(fixed, 'issue', 'issues')} in {files}." if fixed else "Nothing to fix.")
                if result.changes and not exit_zero:
                    raise typer.Exit(1)
                return
        else:
            report = folder.lint(**chosen)
    except ValueError as exc:
        fail(str(exc))

    def show(path: str) -> str:
        return st.show_path(folder.root / path)

    coloured = format is LintFormat.text and output_file is None and st.colour_stdout

    if format is LintFormat.json and output_file is None:  # written as it is made: megabytes on a large folder
        st.write_raw(json_pieces(report, folder.root))
        text = None
    elif format is LintFormat.json:
        text = render_json(report, folder.root)
    elif format is LintFormat.sarif:
        from memdir.lint import RULES

        text = render_sarif(report, RULES.values(), show)
    elif format is LintFormat.github:
        text = render_github(report, show)
    elif format is LintFormat.concise:
        text = render_concise(report, show)
    else:
        text = render_text(report, show, fixed, _in_colour) if coloured else render_text(report, show, fixed)
    if text is None:
        pass  # written already
    elif output_file is None:  # every reporter escapes what it quotes; json, sarif and github must stay as made
        machine = (LintFormat.json, LintFormat.sarif, LintFormat.github)
        st.write_raw(text) if format in machine or coloured else st.write(text)
    else:
        from memdir.core.store import atomic_write

        atomic_write(output_file, text)
        st.say(f"Wrote the {format.value} report ({len(report.findings)} findings) to {output_file}.")
    if exit_zero:
        return
    if report.failed(strict) or (exit_non_zero_on_fix and fixed):
        raise typer.Exit(1)


_ROLE_STYLES = {"path": "bold", "code": "bold red", "error": "red", "warning": "yellow", "info": "cyan"}


def _in_colour(text: str, role: str) -> str:
    """A part of the text report in its colour (lint.report.render_text names the parts)."""
    style = _ROLE_STYLES.get(role)
    return paint(text, style) if style else text


def _unified_diff(changes: list[FileChange]) -> str:
    """The changes as a unified diff, with every secret in them redacted: lint found them, so lint
    must not print them (the files themselves are written as the diff says, secrets and all)."""
    import difflib

    from memdir.text.sensitive import redact

    out: list[str] = []
    for change in changes:
        before = redact(change.before or "").splitlines(keepends=True)
        after = redact(change.after).splitlines(keepends=True)
        for line in difflib.unified_diff(before, after, f"a/{change.path}", f"b/{change.path}"):
            out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


@app.command()
def rules(
    ctx: typer.Context,
    code: Annotated[
        str | None,
        typer.Argument(help="A rule code or name to explain.", show_default=False, autocompletion=rule_codes_and_names),
    ] = None,
    format: FormatOption = OutputFormat.text,
) -> None:
    """List the lint rules (code, name, severity, fixable), or explain one."""
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
            {
                "code": r.code,
                "name": r.name,
                "severity": r.severity.value,
                "fixable": r.fixable.value if r.fixable else None,
                "default": r.default,
                "summary": r.summary,
                "why": r.why,
                "example": r.example,
                "instead": r.instead,
                "fix": r.fix,
            }
            for r in chosen
        ]
        st.write_json(payload)
        return
    if code is not None:
        r = chosen[0]
        fixable = f", {r.fixable.value} fix" if r.fixable else ""
        st.write(f"{r.code} {r.name} ({r.severity.value}{fixable})\n\n{r.doc}\n")
        return
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("code", "name", "severity", "fix", "what it finds"):
        table.add_column(column, overflow="fold")
    for r in chosen:
        table.add_row(r.code, r.name, r.severity.value, r.fixable.value if r.fixable else "", r.summary)
    st.out.print(table)

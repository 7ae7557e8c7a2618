"""Reporters: a LintReport as text for people, or json, sarif and GitHub annotations for machines.

Every reporter takes `show_path`, which turns a folder-relative path into the path the reader
needs (relative to the working directory, where CI tools and editors resolve them). Rules mask
secret values before they reach a message; the reporters still pass every path and message through
memdir.text.outward, since a file name is content from the folder too: in the text formats no line can
start with it (a control character is escaped, a path that would start a line with `::` or `##[`,
a CI workflow command, is written `./::...`), and the machine formats escape what their readers act on.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

from memdir.core.model import plural
from memdir.lint import LintReport
from memdir.lint.registry import Applicability, Finding, Rule, Severity
from memdir.text.outward import dumps, for_terminal, masked, one_field
from memdir.text.sensitive import mask_secrets
from memdir.version import __version__

ShowPath = Callable[[str], str]
Style = Callable[[str, str], str]  # (text, role) -> text as shown: see render_text


def _line_start(path: str) -> str:
    """`path` made safe to begin a line of a text report: escaped, and never the start of a workflow
    command (GitHub Actions runs `::error ...` and `##[error]` lines found anywhere in a job's log)."""
    shown = one_field(path)
    return f"./{shown}" if shown.lstrip()[:2] in ("::", "##") else shown


def _where(f: Finding, show_path: ShowPath) -> str:
    return _line_start(show_path(f.path)) + (f":{f.line}" if f.line else "")


def _summary(report: LintReport, fixed: int = 0) -> str:
    s = report.summary()
    if not report.findings:
        files = plural(s["files"], "file", "files")
        line = f"All checks passed: {plural(s['memories'], 'memory', 'memories')} in {files}."
    else:
        counts = f"{plural(s['errors'], 'error', 'errors')}, {plural(s['warnings'], 'warning', 'warnings')}"
        line = (
            f"Found {plural(s['findings'], 'issue', 'issues')} ({counts}, {s['info']} info); "
            f"{plural(s['files'], 'file', 'files')} checked."
        )
        safe, unsafe = s["fixable"], report.fixable(unsafe=True) - s["fixable"]
        if safe:
            line += f" {safe} fixable with `memdir lint --fix`"
            line += f", {unsafe} more with `memdir lint --fix --unsafe-fixes`." if unsafe else "."
        elif unsafe:
            line += f" {unsafe} fixable with `memdir lint --fix --unsafe-fixes`."
    return (f"Fixed {plural(fixed, 'issue', 'issues')}.\n" if fixed else "") + line


def _plain(text: str, role: str) -> str:
    return text


def render_text(report: LintReport, show_path: ShowPath = str, fixed: int = 0, style: Style = _plain) -> str:
    """`path:line: CODE [severity] message (name)`; `[*]` marks what --fix fixes (safe fixes).

    `style(text, role)` may decorate the parts (the CLI colours them on a terminal); the roles are
    "path", "code", the severity's value ("error", "warning", "info") and "summary"."""
    lines = []
    for f in report.findings:
        mark = " [*]" if f.fixable is Applicability.SAFE else ""
        where = style(_where(f, show_path), "path")
        severity = style(f"[{f.severity.value}]", f.severity.value)
        lines.append(f"{where}: {style(f.code, 'code')}{mark} {severity} {one_field(f.message)} ({f.name})")
    lines.append(style(_summary(report, fixed), "summary"))
    return "\n".join(lines) + "\n"


def render_concise(report: LintReport, show_path: ShowPath = str) -> str:
    """One line a finding, `path:line: CODE message`, for editors and grep; no summary."""
    return "".join(f"{_where(f, show_path)}: {f.code} {one_field(f.message)}\n" for f in report.findings)


def render_json(report: LintReport, folder: Path) -> str:
    """`{"folder", "findings": [{code, name, severity, path, line, message, fix}], "summary"}`."""
    return "".join(json_pieces(report, folder))


def json_pieces(report: LintReport, folder: Path) -> Iterator[str]:
    """render_json's text in pieces of a thousand findings, for a caller that writes them as they
    come: the report of a large folder is megabytes of text (25,000 findings), and each finding is
    a dict only while it is dumped."""
    # Laid out by hand, one finding a line: json.dumps(indent=2) uses the pure-Python encoder, which
    # takes a quarter of a second on the 12,000 findings of a large folder; compact per-item dumps
    # use the C one and still read well and diff well.

    # Every string is masked on its way out, keys included; most are keys, codes, names, severities
    # and paths that repeat finding after finding, so each is masked once (a finding has a dozen).
    mask = functools.lru_cache(maxsize=4096)(mask_secrets)

    def dump(value: object) -> str:
        return dumps(masked(value, mask), indent=None, mask=False)

    def dump_finding(finding: Finding) -> str:
        # What dump(finding.to_dict()) writes, with the strings (most of its values) masked here
        # rather than through masked()'s generic walk: a quarter of the time of a large report.
        shown = {mask(k): mask(v) if isinstance(v, str) else masked(v, mask) for k, v in finding.to_dict().items()}
        return dumps(shown, indent=None, mask=False)

    yield f'{{\n  "folder": {dump(str(folder))},\n  "findings": ['
    batch: list[str] = []
    for n, finding in enumerate(report.findings):
        batch.append(f"{',' if n else ''}\n    {dump_finding(finding)}")
        if len(batch) == 1000:
            yield "".join(batch)
            batch = []
    batch.append("\n  " if report.findings else "")
    yield "".join(batch) + f'],\n  "summary": {dump(report.summary())}\n}}\n'


_GITHUB_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _escape_data(text: str) -> str:
    """A workflow command's message, escaped as the runner's spec asks (it decodes %0A back to a newline);
    secrets masked and other control characters written as escapes first."""
    parts = (for_terminal(part).replace("%", "%25").replace("\n", "%0A") for part in text.split("\r"))
    return "%0D".join(parts)


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(report: LintReport, show_path: ShowPath = str) -> str:
    """GitHub Actions workflow commands: `::error file=F,line=L,title=T::message`, one a finding."""
    out = []
    for f in report.findings:
        props = [f"file={_escape_property(show_path(f.path))}"]
        if f.line:
            props.append(f"line={f.line}")
        props.append(f"title={_escape_property(f'{f.code} {f.name}')}")
        out.append(f"::{_GITHUB_LEVEL[f.severity]} {','.join(props)}::{_escape_data(f.message)}\n")
    return "".join(out)


_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _sarif_uri(path: str) -> str:
    """A relative path stays relative (GitHub resolves it against the checkout); else a file URI."""
    return Path(path).as_uri() if Path(path).is_absolute() else quote(Path(path).as_posix())


def render_sarif(report: LintReport, rules: Iterable[Rule], show_path: ShowPath = str) -> str:
    """A SARIF 2.1.0 log with one run: memdir as the tool, its rules, and one result a finding."""
    catalogue = sorted(rules, key=lambda r: r.code)
    index = {r.code: i for i, r in enumerate(catalogue)}
    results: list[dict[str, Any]] = []
    for f in report.findings:
        # Masked before it is percent-encoded: `%20sk-ant-…` is glued to `%20`, and no mask finds it after.
        location: dict[str, Any] = {"artifactLocation": {"uri": _sarif_uri(mask_secrets(show_path(f.path)))}}
        if f.line:
            location["region"] = {"startLine": f.line}
        result: dict[str, Any] = {
            "ruleId": f.code,
            "level": _SARIF_LEVEL[f.severity],
            "message": {"text": f.message},
            "locations": [{"physicalLocation": location}],
        }
        if f.code in index:
            result["ruleIndex"] = index[f.code]
        results.append(result)
    driver = {
        "name": "memdir",
        "version": __version__,
        "semanticVersion": __version__,
        "rules": [
            {
                "id": r.code,
                "name": r.name,
                "shortDescription": {"text": r.summary},
                "fullDescription": {"text": r.why},
                "help": {"text": r.doc},
                "defaultConfiguration": {"level": _SARIF_LEVEL[r.severity]},
                "properties": {"fixable": r.fixable.value if r.fixable else None},
            }
            for r in catalogue
        ],
    }
    log = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [{"tool": {"driver": driver}, "results": results}]}
    return dumps(log) + "\n"

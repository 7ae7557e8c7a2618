"""Reporters: turn a LintReport into text for people or JSON for machines (a stable schema)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from memdir.lint import LintReport


def render_text(report: LintReport, show_path: Callable[[str], str] = str) -> str:
    """`path:line: CODE message (name)`, one finding a line, then a summary line."""
    lines = []
    for f in report.findings:
        where = show_path(f.path) + (f":{f.line}" if f.line else "")
        lines.append(f"{where}: {f.code} [{f.severity.value}] {f.message} ({f.name})")
    s = report.summary()
    if not report.findings:
        lines.append(f"All checks passed: {s['memories']} memories in {s['files']} files.")
    else:
        lines.append(
            f"Found {s['findings']} issues ({s['errors']} errors, {s['warnings']} warnings, "
            f"{s['info']} info) in {s['files']} files."
        )
    return "\n".join(lines) + "\n"


def render_json(report: LintReport, folder: Path) -> str:
    """`{"folder", "findings": [{code, name, severity, path, line, message}], "summary"}`."""
    return json.dumps({"folder": str(folder), **report.to_dict()}, ensure_ascii=False, indent=2) + "\n"

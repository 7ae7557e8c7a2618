"""Applying fixes in memory: edits to a file's text, and the folder as it would be after them.

Nothing here writes; `MemoryDir.fix` decides what goes to disk, under the folder lock.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

from memdir.core.model import FrontmatterError, Memory, parse_document
from memdir.core.store import Scan
from memdir.lint.registry import Edit, Finding


def apply_edits(text: str, findings: Iterable[Finding]) -> tuple[str, list[Finding]]:
    """`text` with the edits of each finding's fix applied, and the findings applied.

    A finding whose edits overlap an earlier one's is left for the next pass, as ruff does,
    so two fixes never garble the same span.
    """
    chosen: list[tuple[Edit, ...]] = []
    applied: list[Finding] = []
    taken: list[tuple[int, int]] = []
    for finding in sorted(findings, key=lambda f: min((e.start for e in f.fix.edits), default=0) if f.fix else 0):
        edits = finding.fix.edits if finding.fix else ()
        if not edits:
            continue
        if any((e.start < end and start < e.end) or e.start == e.end == start for e in edits for start, end in taken):
            continue
        chosen.append(edits)
        applied.append(finding)
        taken += [(e.start, e.end) for e in edits]
    # From the end, as if each edit were applied in turn, but joined once: a file with thousands of
    # edits (F013 on a large frontmatter) would otherwise be copied once per edit.
    pieces, at = [], len(text)
    for edit in sorted((e for group in chosen for e in group), key=lambda e: e.start, reverse=True):
        pieces += [text[edit.end : at], edit.replacement]
        at = edit.start
    pieces.append(text[:at])
    return "".join(reversed(pieces)), applied


def overlay(scan: Scan, texts: Mapping[str, str]) -> Scan:
    """The scan with the memories in `texts` re-read from their new text.

    Raises FrontmatterError when a fix broke a file's frontmatter, which must never happen
    and is better caught here than written.
    """
    memories: list[Memory] = []
    for memory in scan.memories:
        if memory.path in texts:
            doc = parse_document(texts[memory.path])
            if not doc.has_frontmatter:
                raise FrontmatterError(f"{memory.path}: a fix removed the frontmatter")
            memory = dataclasses.replace(memory, doc=doc)
        memories.append(memory)
    # The files keep their mtimes until written: ages (and a git look-up) carry over.
    return Scan(root=scan.root, memories=memories, problems=list(scan.problems), mtimes=scan.mtimes, _ages=scan.ages)

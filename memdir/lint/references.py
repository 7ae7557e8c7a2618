"""R: references. A memory is a clue, not a conclusion: the files it names should still exist.

Paths are checked against the git work tree that holds the memory folder (`git ls-files`, so
ignored build output does not count). Folders outside any repository are not checked.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from memdir.core.model import Memory
from memdir.core.store import resolved
from memdir.lint.registry import Hit, LintContext, Severity, line_at, rule

# A relative path with at least one '/' and a file extension, optionally with :line after it.
# Not preceded by what would make it part of a URL, an absolute or home path, or a longer word.
_PATH = re.compile(
    r"(?<![\w/.:~@$%-])"
    r"((?:\.{1,2}/)*[\w@+-][\w.@+-]*(?:/[\w.@+-]+)+\.[A-Za-z][A-Za-z0-9]{0,7})"
    r"(?![\w/*])"
)


def tracked_files(repo_root: Path) -> frozenset[str] | None:
    """Every path git knows in the work tree (tracked or not ignored), and all their tail paths."""
    try:
        done = subprocess.run(
            ["git", "-C", str(repo_root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            capture_output=True,
            timeout=30,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    tails: set[str] = set()
    for raw in done.stdout.split(b"\0"):
        if not raw:
            continue
        parts = raw.decode("utf-8", "surrogateescape").split("/")
        # "src/app/main.py" also answers "app/main.py": memories often name a path from a sub-folder.
        tails.update("/".join(parts[i:]) for i in range(len(parts)))
        tails.update("/".join(parts[: i + 1]) + "/" for i in range(len(parts) - 1))
    return frozenset(tails)


def _candidates(memory: Memory) -> Iterator[tuple[int, str]]:
    """(line, path) for each path-like token in the description and body."""
    text = memory.doc.text
    for found in _PATH.finditer(text, memory.doc.fm_start):
        path = found.group(1)
        first = path.split("/", 1)[0]
        if "." in first.strip(".") and not first.startswith("."):
            continue  # example.com/docs/page.html: a host, not a folder
        yield line_at(text, found.start()), path


def _exists(path: str, memory: Memory, ctx: LintContext, known: frozenset[str]) -> bool:
    assert ctx.repo_root is not None
    if path.startswith(("./", "../")):
        base = (ctx.root / memory.path).parent / path
        try:
            relative = resolved(base).relative_to(resolved(ctx.repo_root)).as_posix()
        except ValueError:
            return True  # outside the repository: not ours to judge
        except OSError:
            return True  # a symlink loop: it exists, though it leads nowhere; S001 is for links
        return relative in known or base.exists()
    normal = PurePosixPath(path).as_posix()
    # Files of the memory folder itself count even where git ignores the folder.
    return normal in known or (ctx.root / normal).exists()


@rule(
    "R001", "stale-file-reference", Severity.WARNING,
    "Finds file paths named in a memory that no longer exist in the repository.",
    why="""A memory that points at `src/billing/invoice.py` sends the agent to a file that was moved
    or deleted; worse, the rule or fact around it was probably about code that has changed.
    Update the path and check the claim, or archive the memory. Paths are matched against `git
    ls-files` of the repository holding the memory folder; a path from a sub-folder
    (`billing/invoice.py`) counts as present.""",
    example="Invoices are rendered in `src/billing/invoice.py`.   (moved to src/invoices/render.py)",
    instead="Invoices are rendered in `src/invoices/render.py`.",
)  # fmt: skip
def stale_file_reference(ctx: LintContext) -> Iterator[Hit]:
    if ctx.repo_root is None:
        return
    known = tracked_files(ctx.repo_root)
    if known is None:
        return
    for memory in ctx.scan.memories:
        reported: set[str] = set()
        for line, path in _candidates(memory):
            if path not in reported and not _exists(path, memory, ctx, known):
                reported.add(path)
                yield Hit(memory.path, line, f"names {path}, which is not in the repository")

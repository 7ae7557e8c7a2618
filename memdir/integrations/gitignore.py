"""Keeping Claude Code's local settings out of git. `.claude/settings.local.json` is this clone's
own (Claude Code's convention: it adds `**/.claude/settings.local.json` to the user's global git
ignore file when it writes one); when `memdir hooks install` writes it in a repository, git must not
offer it for a commit. memdir adds the same pattern to the repository's `info/exclude`, which is
this clone's own too: nothing to commit, and no file of the user's outside the repository changed.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from memdir.core.store import atomic_write, read_text_if_exists

PATTERN = "**/.claude/settings.local.json"  # Claude Code's own pattern


@dataclass(frozen=True)
class IgnoreOutcome:
    """What became of keeping one file out of git."""

    status: str  # ignored | added | would-add | tracked | no-repository | failed
    path: Path
    exclude: Path | None = None  # the exclude file memdir added to (or would)
    detail: str = ""

    def message(self) -> str | None:
        """A line for the user when there is something to say."""
        if self.status == "added":
            return f"{self.path} is now ignored by git (`{PATTERN}` added to {self.exclude}, this clone's own)"
        if self.status == "would-add":
            return f"would add `{PATTERN}` to {self.exclude}, so git ignores {self.path} (dry run)"
        if self.status == "tracked":
            return (
                f"{self.path} is tracked by git, so ignore rules do not apply; to keep it to this clone, "
                f"`git rm --cached {self.path}` and commit that"
            )
        if self.status == "failed":
            return (
                f"could not make git ignore {self.path} ({self.detail}); add `{PATTERN}` to .gitignore "
                "or .git/info/exclude (Claude Code keeps this file out of git)"
            )
        return None


def _git(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=30)


def keep_out_of_git(path: Path, *, dry_run: bool = False) -> IgnoreOutcome:
    """Make git ignore `path` (a `.claude/settings.local.json`) in the repository holding it: nothing
    when it already does or there is no repository; else `PATTERN` added to the repository's
    `info/exclude` (for a worktree, the main repository's, which git reads for every worktree)."""
    folder = path.parent
    while not folder.is_dir() and folder != folder.parent:
        folder = folder.parent  # the file and its .claude/ may not be written yet (a dry run)
    try:
        inside = _git(folder, "rev-parse", "--is-inside-work-tree")
        if inside.returncode != 0 or inside.stdout.strip() != "true":
            return IgnoreOutcome("no-repository", path)
        if _git(folder, "ls-files", "--error-unmatch", "--", str(path)).returncode == 0:
            return IgnoreOutcome("tracked", path)
        if _git(folder, "check-ignore", "-q", "--", str(path)).returncode == 0:
            return IgnoreOutcome("ignored", path)
        found = _git(folder, "rev-parse", "--git-path", "info/exclude")  # the common one, in a worktree
        if found.returncode != 0:
            return IgnoreOutcome("failed", path, detail=found.stderr.strip() or "git rev-parse failed")
        exclude = Path(os.path.normpath(folder / found.stdout.strip()))  # relative to `folder` unless absolute
        if dry_run:
            return IgnoreOutcome("would-add", path, exclude)
        text = read_text_if_exists(exclude) or ""
        exclude.parent.mkdir(parents=True, exist_ok=True)
        separator = "" if not text or text.endswith("\n") else "\n"
        atomic_write(exclude, f"{text}{separator}{PATTERN}\n")
        if _git(folder, "check-ignore", "-q", "--", str(path)).returncode != 0:
            return IgnoreOutcome("failed", path, exclude, f"git still does not ignore it after adding to {exclude}")
        return IgnoreOutcome("added", path, exclude)
    except FileNotFoundError:
        return IgnoreOutcome("failed", path, detail="git is not on PATH")
    except (OSError, subprocess.SubprocessError, UnicodeDecodeError) as exc:
        return IgnoreOutcome("failed", path, detail=str(exc))

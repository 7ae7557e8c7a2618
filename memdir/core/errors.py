"""Domain errors. The core raises these; only the CLI turns them into messages. Each class carries
the exit code of the command-line contract (DESIGN.md), as mkdocs' `Abort.code` does: 1 for a
request refused on its merits, 2 for usage, configuration and input memdir cannot work with."""

from __future__ import annotations

from pathlib import Path


class MemdirError(Exception):
    """An expected failure with a one-line message for the user."""

    exit_code = 2


def os_error_text(exc: OSError) -> str:
    """An I/O failure in one line that names the file: "Permission denied: /x/.archive/a.md"."""
    return f"{exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else "")


class ConfigError(MemdirError):
    """A config file that cannot be read or says something invalid."""


class FolderNotFound(MemdirError):
    """The memory folder does not exist (yet), or a file stands where it should be."""

    @classmethod
    def at(cls, path: Path, remedy: str, reason: str = "") -> FolderNotFound:
        """The error for `path`, which is not a folder: absent (then `remedy` says what to do), or
        something else in its place. `reason` says how that path was chosen (e.g. "given with --dir")."""
        where = f"memory folder {path}" + (f" ({reason})" if reason else "")
        if path.exists():
            return cls(f"{where} is not a folder; pass the folder that holds the memory files")
        return cls(f"{where} does not exist; {remedy}")


class MemoryNotFound(MemdirError):
    """No memory matches what the user named, or more than one does."""


class MemoryExists(MemdirError):
    """`add` refuses to overwrite a memory."""

    exit_code = 1


class MemoryChanged(MemdirError):
    """A memory changed on disk between reading it and writing it back."""

    exit_code = 1


class InvalidMemory(MemdirError):
    """Text that should become a memory does not parse or lacks what a memory needs."""


class IndexRefused(MemdirError):
    """MEMORY.md cannot be read or rewritten without losing what a person wrote."""

    exit_code = 1


class LockTimeout(MemdirError):
    """Another memdir process held the folder's lock for too long."""


class StateRefused(MemdirError):
    """A folder memdir keeps its own files in (`.memdir/`, `.archive/`, a folder inside them) that is
    a symlink or not a folder: what memdir writes or reads there could be outside the memory folder."""

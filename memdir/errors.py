"""Domain errors. The core raises these; only the CLI turns them into messages and exit codes."""

from __future__ import annotations


class MemdirError(Exception):
    """An expected failure with a one-line message for the user.

    `exit_code` follows the command-line contract: 1 for a check that failed or a request that
    was refused on its merits (a name that exists, an index that cannot fit), 2 for usage,
    configuration and input the tool cannot work with.
    """

    exit_code = 2


class ConfigError(MemdirError):
    """A config file that cannot be read or says something invalid."""


class FolderNotFound(MemdirError):
    """The memory folder does not exist (yet)."""


class MemoryNotFound(MemdirError):
    """No memory matches what the user named, or more than one does."""


class MemoryExists(MemdirError):
    """`add` refuses to overwrite a memory."""

    exit_code = 1


class InvalidMemory(MemdirError):
    """Text that should become a memory does not parse or lacks what a memory needs."""

    exit_code = 1


class IndexRefused(MemdirError):
    """MEMORY.md cannot be written without losing hand-written text."""

    exit_code = 1


class LockTimeout(MemdirError):
    """Another memdir process held the folder's lock for too long."""

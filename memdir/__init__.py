"""memdir: keep an AI agent's long-term memory as a healthy folder of typed markdown files.

>>> from memdir import MemoryDir, MemoryType, NewMemory
>>> folder = MemoryDir(".claude/memory")
>>> folder.add(NewMemory(MemoryType.FEEDBACK, "lint-before-commit", "Run npm run lint first"))
"""

from __future__ import annotations

from memdir.version import __version__  # a leaf: importing it imports nothing else

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (see below)
if TYPE_CHECKING:
    from typing import Any

    from memdir.core.config import Config
    from memdir.core.errors import MemdirError
    from memdir.core.index import Caps, IndexResult
    from memdir.core.model import Memory, MemoryType, NewMemory
    from memdir.folder import MemoryDir
    from memdir.integrations.tools import MemoryTools
    from memdir.read.context import Context, ContextFormat, render_context


# Every name is loaded on first use. The `memdir` command imports this package before its first
# instruction runs (the console script does `from memdir.cli import main`), and the command makes
# Ctrl-C exit quietly only from there: anything imported here would be imported unprotected.
_LAZY = {
    "Caps": "memdir.core.index",
    "Config": "memdir.core.config",
    "Context": "memdir.read.context",
    "ContextFormat": "memdir.read.context",
    "IndexResult": "memdir.core.index",
    "MemdirError": "memdir.core.errors",
    "Memory": "memdir.core.model",
    "MemoryDir": "memdir.folder",
    "MemoryTools": "memdir.integrations.tools",
    "MemoryType": "memdir.core.model",
    "NewMemory": "memdir.core.model",
    "render_context": "memdir.read.context",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Caps",
    "Config",
    "Context",
    "ContextFormat",
    "IndexResult",
    "MemdirError",
    "Memory",
    "MemoryDir",
    "MemoryTools",
    "MemoryType",
    "NewMemory",
    "__version__",
    "render_context",
]

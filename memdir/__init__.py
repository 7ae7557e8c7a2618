"""memdir: keep an AI agent's long-term memory as a healthy folder of typed markdown files.

>>> from memdir import MemoryDir, MemoryType, NewMemory
>>> folder = MemoryDir(".claude/memory")
>>> folder.add(NewMemory(MemoryType.FEEDBACK, "lint-before-commit", "Run npm run lint first"))
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (see below)
if TYPE_CHECKING:
    from typing import Any

    from memdir.config import Config
    from memdir.context import Context, ContextFormat
    from memdir.errors import MemdirError
    from memdir.index import Caps, IndexResult
    from memdir.memory_dir import MemoryDir
    from memdir.model import Memory, MemoryType, NewMemory
    from memdir.tools import MemoryTools


# Every name is loaded on first use. The `memdir` command imports this package before its first
# instruction runs (the console script does `from memdir.cli import main`), and the command makes
# Ctrl-C exit quietly only from there: anything imported here would be imported unprotected.
_LAZY = {
    "Caps": "memdir.index",
    "Config": "memdir.config",
    "Context": "memdir.context",
    "ContextFormat": "memdir.context",
    "IndexResult": "memdir.index",
    "MemdirError": "memdir.errors",
    "Memory": "memdir.model",
    "MemoryDir": "memdir.memory_dir",
    "MemoryTools": "memdir.tools",
    "MemoryType": "memdir.model",
    "NewMemory": "memdir.model",
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
]

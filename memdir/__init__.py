"""memdir: keep an AI agent's long-term memory as a healthy folder of typed markdown files.

>>> from memdir import MemoryDir, MemoryType, NewMemory
>>> folder = MemoryDir(".claude/memory")
>>> folder.add(NewMemory(MemoryType.FEEDBACK, "lint-before-commit", "Run npm run lint first"))
"""

from typing import TYPE_CHECKING, Any

from memdir.config import Config
from memdir.errors import MemdirError
from memdir.index import Caps, IndexResult
from memdir.memory_dir import MemoryDir
from memdir.model import Memory, MemoryType, NewMemory
from memdir.version import __version__

if TYPE_CHECKING:
    from memdir.context import Context, ContextFormat
    from memdir.tools import MemoryTools


# Loaded on first use: `memdir index` in a session-start hook imports this package and needs neither.
_LAZY = {"Context": "memdir.context", "ContextFormat": "memdir.context", "MemoryTools": "memdir.tools"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
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

"""memdir: keep an AI agent's long-term memory as a healthy folder of typed markdown files.

>>> from memdir import MemoryDir, MemoryType, NewMemory
>>> folder = MemoryDir(".claude/memory")
>>> folder.add(NewMemory(MemoryType.FEEDBACK, "lint-before-commit", "Run npm run lint first"))
"""

from memdir.config import Config
from memdir.errors import MemdirError
from memdir.index import Caps, IndexResult
from memdir.memory_dir import MemoryDir
from memdir.model import Memory, MemoryType, NewMemory

__version__ = "0.1.0"

__all__ = [
    "Caps",
    "Config",
    "IndexResult",
    "MemdirError",
    "Memory",
    "MemoryDir",
    "MemoryType",
    "NewMemory",
    "__version__",
]

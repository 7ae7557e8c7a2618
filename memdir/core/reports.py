"""The stable JSON shapes of what memdir reports, shared by the CLI's `--format json` and the MCP server
(memdir.integrations.mcp_server), so that a script and an agent read the same fields."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from memdir.core.index import IndexResult
from memdir.core.model import Memory
from memdir.core.store import FileProblem


def index_summary(result: IndexResult) -> dict[str, Any]:
    """An index run (`memdir index --format json`; also `add`, `edit`, `rm`, and the MCP `index` tool)."""
    return {
        "entries": len(result.entries),
        "lines": result.lines,
        "bytes": result.bytes,
        "hand_written_lines": result.hand_lines,
        "left_out": [
            {
                "path": left.memory.path,
                "reason": left.reason,
                "importance": left.memory.importance,
                "date": left.memory.last_changed.isoformat() if left.memory.last_changed else None,
            }
            for left in result.left_out
        ],
        "excluded": [{"path": e.memory.path, "reason": e.reason} for e in result.excluded],
        "withheld": [{"path": e.memory.path, "reason": e.reason} for e in result.withheld],
        "rewritten": result.rewritten,
        "linked_in_text": [memory.path for memory in result.linked],
        "dead_entries": result.dead,
        "dead_dropped": result.dead_dropped,
        "refused": result.refused,
    }


def memory_list(
    root: Path, memories: Sequence[Memory], problems: Sequence[FileProblem], indexed: Collection[str]
) -> dict[str, Any]:
    """The memories of a folder (`memdir list --format json`, the MCP `list_memories` tool).
    `indexed`: the paths MEMORY.md lists."""

    def day(memory: Memory, key: str) -> str | None:
        value = memory.date(key)
        return value.isoformat() if value is not None else None

    return {
        "folder": str(root),
        "memories": [
            {
                "name": m.name,
                "path": m.path,
                "type": m.raw_type,
                "description": m.description,
                "created": day(m, "created"),
                "updated": day(m, "updated"),
                "last_changed": m.last_changed.isoformat() if m.last_changed else None,
                "importance": m.importance,
                "status": m.status,
                "indexed": m.path in indexed,
            }
            for m in memories
        ],
        "problems": [{"path": p.path, "kind": p.kind, "message": p.message} for p in problems],
    }

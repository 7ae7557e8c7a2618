"""What `memdir index` does to the real folders in ../shared/corpus/real: the figures of
docs/real-folders.md's index table. Each folder is copied to a temporary folder first.

    python scripts/index_report.py [CORPUS]
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

from memdir.core.index import ENTRY_MAX, entry_target, split_lines
from memdir.folder import MemoryDir

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "real"


def main() -> int:
    corpus = Path(sys.argv[1]) if len(sys.argv) > 1 else CORPUS
    if not corpus.is_dir():
        print(f"no corpus at {corpus}")
        return 0
    total: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as scratch:
        for original in sorted(p for p in corpus.iterdir() if p.is_dir()):
            folder = Path(scratch) / original.name
            shutil.copytree(original, folder, symlinks=True, ignore=shutil.ignore_patterns(".memdir"))
            first = MemoryDir(folder, cache=False).write_index()
            text = (folder / "MEMORY.md").read_text(encoding="utf-8")
            again = MemoryDir(folder, cache=False).write_index()
            generated = {line for line in split_lines(text) if entry_target(line) is not None} - set(
                split_lines(first.previous or "")
            )
            total.update(
                folders=1,
                memories=len(first.inputs),
                unreadable=len(first.unreadable),
                entries=len(first.result.entries),
                linked_in_prose=len(first.result.linked),
                left_out=len(first.result.left_out),
                dead_kept=len(first.result.dead),
                dead_dropped=len(first.result.dead_dropped),
                replaced_lines=len(first.result.rewritten),
                generated_over_limit=sum(1 for line in generated if len(line) > ENTRY_MAX),
                not_idempotent=int(again.changed),
            )
    width = max(map(len, total))
    for key, value in total.items():
        print(f"{key:<{width}}  {value:,}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

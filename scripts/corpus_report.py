#!/usr/bin/env python3
"""Run `memdir lint` with every rule over the real memory folders in ../shared/corpus/real and count
findings per rule: how many, in how many folders. The table in docs/real-folders.md comes from here.

    python scripts/corpus_report.py [CORPUS] [--examples N]
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memdir import MemoryDir  # noqa: E402
from memdir.lint import RULES  # noqa: E402

DEFAULT = ROOT.parent / "shared" / "corpus" / "real"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--examples", type=int, default=0, help="print this many findings per rule")
    args = parser.parse_args()
    if not args.corpus.is_dir():
        print(f"corpus_report: no corpus at {args.corpus}", file=sys.stderr)
        return 2
    counts: Counter[str] = Counter()
    folders: defaultdict[str, set[str]] = defaultdict(set)
    examples: defaultdict[str, list[str]] = defaultdict(list)
    names = sorted(p for p in args.corpus.iterdir() if p.is_dir())
    memories = 0
    for folder in names:
        report = MemoryDir(folder, today=dt.date(2026, 11, 22)).lint(extend_select=["ALL"])
        memories += report.memories
        for f in report.findings:
            counts[f.code] += 1
            folders[f.code].add(folder.name)
            if len(examples[f.code]) < args.examples:
                examples[f.code].append(f"{folder.name}/{f.path}:{f.line or ''} {f.message}")
    print(f"{len(names)} folders, {memories} memories, today = 2026-11-22\n")
    print("| rule | severity | findings | folders |")
    print("|---|---|---|---|")
    for code, rule in sorted(RULES.items()):
        print(f"| {code} {rule.name} | {rule.severity.value} | {counts[code]} | {len(folders[code])} |")
    for code in sorted(examples):
        print(f"\n{code}:")
        for line in examples[code]:
            print(f"  {line[:200]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

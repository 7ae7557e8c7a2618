"""How the write path's same-topic zone (memdir.core.gauntlet.SAME_TOPIC_FLOOR) splits the labelled dev pairs.

Usage: python scripts/eval_same_topic.py [PATH]   (default: ../shared/eval/dev/pairs.jsonl)

For each candidate floor, and for the one memdir uses, counts the pairs of each gold label that the
gauntlet would skip as duplicates (`compare` says duplicate) and that it would send to the model's
`judge_contradiction` call (a possible contradiction by `compare`, or similarity at least the floor).
Contradictions that reach the judge are the point; compatible and unrelated pairs that reach it cost a
call each. Says so and exits 0 when the data set is not there.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memdir.core.gauntlet import SAME_TOPIC_FLOOR  # noqa: E402
from memdir.text.similarity import MemoryText, compare, similarity  # noqa: E402

DEFAULT = ROOT.parent / "shared" / "eval" / "dev" / "pairs.jsonl"
GOLD = ("duplicate", "contradiction", "compatible", "unrelated")
FLOORS = (0.2, 0.25, 0.3, 0.35, 0.4)


def memory(key: str, fields: dict[str, str]) -> MemoryText:
    return MemoryText(key, fields["name"], fields["description"], fields["body"], fields.get("type"))


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else DEFAULT
    if not path.is_file():
        print(f"{path} not found; nothing to evaluate")
        return 0
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    scored = []
    for row in rows:
        a, b = memory("a", row["a"]), memory("b", row["b"])
        verdict = compare(a, b)
        scored.append((row["label"], verdict.label if verdict else None, similarity(a, b)))
    totals = Counter(label for label, _, _ in scored)
    skipped = Counter(label for label, verdict, _ in scored if verdict == "duplicate")
    print(f"{path}: {len(rows)} pairs, {dict(totals)}")
    print("skipped as duplicates (compare): " + ", ".join(f"{g} {skipped[g]}/{totals[g]}" for g in GOLD))
    print("\nsent to judge_contradiction, by floor:")
    print("  floor  " + "  ".join(f"{g:>13}" for g in GOLD))
    for floor in sorted({*FLOORS, SAME_TOPIC_FLOOR}):
        judged = Counter(
            label
            for label, verdict, score in scored
            if verdict == "contradiction" or (verdict != "duplicate" and score >= floor)
        )
        mark = "  <- SAME_TOPIC_FLOOR" if floor == SAME_TOPIC_FLOOR else ""
        cells = "  ".join(f"{judged[g]:>6}/{totals[g]:<6}" for g in GOLD)
        print(f"  {floor:.2f}   {cells}{mark}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

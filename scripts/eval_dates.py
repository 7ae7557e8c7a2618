"""Score memdir.text.dates against labelled sentences: sentence accuracy, span precision and recall.

Usage: python scripts/eval_dates.py [PATH]   (default: ../shared/eval/dev/dates.jsonl)
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memdir.text.dates import absolutize  # noqa: E402

DEFAULT = ROOT.parent / "shared" / "eval" / "dev" / "dates.jsonl"


def main(argv: list[str]) -> int:
    path = Path(argv[1]) if len(argv) > 1 else DEFAULT
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    right = true_pos = n_pred = n_gold = 0
    misses: list[str] = []
    for row in rows:
        got_text, spans = absolutize(row["text"], date.fromisoformat(row["anchor"]))
        got = Counter((s.phrase, s.resolved.isoformat()) for s in spans)
        gold = Counter((phrase, iso) for phrase, iso in row["spans"])
        true_pos += sum((got & gold).values())
        n_pred += sum(got.values())
        n_gold += sum(gold.values())
        if got_text == row["expected"] and got == gold:
            right += 1
        else:
            misses.append(
                f"- anchor {row['anchor']}: {row['text']}\n"
                f"    expected: {row['expected']}\n"
                f"    got:      {got_text}\n"
                f"    spans expected {sorted(gold.elements())}, got {sorted(got.elements())}"
                + (f"\n    note: {row['note']}" if row.get("note") else "")
            )
    precision = true_pos / n_pred if n_pred else 1.0
    recall = true_pos / n_gold if n_gold else 1.0
    print(f"{path}")
    print(f"sentence accuracy: {right}/{len(rows)} = {right / max(len(rows), 1):.3f}")
    print(f"span precision:    {true_pos}/{n_pred} = {precision:.3f}")
    print(f"span recall:       {true_pos}/{n_gold} = {recall:.3f}")
    print(f"misses: {len(misses)}")
    for miss in misses:
        print(miss)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

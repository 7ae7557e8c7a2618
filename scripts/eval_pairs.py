"""Score memdir.core.similarity on labelled memory pairs against a word-overlap baseline, and time find_pairs.

Usage: python scripts/eval_pairs.py [PATH]   (default: ../shared/eval/dev/pairs.jsonl)

Prints precision and recall per label (duplicate, contradiction) and a confusion matrix for `compare`
and for a plain word-overlap baseline (Jaccard over lower-cased words of name, description and body,
at its best-F1 threshold), then counts the pairs the same thresholds flag in the real folders of
../shared/corpus/real/ (per 1,000 memories, each pair shown), then times `find_pairs` on generated
folders of 1,000 and 10,000 memories.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memdir.core.similarity import MemoryText, PairVerdict, compare, find_pairs, similarity  # noqa: E402
from scripts.synthetic import synthetic_folder  # noqa: E402

DEFAULT = ROOT.parent / "shared" / "eval" / "dev" / "pairs.jsonl"
GOLD = ("duplicate", "contradiction", "compatible", "unrelated")
PREDICTED = ("duplicate", "contradiction", "none")


def memory(key: str, fields: dict[str, str]) -> MemoryText:
    return MemoryText(key, fields["name"], fields["description"], fields["body"], fields.get("type"))


# --- scoring ---------------------------------------------------------------------------------------


def words(fields: dict[str, str]) -> set[str]:
    return set(re.findall(r"\w+", f"{fields['name']} {fields['description']} {fields['body']}".lower()))


def jaccard(a: dict[str, str], b: dict[str, str]) -> float:
    wa, wb = words(a), words(b)
    return len(wa & wb) / len(wa | wb) if wa | wb else 0.0


def best_threshold(scores: Sequence[float], gold: Sequence[str]) -> float:
    """The overlap threshold with the best duplicate F1 (the baseline at its best)."""

    def f1(threshold: float) -> float:
        tp = sum(s >= threshold and g == "duplicate" for s, g in zip(scores, gold, strict=True))
        predicted = sum(s >= threshold for s in scores)
        actual = gold.count("duplicate")
        return 2 * tp / (predicted + actual) if predicted + actual else 0.0

    return max(sorted(set(scores)), key=f1)


def table(title: str, gold: Sequence[str], predicted: Sequence[str]) -> None:
    confusion = Counter(zip(gold, predicted, strict=True))
    print(f"\n{title}")
    print(f"  {'label':<14} {'precision':>9} {'recall':>7} {'tp':>4} {'flagged':>8} {'gold':>5}")
    for label in ("duplicate", "contradiction"):
        tp = confusion[label, label]
        flagged = sum(n for (_, p), n in confusion.items() if p == label)
        actual = sum(n for (g, _), n in confusion.items() if g == label)
        precision = f"{tp / flagged:.3f}" if flagged else "-"  # nothing flagged: undefined
        recall = f"{tp / actual:.3f}" if actual else "-"
        print(f"  {label:<14} {precision:>9} {recall:>7} {tp:>4} {flagged:>8} {actual:>5}")
    print("  " + "confusion: rows gold, columns predicted".ljust(41) + "".join(f"{p:>14}" for p in PREDICTED))
    for g in GOLD:
        print(f"  {g:<41}" + "".join(f"{confusion[g, p]:>14}" for p in PREDICTED))


def evaluate(path: Path) -> None:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    gold = [row["label"] for row in rows]
    ours: list[str] = []
    misses: list[str] = []
    for row in rows:
        a, b = memory("a", row["a"]), memory("b", row["b"])
        verdict = compare(a, b)
        label = verdict.label if verdict else "none"
        ours.append(label)
        if label != row["label"] and not (label == "none" and row["label"] in ("compatible", "unrelated")):
            why = f"{verdict.score:.2f} {verdict.reason}" if verdict else f"{similarity(a, b):.2f}"
            misses.append(f"  {row['id']} ({row['difficulty']}, {row['lang']}) {row['label']} -> {label} {why}")
    overlap = [jaccard(row["a"], row["b"]) for row in rows]
    threshold = best_threshold(overlap, gold)
    baseline = ["duplicate" if s >= threshold else "none" for s in overlap]
    print(f"{path}: {len(rows)} pairs, {Counter(gold)}")
    table("memdir.core.similarity.compare", gold, ours)
    table(f"baseline: word-overlap Jaccard >= {threshold:.3f} (its best duplicate F1)", gold, baseline)
    print(f"\nmisclassified by compare ({len(misses)}; unrelated/compatible left unflagged are not listed):")
    print("\n".join(misses))


# --- timing on generated folders -------------------------------------------------------------------


def time_find_pairs(sizes: Sequence[int], runs: int = 5) -> None:
    """Wall-clock time of find_pairs: the first run in this process (what `memdir lint` pays, with
    empty caches) and the median of `runs` more."""
    print(f"\nfind_pairs on generated folders (first run, then median/min/max of {runs} more):")
    for size in sizes:
        items = synthetic_folder(size)
        first, pairs = _timed(items)
        seconds = sorted(_timed(items)[0] for _ in range(runs))
        kinds = Counter(pair.label for pair in pairs)
        print(
            f"  {size:>6,} memories: first {first:.3f} s, median {seconds[len(seconds) // 2]:.3f} s "
            f"(min {seconds[0]:.3f}, max {seconds[-1]:.3f}); {kinds['duplicate']} duplicates "
            f"({size // 100} planted), {kinds['contradiction']} possible contradictions"
        )


def _timed(items: Sequence[MemoryText]) -> tuple[float, list[PairVerdict]]:
    start = time.perf_counter()
    pairs = find_pairs(items)
    return time.perf_counter() - start, pairs


# --- the same thresholds on the real folders ----------------------------------------------------------

REAL = ROOT.parent / "shared" / "corpus" / "real"


def flag_real(corpus: Path = REAL) -> None:
    """The pairs find_pairs flags in each real folder, per 1,000 memories, each shown as a user would
    read it (the two descriptions): the thresholds are not re-fitted, and a false "merge them" is a defect."""
    from memdir.folder import MemoryDir  # a folder is read as memdir reads it; nothing is written

    total, flagged = 0, []
    for folder in sorted(p for p in corpus.iterdir() if p.is_dir()):
        memories = MemoryDir(folder, cache=False).list()
        total += len(memories)
        by_path = {m.path: m for m in memories}
        items = [MemoryText(m.path, m.name, m.description, m.body, m.type.value if m.type else None) for m in memories]
        flagged += [(folder.name, verdict, by_path) for verdict in find_pairs(items)]
    kinds = Counter(verdict.label for _, verdict, _ in flagged)
    rates = ", ".join(f"{kinds[k] * 1000 / max(total, 1):.1f} {k}" for k in ("duplicate", "contradiction"))
    print(f"\n{corpus}: {total} memories; per 1,000 memories: {rates}")
    for name, verdict, by_path in flagged:
        a, b = by_path[verdict.a].description, by_path[verdict.b].description
        print(f"  {verdict.label} ({name}, {verdict.score:.2f}): {a[:60]!r} / {b[:60]!r}")


def main(argv: list[str]) -> int:
    path = Path(argv[1]) if len(argv) > 1 else DEFAULT
    if not path.is_file():
        print(f"eval_pairs: no labelled pairs at {path} (pass the path to a pairs.jsonl)", file=sys.stderr)
        return 2
    evaluate(path)
    if REAL.is_dir():
        flag_real()
    time_find_pairs((1_000, 10_000))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

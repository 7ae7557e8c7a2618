"""Score memdir.similarity on labelled memory pairs against a word-overlap baseline, and time find_pairs.

Usage: python scripts/eval_pairs.py [PATH]   (default: ../shared/eval/dev/pairs.jsonl)

Prints precision and recall per label (duplicate, contradiction) and a confusion matrix for `compare`
and for a plain word-overlap baseline (Jaccard over lower-cased words of name, description and body,
at its best-F1 threshold), then times `find_pairs` on generated folders of 1,000 and 10,000 memories.
"""

from __future__ import annotations

import itertools
import json
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memdir.similarity import MemoryText, PairVerdict, compare, find_pairs, similarity  # noqa: E402

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
    table("memdir.similarity.compare", gold, ours)
    table(f"baseline: word-overlap Jaccard >= {threshold:.3f} (its best duplicate F1)", gold, baseline)
    print(f"\nmisclassified by compare ({len(misses)}; unrelated/compatible left unflagged are not listed):")
    print("\n".join(misses))


# --- timing on generated folders -------------------------------------------------------------------

# A generated folder stands in for a real one: the four types with their usual shapes (feedback and
# project memories carry **Why:** and **How to apply:** lines), sentences of everyday words drawn with
# Zipf frequencies from a large vocabulary (real folders are full of rare names and identifiers, which
# is what lets the index tell memories apart), numbers and dates, and 1% planted reworded duplicates.
_EVERYDAY_TEXT = """
account alert api approval archive audit backup bank batch benchmark billing blog board bot branch budget
build bundle cache calendar camera campaign card chapter chart checklist client cluster code colour column
commit component config console contract cost customer dashboard data database deadline demo deploy design
device diagram digest doc draft driver editor email endpoint engine error event export feature feed field file
filter firmware font form format forecast funnel gateway grant graph guide handler header hotfix image import
incident index input install interview invoice issue job key label latency layout lead library license limit
log loop manual map market menu merge metric migration mobile model module monitor newsletter node note
notebook order owner package page palette parser partner patch payment permission phone pipeline plan player
plugin policy port post preview price printer profile prompt proposal prototype query queue quota receipt
record region release report repo request review roadmap role route runbook runner sample schedule schema
screen script sdk search secret sensor server service session setting shader sheet shipment signal sketch slide
snapshot source spec sprint staging storage store story stream style supplier survey sync table tag task tax
team template test ticket timeline token tool trace tracker training transcript upload user vendor version
video volunteer warehouse webhook widget wiki worker workflow use keep prefer avoid check run send store pin
track ship write log split nightly internal shared legacy public private weekly monthly local remote main
"""
_GLUE = ("the", "the", "the", "a", "to", "to", "for", "in", "in", "with", "and", "and", "on", "of", "before", "when")
_SYLLABLES = "ka ri mo ve lan tor qui sel bra dun fen gal hol ix jor kep lum nar os pim rud sav tel umb vor wex yal zin"


def _vocabulary(rng: random.Random, size: int) -> list[str]:
    """Everyday words first (the most frequent), then invented words, names and identifiers."""
    syllables = _SYLLABLES.split()
    invented: set[str] = set()
    while len(invented) < size:
        word = "".join(rng.choice(syllables) for _ in range(rng.randint(2, 4)))
        shape = rng.random()
        if shape < 0.15:
            word = word.capitalize()
        elif shape < 0.22:
            word = f"{word}-{rng.choice(syllables)}{rng.randint(1, 99)}"
        invented.add(word)
    return _EVERYDAY_TEXT.split() + sorted(invented)


def _sentence(rng: random.Random, vocabulary: Sequence[str], weights: Sequence[float], length: int) -> str:
    words = rng.choices(vocabulary, cum_weights=weights, k=length)
    out = [w if rng.random() < 0.6 else f"{rng.choice(_GLUE)} {w}" for w in words]
    if rng.random() < 0.4:
        number = rng.choice((str(rng.randint(2, 500)), f"{rng.randint(1, 9)}.{rng.randint(0, 9)}"))
        out.insert(rng.randrange(len(out)), number)
    if rng.random() < 0.15:
        out.append(f"by {rng.choice((2025, 2026))}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}")
    return " ".join(out)


def _memory(rng: random.Random, key: str, vocabulary: Sequence[str], weights: Sequence[float]) -> MemoryText:
    kind = rng.choice(("user", "feedback", "project", "reference"))
    description = _sentence(rng, vocabulary, weights, rng.randint(5, 10)).capitalize()
    sentences = [_sentence(rng, vocabulary, weights, rng.randint(6, 14)).capitalize() + "." for _ in range(2)]
    body = " ".join(sentences)
    if kind in ("feedback", "project"):
        why = _sentence(rng, vocabulary, weights, rng.randint(5, 10))
        how = _sentence(rng, vocabulary, weights, rng.randint(5, 10))
        body += f"\n\n**Why:** {why}.\n**How to apply:** {how}."
    name = "-".join(re.findall(r"[a-z0-9]+", description.lower())[:4])
    return MemoryText(key, name, description, body, kind)


def _reworded(rng: random.Random, original: MemoryText, key: str) -> MemoryText:
    """The same memory said again: sentences reordered, a few words dropped, the facts kept."""
    sentences = re.split(r"(?<=[.;])\s+", original.body)
    rng.shuffle(sentences)
    body = " ".join(w for w in " ".join(sentences).split() if rng.random() > 0.1 or w[0].isdigit())
    return MemoryText(key, original.name + "-again", original.description, body, original.type)


def synthetic_folder(size: int, seed: int = 7) -> list[MemoryText]:
    """`size` generated memories, the same ones for the same seed."""
    rng = random.Random(seed)
    vocabulary = _vocabulary(rng, 20_000)
    # Zipf-Mandelbrot frequencies: the flattened head is what content words look like once stopwords are gone.
    weights = list(itertools.accumulate(1 / (rank + 100) for rank in range(len(vocabulary))))
    items = [_memory(rng, f"m{i:05d}.md", vocabulary, weights) for i in range(size)]
    for i in rng.sample(range(size), max(1, size // 100)):
        items[i] = _reworded(rng, items[i - 1], f"m{i:05d}.md")
    return items


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


def main(argv: list[str]) -> int:
    path = Path(argv[1]) if len(argv) > 1 else DEFAULT
    if not path.is_file():
        print(f"eval_pairs: no labelled pairs at {path} (pass the path to a pairs.jsonl)", file=sys.stderr)
        return 2
    evaluate(path)
    time_find_pairs((1_000, 10_000))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

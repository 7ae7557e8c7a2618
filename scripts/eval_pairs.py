"""Score memdir.text.similarity on labelled memory pairs against a word-overlap baseline, and time find_pairs.

Usage: python scripts/eval_pairs.py [PATH] [--cv]   (default: ../shared/eval/dev/pairs.jsonl)

Prints precision and recall per label (duplicate, contradiction) and a confusion matrix for `compare`
and for a plain word-overlap baseline (Jaccard over lower-cased words of name, description and body,
at its best-F1 threshold). Each misclassified pair is listed with the two parts of its score (the
head's and the whole memory's cosine), a missed duplicate with why the facts rule did not take it
(`facts_rule_why`), and whether a folder scan would even compare it: `find_pairs`
scores only candidate pairs (two shared rare words of name and description), so the dev pairs are
also scanned as one folder of their distinct memories, which shows the candidates and what the scan
flags across pairs (memories of different pairs, unlabelled: read them). Then it counts the pairs the
same thresholds flag in the real folders of ../shared/corpus/real/ (per 1,000 memories, each pair
shown), by the folder scan and by `compare` over every pair (which adds the duplicates whose specific
facts agree, a check the scan leaves out), then times `find_pairs` on generated folders of 1,000 and
10,000 memories.

`--cv` cross-validates instead: the pairs are split in two halves (`halves`: each label and difficulty
shuffled with a fixed seed and dealt alternately), and each half is scored with the shipped thresholds,
with the thresholds tuned on the other half (the best duplicate recall at a precision of at least 0.95
over a grid of DUPLICATE_SCORE and the facts rule's word floor: `TUNING`), without the facts rule, and
beside the word-overlap baseline at the threshold tuned the same way on the other half. A change is judged
by the half it was not tuned on, both ways. The thresholds tuned on a half itself are shown too, fitted
to the pairs they are scored on: an upper bound on what any choice of thresholds can do there.
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
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memdir.text import similarity as _similarity  # noqa: E402
from memdir.text.similarity import MemoryText, PairVerdict, compare, find_pairs, similarity  # noqa: E402
from scripts.synthetic import synthetic_folder  # noqa: E402

DEFAULT = ROOT.parent / "shared" / "eval" / "dev" / "pairs.jsonl"
GOLD = ("duplicate", "contradiction", "compatible", "unrelated")
PREDICTED = ("duplicate", "contradiction", "none")
PRECISION = 0.95  # --cv tunes for the best duplicate recall at this precision or more
CV_SEED = 0
# The thresholds --cv tunes on one half: module constant of memdir.text.similarity -> values tried.
TUNING: dict[str, tuple[float, ...]] = {
    "DUPLICATE_SCORE": (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6),
    "_FACTS_SCORE": (0.05, 0.1, 0.15, 0.2, 1.0),  # 1.0: the facts rule never applies
}


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


def score_parts(a: MemoryText, b: MemoryText) -> str:
    """The two views `similarity` averages: the cosine of the heads (name + description) and of the
    whole memories (before the factor for memories of different types)."""
    pa, pb = _similarity._Profile.of(a), _similarity._Profile.of(b)
    head = _similarity._cosine_of(len(set(pa.head) & set(pb.head)), len(pa.head), len(pb.head))
    return f"head {head:.2f}, whole {_similarity._cosine(pa.terms, pb.terms):.2f}"


def facts_rule_why(a: MemoryText, b: MemoryText) -> str:
    """Why `compare`'s facts rule (`_same_facts`) does not call a pair a duplicate: its first condition
    that fails, checked in its own order, or "it applies"."""
    pa, pb = _similarity._Profile.of(a), _similarity._Profile.of(b)
    if a.type != b.type:
        return f"types differ ({a.type}, {b.type})"
    if (score := _similarity._score(pa, pb)) >= _similarity.DUPLICATE_SCORE:
        return f"scores {score:.2f}, at the bar or above: the score decides, not the facts rule"
    if (words := _similarity._word_score(pa, pb)) < _similarity._FACTS_SCORE:
        return f"words agree too little ({words:.3f} < {_similarity._FACTS_SCORE:g})"
    for mine, theirs, side in ((pa, pb, "b"), (pb, pa, "a")):
        if _similarity._specific_facts(mine, theirs) is None:
            facts = _similarity._specific_facts(mine, mine) or []
            return f"{side} lacks one of the other's specific facts ({', '.join(facts)})"
    if not _similarity._specific_facts(pa, pb):
        return "a states no specific fact"
    if pa.negated != pb.negated:
        return "one says no or never, the other does not"
    if differences := _similarity._differences(pa, pb):
        return "; ".join(differences)
    return "it applies"


def as_one_folder(rows: Sequence[dict[str, Any]]) -> tuple[list[MemoryText], list[tuple[str, str]]]:
    """The distinct memories of the pairs, as one folder (the same memory text recurs across pairs),
    and each row's pair of keys in it."""
    keys: dict[tuple[str, ...], str] = {}
    items: list[MemoryText] = []
    pairs: list[tuple[str, str]] = []
    for row in rows:
        pair = []
        for side in "ab":
            fields = row[side]
            text = (fields["name"], fields["description"], fields["body"], fields.get("type") or "")
            if text not in keys:
                keys[text] = f"m{len(items):03d}"
                items.append(memory(keys[text], fields))
            pair.append(keys[text])
        pairs.append((pair[0], pair[1]))
    return items, pairs


def scanned(items: Sequence[MemoryText]) -> tuple[set[tuple[str, str]], list[PairVerdict]]:
    """The pairs `find_pairs` scores in `items` (its candidates: it calls `_verdict` once for each)
    and what it flags."""
    seen: set[tuple[str, str]] = set()
    verdict = _similarity._verdict

    def counting(a: Any, b: Any, whole: float | None = None) -> PairVerdict | None:
        seen.add((a.memory.key, b.memory.key))
        return verdict(a, b, whole)

    _similarity._verdict = counting
    try:
        flagged = find_pairs(items)
    finally:
        _similarity._verdict = verdict
    if any((v.a, v.b) not in seen for v in flagged):  # find_pairs no longer calls _verdict by its name
        raise RuntimeError("eval_pairs: cannot see find_pairs' candidates; update scanned()")
    return seen, flagged


def evaluate(path: Path) -> None:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    gold = [row["label"] for row in rows]
    folder, folder_pairs = as_one_folder(rows)
    candidates, flagged = scanned(folder)
    ours: list[str] = []
    misses: list[str] = []
    for row, (ka, kb) in zip(rows, folder_pairs, strict=True):
        a, b = memory("a", row["a"]), memory("b", row["b"])
        verdict = compare(a, b)
        label = verdict.label if verdict else "none"
        ours.append(label)
        if label != row["label"] and not (label == "none" and row["label"] in ("compatible", "unrelated")):
            why = f"{verdict.score:.2f} {verdict.reason}" if verdict else f"{similarity(a, b):.2f}"
            scan = "" if (ka, kb) in candidates or (kb, ka) in candidates else "; not a candidate"
            misses.append(
                f"  {row['id']} ({row['difficulty']}, {row['lang']}) {row['label']} -> {label} {why} "
                f"({score_parts(a, b)}{scan})"
            )
            if row["label"] == "duplicate":
                misses.append(f"      facts rule: {facts_rule_why(a, b)}")
    overlap = [jaccard(row["a"], row["b"]) for row in rows]
    threshold = best_threshold(overlap, gold)
    baseline = ["duplicate" if s >= threshold else "none" for s in overlap]
    print(f"{path}: {len(rows)} pairs, {Counter(gold)}")
    table("memdir.text.similarity.compare", gold, ours)
    table(f"baseline: word-overlap Jaccard >= {threshold:.3f} (its best duplicate F1)", gold, baseline)
    print(f"\nmisclassified by compare ({len(misses)}; unrelated/compatible left unflagged are not listed):")
    print("\n".join(misses))
    scan_report(rows, folder, folder_pairs, candidates, flagged)


def scan_report(
    rows: Sequence[dict[str, Any]],
    folder: Sequence[MemoryText],
    folder_pairs: Sequence[tuple[str, str]],
    candidates: set[tuple[str, str]],
    flagged: Sequence[PairVerdict],
) -> None:
    """What the folder scan (lint D002/D003) makes of the dev pairs as one folder."""
    labelled = {frozenset(pair): row for pair, row in zip(folder_pairs, rows, strict=True)}
    said = {frozenset((v.a, v.b)): v.label for v in flagged}
    actual, met, right = Counter[str](), Counter[str](), Counter[str]()
    for pair, row in zip(folder_pairs, rows, strict=True):
        actual[row["label"]] += 1
        met[row["label"]] += pair in candidates or pair[::-1] in candidates
        right[row["label"]] += said.get(frozenset(pair)) == row["label"]
    print(
        f"\nthe dev pairs as one folder of {len(folder)} memories: find_pairs compares {len(candidates)} pairs; "
        f"it meets {met['duplicate']}/{actual['duplicate']} labelled duplicates and "
        f"{met['contradiction']}/{actual['contradiction']} contradictions, and labels {right['duplicate']} and "
        f"{right['contradiction']} of them right"
    )
    text = {m.key: m.description for m in folder}
    across = [v for v in flagged if frozenset((v.a, v.b)) not in labelled]
    print(f"flagged across pairs (unlabelled, {len(across)}):")
    for v in across:
        print(f"  {v.label} ({v.score:.2f}): {text[v.a][:60]!r} / {text[v.b][:60]!r}")


# --- cross-validation -------------------------------------------------------------------------------


def halves(rows: Sequence[dict[str, Any]], seed: int = CV_SEED) -> dict[str, list[dict[str, Any]]]:
    """The pairs in two halves, A and B: each (label, difficulty) group shuffled with `seed` and dealt
    alternately, so both halves hold about as many of each."""
    out: dict[str, list[dict[str, Any]]] = {"A": [], "B": []}
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["label"], row["difficulty"]), []).append(row)
    dealt = 0
    for key in sorted(groups):
        group = groups[key]
        random.Random(seed).shuffle(group)
        for row in group:
            out["AB"[dealt % 2]].append(row)
            dealt += 1
    return out


def duplicate_scores(gold: Sequence[str], predicted: Sequence[str]) -> tuple[float, float, int]:
    """(recall, precision, flagged) of the duplicate label; precision 1.0 when nothing is flagged."""
    tp = sum(g == p == "duplicate" for g, p in zip(gold, predicted, strict=True))
    flagged = predicted.count("duplicate")
    return tp / max(gold.count("duplicate"), 1), tp / flagged if flagged else 1.0, flagged


def with_thresholds(rows: Sequence[dict[str, Any]], thresholds: dict[str, float]) -> list[str]:
    """compare's labels for `rows` with the module's thresholds set to `thresholds` for the call."""
    saved = {name: getattr(_similarity, name) for name in thresholds}
    try:
        for name, value in thresholds.items():
            setattr(_similarity, name, value)
        return [v.label if (v := compare(memory("a", r["a"]), memory("b", r["b"]))) else "none" for r in rows]
    finally:
        for name, value in saved.items():
            setattr(_similarity, name, value)


def tune(rows: Sequence[dict[str, Any]]) -> dict[str, float]:
    """The TUNING thresholds with the best duplicate recall on `rows` at precision >= PRECISION (ties:
    the first in the grid); the shipped ones when none reaches it."""
    gold = [r["label"] for r in rows]
    best: tuple[float, dict[str, float]] | None = None
    for values in itertools.product(*TUNING.values()):
        thresholds = dict(zip(TUNING, values, strict=True))
        recall, precision, _ = duplicate_scores(gold, with_thresholds(rows, thresholds))
        if precision >= PRECISION and (best is None or recall > best[0]):
            best = (recall, thresholds)
    return best[1] if best else {name: getattr(_similarity, name) for name in TUNING}


def overlap_threshold(rows: Sequence[dict[str, Any]]) -> float:
    """The word-overlap threshold with the best duplicate recall on `rows` at precision >= PRECISION."""
    scores = [jaccard(r["a"], r["b"]) for r in rows]
    gold = [r["label"] for r in rows]

    def precision(threshold: float) -> float:
        return duplicate_scores(gold, ["duplicate" if s >= threshold else "none" for s in scores])[1]

    fitting = [t for t in sorted(set(scores)) if precision(t) >= PRECISION]
    return fitting[0] if fitting else max(scores) + 1e-9


def cross_validate(rows: Sequence[dict[str, Any]]) -> None:
    split = halves(rows)
    shipped = {name: getattr(_similarity, name) for name in TUNING}
    print(f"cross-validation: two halves of {len(split['A'])} and {len(split['B'])} pairs (seed {CV_SEED}); "
          f"duplicates: recall at precision")  # fmt: skip

    def line(label: str, gold: Sequence[str], predicted: Sequence[str]) -> None:
        recall, precision, flagged = duplicate_scores(gold, predicted)
        print(f"    {label:<64} {recall:.2f} at {precision:.3f} ({flagged} flagged)")

    for half, other in (("A", "B"), ("B", "A")):
        part, gold = split[half], [r["label"] for r in split[half]]
        print(f"  half {half} ({gold.count('duplicate')} duplicates)")
        line(f"compare, shipped ({_show_thresholds(shipped)})", gold, with_thresholds(part, shipped))
        tuned = tune(split[other])
        line(f"compare, tuned on half {other} ({_show_thresholds(tuned)})", gold, with_thresholds(part, tuned))
        bound = tune(part)
        line(f"compare, tuned on half {half} itself, a bound ({_show_thresholds(bound)})", gold,
             with_thresholds(part, bound))  # fmt: skip
        line("compare without the facts rule", gold, with_thresholds(part, shipped | {"_FACTS_SCORE": 1.0}))
        threshold = overlap_threshold(split[other])
        scores = [jaccard(r["a"], r["b"]) for r in part]
        line(f"word overlap >= {threshold:.3f} (tuned on half {other})", gold,
             ["duplicate" if s >= threshold else "none" for s in scores])  # fmt: skip


def _show_thresholds(thresholds: dict[str, float]) -> str:
    return ", ".join(f"{name.strip('_').lower()} {value:g}" for name, value in thresholds.items())


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
    """The pairs find_pairs flags in each real folder (lint's view), and those `compare` flags among all
    of a folder's pairs (the write path's view: a new memory meets every neighbour), per 1,000 memories,
    each shown as a user would read it (the two descriptions): the thresholds are not re-fitted, and a
    false "merge them" is a defect."""
    from memdir.folder import MemoryDir  # a folder is read as memdir reads it; nothing is written

    total, flagged, compared = 0, [], []
    for folder in sorted(p for p in corpus.iterdir() if p.is_dir()):
        memories = MemoryDir(folder, cache=False).list()
        total += len(memories)
        by_path = {m.path: m for m in memories}
        items = [MemoryText(m.path, m.name, m.description, m.body, m.type.value if m.type else None) for m in memories]
        flagged += [(folder.name, verdict, by_path) for verdict in find_pairs(items)]
        pairs = itertools.combinations(items, 2)
        compared += [(folder.name, verdict, by_path) for a, b in pairs if (verdict := compare(a, b)) is not None]
    for title, found in (("find_pairs (lint)", flagged), ("compare, every pair (the write path)", compared)):
        kinds = Counter(verdict.label for _, verdict, _ in found)
        rates = ", ".join(f"{kinds[k] * 1000 / max(total, 1):.1f} {k}" for k in ("duplicate", "contradiction"))
        print(f"\n{corpus}: {total} memories; {title}, per 1,000 memories: {rates}")
        for name, verdict, by_path in found:
            a, b = by_path[verdict.a].description, by_path[verdict.b].description
            print(f"  {verdict.label} ({name}, {verdict.score:.2f}): {a[:60]!r} / {b[:60]!r}; {verdict.reason[:80]}")


def main(argv: list[str]) -> int:
    cv = "--cv" in argv
    paths = [a for a in argv[1:] if a != "--cv"]
    path = Path(paths[0]) if paths else DEFAULT
    if not path.is_file():
        print(f"eval_pairs: no labelled pairs at {path} (pass the path to a pairs.jsonl)", file=sys.stderr)
        return 2
    if cv:
        cross_validate([json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()])
        return 0
    evaluate(path)
    if REAL.is_dir():
        flag_real()
    time_find_pairs((1_000, 10_000))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

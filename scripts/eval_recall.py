"""Score `memdir recall` on the labelled dev queries beside a plain BM25 baseline, and time it.

Usage: python scripts/eval_recall.py [DIR] [--no-timings] [--misses] [--cv] [--half A|B]
(default DIR: ../shared/eval/dev/recall/)

DIR holds memories.jsonl (id, name, description, type, body, importance, created, superseded,
superseded_by) and queries.jsonl (id, query, relevant: memory ids, note). The memories are written as a
real memory folder in a temporary directory (a superseded one gets `status: superseded` and
`superseded_by: <file of its successor>`), "today" is the day after the newest memory, and every query
goes through `memdir.read.recall` exactly as the CLI runs it, with the default settings.

Metrics, over the top 5 each system returns (a system may return fewer, or nothing):
- recall@5: per query with relevant memories, the share of them returned; averaged over those queries.
- precision@5: relevant returned / returned, over all queries with relevant memories (micro-average:
  a system that returns nothing for a query is not rewarded or punished there).
- false injection: the share of queries with no relevant memory for which anything is returned.

The baseline is plain Okapi BM25 (k1 1.2, b 0.75) over lower-cased words of name, description and body,
with the same exclusions (superseded memories are never returned), at no score floor and at the lowest
floor that keeps its false injection at or under 10%. Both systems are shown at several gates, and
memdir's without each of its parts, so the trade-off is visible. `--misses` lists, for every task that
misses a relevant memory, where each missed memory ranks with no query gate and what it matched. Then
`memdir recall` is timed as a fresh process on generated folders of 1,000 and 10,000 memories
(scripts/synthetic.py).

`--cv` cross-validates instead: the tasks are split in two halves (`halves`: shuffled with a fixed
seed, answerable and no-answer tasks apart, so each half has 24 and 6), and each half is scored with the
default settings, with the settings tuned on the other half (the best recall@5 with false injection at
most 10% over a grid of gate, gate-chance and min-relevance: `TUNING`), and beside plain BM25 at the
floor fitted on the other half. A change is judged by what it does on the half it was not tuned on, both
ways. Two more rows per half bound what the gate's settings can do there: the ranking alone (no query
gate: false injection is then not held) and the settings tuned on the half itself (fitted to the tasks
they are scored on, so an upper bound, not a result). `--half A` (or `B`) scores only that half, with
the default settings and BM25 at its floor fitted on the other half, for working on one half while the
other stays unseen.

recall@5 is printed with a 95% interval (`interval`: a bootstrap over the tasks): on 48 tasks it is
about +-0.1 wide, which is how far another set of 48 tasks written the same way may land from it.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import itertools
import json
import math
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memdir.core.config import RecallSettings  # noqa: E402
from memdir.core.model import slugify, yaml_scalar  # noqa: E402
from memdir.folder import MemoryDir  # noqa: E402
from memdir.read import tables, terms  # noqa: E402
from memdir.read.recall import _choose, recall  # noqa: E402
from memdir.read.scoring import score_query  # noqa: E402
from memdir.read.termindex import load_index  # noqa: E402

DEFAULT = ROOT.parent / "shared" / "eval" / "dev" / "recall"
K = 5
FI_TARGET = 0.10
# Recall before issue 31, for side-by-side figures in one run: gate-chance 0.05, score_query's passes=False
# (no subject pass, look-ups of one word only), and the glossary with the groups issue 31's audit took
# out (memdir/read/terms.py says why; only this script has them back).
BEFORE = replace(RecallSettings(), gate_chance=0.05)
BEFORE_LABEL = "memdir recall before issue 31"
BEFORE_GLOSSARY = """
    deadline, due date, due, Frist, fällig, plazo, fecha límite, échéance, date limite, 截止, 期限;
    owner, Inhaber, Eigentümer, dueño, propietario, propriétaire, 所有者;
    tax, VAT, Steuer, Umsatzsteuer, impuesto, IVA, impôt, TVA, 税务, 增值税;
    accountant, bookkeeping, Steuerberater, Buchhaltung, contable, contabilidad, comptable, comptabilité, 会计;
    receipt, Beleg, Quittung, recibo, reçu, 收据;
    hire, recruit, einstellen, Stellenanzeige, contratar, recruter, embaucher, 招聘;
    letter, Brief, Schreiben, carta, lettre, 信函;
"""
CV_SEED = 0
# The settings --cv tunes on one half: (field, values), every combination tried.
TUNING: tuple[tuple[str, tuple[float, ...]], ...] = (
    ("gate", (0.7, 0.75, 0.8, 0.85, 0.9, 1.0)),
    ("gate_chance", (0.01, 0.02, 0.05, 0.1, 0.2)),
    ("min_relevance", (0.2, 0.3, 0.4)),
)
System = Callable[[str], list[str]]  # query -> memory ids, best first


def read_jsonl(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_folder(root: Path, memories: Sequence[dict[str, object]]) -> dict[str, str]:
    """The memories as files under `root`; returns file name -> memory id."""
    files = {str(m["id"]): f"{m['type']}_{slugify(str(m['name']))}.md" for m in memories}
    root.mkdir(parents=True)
    (root / "MEMORY.md").write_text("", encoding="utf-8")
    for m in memories:
        fields = {
            "name": m["name"],
            "description": m["description"],
            "type": m["type"],
            "created": m["created"],
            "updated": m["created"],
            "importance": m.get("importance"),
        }
        if m.get("superseded"):
            fields["status"] = "superseded"
            if m.get("superseded_by"):
                fields["superseded_by"] = files[str(m["superseded_by"])]
        front = "".join(f"{key}: {yaml_scalar(value)}\n" for key, value in fields.items() if value is not None)
        (root / files[str(m["id"])]).write_text(f"---\n{front}---\n{m['body']}\n", encoding="utf-8")
    return {name: key for key, name in files.items()}


def evaluate(system: System, queries: Sequence[dict[str, object]]) -> tuple[float, float, float]:
    recalls: list[float] = []
    hits = returned = injected = negatives = 0
    for q in queries:
        got = system(str(q["query"]))[:K]
        relevant = set(q["relevant"])  # type: ignore[call-overload]
        if relevant:
            hit = len(relevant & set(got))
            recalls.append(hit / len(relevant))
            hits, returned = hits + hit, returned + len(got)
        else:
            negatives += 1
            injected += bool(got)
    return (
        sum(recalls) / len(recalls),
        hits / returned if returned else 0.0,
        injected / negatives if negatives else 0.0,
    )


def per_task_recall(system: System, queries: Sequence[dict[str, object]]) -> list[float]:
    """recall@5 of each task with relevant memories, in order (evaluate's first figure is their mean)."""
    out = []
    for q in queries:
        relevant = set(q["relevant"])  # type: ignore[call-overload]
        if relevant:
            out.append(len(relevant & set(system(str(q["query"]))[:K])) / len(relevant))
    return out


def interval(values: Sequence[float], draws: int = 10_000, seed: int = CV_SEED) -> tuple[float, float]:
    """The 95% bootstrap interval of the mean of `values` (tasks drawn with replacement, `draws` times,
    with a fixed seed): where the mean of another set of as many tasks, written the same way, may fall."""
    rng = random.Random(seed)
    means = sorted(statistics.fmean(rng.choices(values, k=len(values))) for _ in range(draws))
    return means[int(0.025 * draws)], means[int(0.975 * draws) - 1]


@contextlib.contextmanager
def glossary_before_issue_31() -> Iterator[None]:
    """The built-in glossary as it was before issue 31's audit, for the duration of the block."""
    shipped, text = tables.GLOSSARY, terms._GLOSSARY
    try:
        terms._GLOSSARY = text + ";" + BEFORE_GLOSSARY
        tables.GLOSSARY = terms.build_glossary()
        terms._Lazy.glossaries.clear()
        yield
    finally:
        tables.GLOSSARY, terms._GLOSSARY = shipped, text
        terms._Lazy.glossaries.clear()


def before_issue_31(folder: MemoryDir) -> Callable[[str], list[str]]:
    """Recall as it decided before issue 31 (BEFORE, BEFORE_GLOSSARY): query -> paths of the memories
    chosen."""
    index = load_index(folder)

    def run(query: str) -> list[str]:
        with glossary_before_issue_31():
            candidates, _, gate = score_query(index, query, BEFORE, folder.today, passes=False)
        return [r.path for r in _choose(candidates, gate, BEFORE, K, BEFORE.min_score)[0]]

    return run


# --- the baseline ------------------------------------------------------------------------------------


def bm25_baseline(memories: Sequence[dict[str, object]]) -> Callable[[str], list[tuple[str, float]]]:
    """Plain Okapi BM25 over lower-cased words; returns (id, score) of every matching live memory."""

    def words(text: str) -> list[str]:
        return re.findall(r"\w+", text.lower())

    docs = {str(m["id"]): words(f"{m['name']} {m['description']} {m['body']}") for m in memories}
    live = {str(m["id"]) for m in memories if not m.get("superseded")}
    n, average = len(docs), sum(map(len, docs.values())) / len(docs)
    df = Counter(t for d in docs.values() for t in set(d))
    tfs = {key: Counter(d) for key, d in docs.items()}

    def score(query: str) -> list[tuple[str, float]]:
        out = []
        for key in live:
            tf, length = tfs[key], len(docs[key])
            s = sum(
                math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                * tf[t]
                * 2.2
                / (tf[t] + 1.2 * (0.25 + 0.75 * length / average))
                for t in words(query)
                if t in tf
            )
            if s > 0:
                out.append((key, s))
        return sorted(out, key=lambda x: (-x[1], x[0]))

    return score


def lowest_fitting_floor(
    baseline: Callable[[str], list[tuple[str, float]]], queries: Sequence[dict[str, object]]
) -> float | None:
    """The lowest score floor at which the baseline's false injection is at most FI_TARGET (a query
    injects when its best score is above the floor), or None when no floor does."""
    floors = sorted({s for q in queries for _, s in baseline(str(q["query"]))[:1]})
    for floor in floors:

        def above(query: str, floor: float = floor) -> list[str]:
            return [key for key, s in baseline(query) if s > floor]

        if evaluate(above, queries)[2] <= FI_TARGET:
            return floor
    return None


# --- cross-validation -------------------------------------------------------------------------------


def halves(queries: Sequence[dict[str, object]], seed: int = CV_SEED) -> dict[str, list[dict[str, object]]]:
    """The tasks in two halves, A and B: answerable and no-answer tasks each shuffled with `seed` and dealt
    alternately, so both halves hold the same number of each."""
    out: dict[str, list[dict[str, object]]] = {"A": [], "B": []}
    for answerable in (True, False):
        group = [q for q in queries if bool(q["relevant"]) == answerable]
        random.Random(seed).shuffle(group)
        for at, q in enumerate(group):
            out["AB"[at % 2]].append(q)
    return out


def tuned(
    run: Callable[[RecallSettings], System], queries: Sequence[dict[str, object]]
) -> tuple[RecallSettings, tuple[float, float, float]]:
    """The settings of the TUNING grid with the best recall@5 on `queries` at false injection at most
    FI_TARGET (ties: the first in the grid), and their scores there; the defaults when none holds it."""
    return best_of_grid(run, queries) or (RecallSettings(), evaluate(run(RecallSettings()), queries))


def best_of_grid(
    run: Callable[[RecallSettings], System], queries: Sequence[dict[str, object]]
) -> tuple[RecallSettings, tuple[float, float, float]] | None:
    """As `tuned`, or None when no setting of the grid holds false injection at most FI_TARGET."""
    best: tuple[RecallSettings, tuple[float, float, float]] | None = None
    for gate, chance, floor in itertools.product(*(choices for _, choices in TUNING)):  # TUNING's order
        settings = replace(RecallSettings(), gate=gate, gate_chance=chance, min_relevance=floor)
        scores = evaluate(run(settings), queries)
        if scores[2] <= FI_TARGET and (best is None or scores[0] > best[1][0]):
            best = (settings, scores)
    return best


def cross_validate(
    run: Callable[[RecallSettings], System],
    baseline: Callable[[str], list[tuple[str, float]]],
    queries: Sequence[dict[str, object]],
    only: str | None = None,
    before: System | None = None,
) -> None:
    """Each half scored with the defaults, with the settings tuned on the other half, and beside plain
    BM25 at the floor fitted on the other half (see the module docstring)."""
    split = halves(queries)
    print(f"\n  cross-validation: two halves of {len(split['A'])} and {len(split['B'])} tasks (seed {CV_SEED})")
    print(f"  {'system':<52} {'recall@5':>9} {'precision@5':>12} {'false injection':>16}")
    for half in only or "AB":
        other = split["B" if half == "A" else "A"]
        print(f"  half {half}")
        print(row("memdir recall, defaults", evaluate(run(RecallSettings()), split[half])))
        if before is not None:
            print(row(BEFORE_LABEL, evaluate(before, split[half])))
        if only is None:
            settings, _ = tuned(run, other)
            print(row("memdir recall, tuned on the other half", evaluate(run(settings), split[half])))
            print(f"      ({_settings(settings)})")
        print(row("memdir recall, no query gate (the ranking alone)",
                  evaluate(run(replace(RecallSettings(), gate=0.0)), split[half])))  # fmt: skip
        if only is None:
            if (best := best_of_grid(run, split[half])) is None:
                print(f"  {'memdir recall, tuned on this half (fitted: a bound)':<52} no setting holds false injection "
                      f"at most {FI_TARGET:.0%}")  # fmt: skip
            else:
                print(row("memdir recall, tuned on this half (fitted: a bound)", best[1]))
                print(f"      ({_settings(best[0])})")
        floor = lowest_fitting_floor(baseline, other)
        if floor is not None:

            def above(q: str, floor: float = floor) -> list[str]:
                return [key for key, s in baseline(q) if s > floor]

            print(row(f"plain BM25, floor {floor:.2f} fitted on the other half", evaluate(above, split[half])))


def _settings(settings: RecallSettings) -> str:
    return ", ".join(f"{name.replace('_', '-')} {getattr(settings, name):g}" for name, _ in TUNING)


# --- the run -----------------------------------------------------------------------------------------


def row(label: str, scores: tuple[float, float, float]) -> str:
    r, p, fi = scores
    return f"  {label:<52} {r:>9.3f} {p:>12.3f} {fi:>16.1%}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--no-timings", action="store_true", help="skip timing memdir recall on generated folders")
    parser.add_argument("--misses", action="store_true", help="list the relevant memories missed at the top 5, and why")
    parser.add_argument(
        "--cv", action="store_true", help="cross-validate: tune on one half of the tasks, score the other"
    )
    parser.add_argument("--half", choices=("A", "B"), help="score one half only (defaults; BM25 fitted on the other)")
    args = parser.parse_args()
    if not (args.dir / "queries.jsonl").is_file():
        print(f"eval_recall: {args.dir} not found (the labelled data lives in ../shared); nothing to evaluate")
        return 0
    memories = read_jsonl(args.dir / "memories.jsonl")
    queries = read_jsonl(args.dir / "queries.jsonl")
    today = max(dt.date.fromisoformat(str(m["created"])) for m in memories) + dt.timedelta(days=1)
    positives = sum(bool(q["relevant"]) for q in queries)
    print(f"{len(memories)} memories, {len(queries)} queries ({positives} with relevant memories, "
          f"{len(queries) - positives} without); today = {today}; top {K}")  # fmt: skip

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "memory"
        ids = write_folder(root, memories)
        folder = MemoryDir(root, today=today)
        default = RecallSettings()

        def ours(settings: RecallSettings = default) -> System:
            return lambda q: [ids[r.path] for r in recall(folder, q, settings=settings, log=False).results]

        if args.cv or args.half:
            before = before_issue_31(folder)
            cross_validate(ours, bm25_baseline(memories), queries, args.half, lambda q: [ids[p] for p in before(q)])
            return 0

        index = load_index(folder)

        def ablated(synonyms: bool = True, successors: bool = True, neighbours: bool = True) -> System:
            def run(q: str) -> list[str]:
                candidates, _, gate = score_query(index, q, default, today, synonyms, successors, neighbours)
                return [ids[r.path] for r in _choose(candidates, gate, default, K, default.min_score)[0]]

            return run

        started = time.perf_counter()
        mine = evaluate(ours(), queries)
        per_query_ms = (time.perf_counter() - started) / len(queries) * 1000
        low, high = interval(per_task_recall(ours(), queries))

        baseline = bm25_baseline(memories)

        def at_floor(floor: float) -> System:
            return lambda q: [key for key, s in baseline(q) if s >= floor]

        plain = evaluate(at_floor(0.0), queries)
        fitting = lowest_fitting_floor(baseline, queries)

        print(f"\n  {'system':<52} {'recall@5':>9} {'precision@5':>12} {'false injection':>16}")
        print(row(f"memdir recall (defaults: gate-chance {default.gate_chance:g}, gate {default.gate:g})", mine))
        print(f"      (recall@5 95% interval {low:.3f}-{high:.3f}: a bootstrap over the {positives} tasks)")
        before = before_issue_31(folder)
        print(row(BEFORE_LABEL, evaluate(lambda q: [ids[p] for p in before(q)], queries)))
        if fitting is not None:
            print(row(f"plain BM25, floor {fitting:.2f} (lowest with FI <= 10%)", evaluate(at_floor(fitting + 1e-9),
                                                                                           queries)))  # fmt: skip
        print(row("plain BM25, no floor", plain))

        print("\n  trade-off: memdir recall at other gates")
        for chance in (0.0, 0.01, 0.02, 0.1, 0.3, 1.0):
            print(row(f"gate-chance {chance:g} (gate {default.gate:g})",
                      evaluate(ours(replace(default, gate_chance=chance)), queries)))  # fmt: skip
        for gate in (0.0, 0.7, 0.75, 0.85, 0.9, 1.0):
            print(row(f"gate {gate:g} (gate-chance {default.gate_chance:g})",
                      evaluate(ours(replace(default, gate=gate)), queries)))  # fmt: skip
        print(row("a fixed relevance gate alone: gate 0.75, gate-chance 0",
                  evaluate(ours(replace(default, gate=0.75, gate_chance=0.0)), queries)))  # fmt: skip
        print("\n  trade-off: plain BM25 at other floors")
        for floor in (4.0, 6.0, 8.0, 10.0, 12.0):
            print(row(f"floor {floor:g}", evaluate(at_floor(floor), queries)))

        print("\n  ablations (default gate)")
        print(row("without the glossary of synonyms and translations", evaluate(ablated(synonyms=False), queries)))
        print(row("without passing matches on to successors", evaluate(ablated(successors=False), queries)))
        print(row("without the names the best matches lend", evaluate(ablated(neighbours=False), queries)))
        prior, tables.PRIOR = tables.PRIOR, {}  # every query word weighs 1 (terms.general_prior reads it at each call)
        print(row("without the general-language prior", evaluate(ablated(), queries)))
        tables.PRIOR = prior
        print(f"\n  in-process recall: {per_query_ms:.1f} ms a query on this folder")
        if args.misses:
            print_misses(folder, ids, queries, {str(m["id"]): m for m in memories})

    if not args.no_timings:
        time_cli()
    return 0


def print_misses(
    folder: MemoryDir, ids: dict[str, str], queries: Sequence[dict[str, object]], memories: dict[str, dict[str, object]]
) -> None:
    """Each task that misses a relevant memory at the top K: whether it passed the query gate, and for each
    missed memory its rank with no query gate (none: it shares no word, synonym or lent name with the
    task; a memory matched by lent names alone is never recalled) and the words it matched."""
    ungated = replace(RecallSettings(), gate=0.0)
    print(f"\n  misses at the top {K} (rank: with no query gate)")
    for q in queries:
        result = recall(folder, str(q["query"]), log=False)
        got = {ids[r.path] for r in result.results[:K]}
        missed = [key for key in q["relevant"] if key not in got]  # type: ignore[attr-defined]
        if not missed:
            continue
        gate = result.gate.why(result.settings) if result.gate else ""
        print(f"  {q['id']} {q['query']}\n      gate {'passed' if result.passed_gate else 'silent'}: {gate}")
        ranked = recall(folder, str(q["query"]), settings=ungated, log=False).candidates
        at = {ids[c.path]: (n, c) for n, c in enumerate(ranked, 1)}
        for key in missed:
            n, c = at.get(key, (0, None))
            how = f"rank {n}, relevance {c.relevance:.2f}, matched {', '.join(c.matched)}" if c else "no match"
            print(f"      {key} {memories[key]['description']!s:.70}: {how}")


def recall_timings(sizes: Sequence[int] = (1_000, 10_000), runs: int = 7) -> list[dict[str, float]]:
    """Wall time of `memdir recall` as a fresh process on folders generated by scripts/synthetic.py:
    for each size, the first run (which builds .memdir/recall-index) and the median, min and max of
    `runs` runs after it (index warm), in seconds. scripts/bench.py can call this."""
    from scripts.synthetic import write_folder as generate

    memdir = [sys.executable, "-m", "memdir"]
    out = []
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "memory"
            generate(root, size)
            command = [*memdir, "--dir", str(root), "recall", "deploy the release checklist", "--format", "json"]
            started = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True)
            first = time.perf_counter() - started
            subprocess.run(command, check=True, capture_output=True)  # re-reads the files racy in the first build
            times = []
            for _ in range(runs):
                started = time.perf_counter()
                subprocess.run(command, check=True, capture_output=True)
                times.append(time.perf_counter() - started)
            out.append({"memories": size, "first": first, "median": statistics.median(times), "min": min(times),
                        "max": max(times)})  # fmt: skip
    return out


def time_cli(runs: int = 7) -> None:
    print(f"\n  `memdir recall` as a fresh process, median of {runs} runs after a warm-up (index built)")
    for t in recall_timings(runs=runs):
        print(f"  {t['memories']:>6,} memories: median {t['median'] * 1000:.0f} ms "
              f"(min {t['min'] * 1000:.0f}, max {t['max'] * 1000:.0f}); "
              f"first run, building the index: {t['first'] * 1000:.0f} ms")  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main())

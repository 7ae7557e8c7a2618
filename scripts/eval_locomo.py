"""Score `memdir recall` on LoCoMo conversations, as ../shared/eval/README.md's protocol describes, beside
plain BM25 on the same sample.

Usage: python scripts/eval_locomo.py [DIR] [--sample 200] [--seed 0] [--all] [--cli] [--list] [--folders DIR]
(default DIR: ../shared/eval/locomo-dev/)

The protocol (the one the held-back half of LoCoMo is scored with):
- one folder per conversation (each JSON file of DIR); each turn becomes one memory file of type `user`,
  `user_turn-d1-3.md` named `turn-d1-3` after its `dia_id` ("D1:3"), description `Speaker: text` (with
  ` [shares CAPTION]` when the turn shares an image) cut to 140 characters, body the same text whole,
  `created` its session's date;
- the questions of categories 1-4 with evidence are the queries, a question's gold memories its evidence
  turns; 200 of them are sampled from the five conversations with a fixed seed (`--all`: every one);
- each question goes through recall in its conversation's folder at `-k 5 --min-score 0` with the default
  settings (in process, as `memdir recall` calls it; `--cli` runs `memdir recall QUESTION -k 5 --min-score 0
  --format json` as a process instead, to check that the two agree): recall@5 is the share of the
  question's evidence turns in the five, averaged over questions; "silent" the share of questions for
  which recall returns nothing; "cross-folder false injection" the share of questions that get anything
  when asked of another conversation's folder (the next file by name), where nothing was written for them;
- plain BM25 (k1 1.5, b 0.75, lower-cased `[a-z0-9]+` tokens of each memory's name, description and body)
  over the same folders is the baseline: with no floor it always answers (its top five), so its recall@5
  is the ranking to beat; at the floor that keeps its false injection on the dev set at or under 10% (the
  dev set's gate, fitted there, not here) it shows what a fixed score floor does at this folder size.

memdir is shown as it is, as its gate decided before issue 31 (the same run, for the side-by-side
figures), with its query gate and without it (`gate = 0`: every query passes; the memory gate
`min-relevance` still applies), so the gate's cost and the ranking are seen apart. Evidence ids are read
as published, split on `;` and spaces, with `D:11:26` read as `D11:26`; an id that names no turn ("D",
one past a session's end) is dropped, and a question left without evidence is not asked. `--list` prints
each sampled question that recall leaves silent, and each cross question that injects, with the gate's
figures. `--folders DIR` keeps the built folders there (and reuses them on the next run). Without DIR it
says so and exits 0.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import random
import re
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from memdir.core.config import RecallSettings  # noqa: E402
from memdir.core.model import yaml_scalar  # noqa: E402
from memdir.folder import MemoryDir  # noqa: E402
from memdir.read.recall import recall  # noqa: E402
from scripts.eval_recall import BEFORE_LABEL, before_issue_31  # noqa: E402

DEFAULT = ROOT.parent / "shared" / "eval" / "locomo-dev"
DEV_RECALL = ROOT.parent / "shared" / "eval" / "dev" / "recall"
K = 5
SAMPLE, SEED = 200, 0
DESCRIPTION_CHARS = 140
FI_TARGET = 0.10
Ranker = Callable[[str], list[str]]  # question -> memory names (turn-d1-3), best first


# --- the folders ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Question:
    conversation: str  # the file's stem ("26")
    text: str
    evidence: tuple[str, ...]  # memory names of the evidence turns
    category: int


@dataclass(frozen=True)
class Conversation:
    name: str
    turns: list[dict[str, str]]  # {"name", "text", "date"}
    questions: list[Question]


def turn_name(dia_id: str) -> str:
    """`D1:3` -> `turn-d1-3` (the memory's name; its file is `user_turn-d1-3.md`)."""
    return "turn-" + dia_id.strip().lower().replace(":", "-")


def session_date(text: str) -> str:
    """`1:56 pm on 8 May, 2023` -> `2023-05-08`."""
    day = text.split(" on ", 1)[-1].strip()
    return dt.datetime.strptime(day, "%d %B, %Y").date().isoformat()


def evidence_ids(raw: Sequence[str]) -> list[str]:
    """The evidence ids as published, split where one string holds several (`D8:6; D9:17`), and the
    stray colon of `D:11:26` dropped."""
    out = []
    for item in raw:
        for part in re.split(r"[;,\s]+", item):
            if part:
                out.append(re.sub(r"^D:(\d)", r"D\1", part))
    return out


def read_conversation(path: Path) -> Conversation:
    data = json.loads(path.read_text(encoding="utf-8"))
    turns = []
    for key, session in data.items():
        if not (re.fullmatch(r"session_\d+", key) and isinstance(session, list)):
            continue
        date = session_date(data[f"{key}_date_time"])
        for turn in session:
            text = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [shares {turn['blip_caption']}]"
            turns.append({"name": turn_name(turn["dia_id"]), "text": text, "date": date})
    known = {t["name"] for t in turns}
    questions = []
    for qa in data["qa"]:
        if qa.get("category") not in (1, 2, 3, 4):
            continue
        gold = tuple(dict.fromkeys(n for n in map(turn_name, evidence_ids(qa.get("evidence") or [])) if n in known))
        if gold:
            questions.append(Question(path.stem, str(qa["question"]), gold, int(qa["category"])))
    return Conversation(path.stem, turns, questions)


def write_folder(root: Path, conversation: Conversation) -> None:
    """The conversation as a memory folder: one `user` memory per turn (the protocol above)."""
    root.mkdir(parents=True)
    (root / "MEMORY.md").write_text("", encoding="utf-8")
    for turn in conversation.turns:
        description = turn["text"][:DESCRIPTION_CHARS].rstrip()
        fields = {"name": turn["name"], "description": description, "type": "user", "created": turn["date"]}
        front = "".join(f"{key}: {yaml_scalar(value)}\n" for key, value in fields.items())
        (root / f"user_{turn['name']}.md").write_text(f"---\n{front}---\n{turn['text']}\n", encoding="utf-8")


def sample(conversations: Sequence[Conversation], size: int | None, seed: int) -> list[Question]:
    """`size` questions drawn with `seed` from all the conversations' questions (in file order); all of
    them when `size` is None or larger than the pool."""
    pool = [q for c in conversations for q in c.questions]
    if size is None or size >= len(pool):
        return pool
    return random.Random(seed).sample(pool, size)


# --- the systems -----------------------------------------------------------------------------------


def memdir_ranker(root: Path, settings: RecallSettings | None = None) -> Ranker:
    folder = MemoryDir(root)
    chosen = settings or folder.config.recall

    def rank(question: str) -> list[str]:
        return [r.name for r in recall(folder, question, k=K, min_score=0.0, settings=chosen, log=False).results]

    return rank


def names_of(paths: Callable[[str], list[str]]) -> Ranker:
    """A ranker of memory names from one of memory paths (`user_turn-d1-3.md` -> `turn-d1-3`)."""
    return lambda q: [p.removeprefix("user_").removesuffix(".md") for p in paths(q)]


def cli_ranker(root: Path) -> Ranker:
    def rank(question: str) -> list[str]:
        command = [sys.executable, "-m", "memdir", "--dir", str(root), "recall", question, "-k", str(K),
                   "--min-score", "0", "--format", "json", "--no-log"]  # fmt: skip
        out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        return [r["name"] for r in json.loads(out)["results"]]

    return rank


_TOKEN = re.compile(r"[a-z0-9]+")


def bm25(documents: dict[str, str], k1: float = 1.5, b: float = 0.75) -> Callable[[str], list[tuple[str, float]]]:
    """Plain Okapi BM25 over lower-cased `[a-z0-9]+` tokens: question -> (key, score) of every document
    that matches, best first."""
    docs = {key: _TOKEN.findall(text.lower()) for key, text in documents.items()}
    n, average = len(docs), sum(map(len, docs.values())) / max(len(docs), 1)
    df = Counter(t for d in docs.values() for t in set(d))
    tfs = {key: Counter(d) for key, d in docs.items()}
    idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    def score(question: str) -> list[tuple[str, float]]:
        terms = [t for t in set(_TOKEN.findall(question.lower())) if t in df]
        out = []
        for key, tf in tfs.items():
            norm = k1 * (1 - b + b * len(docs[key]) / average)
            s = sum(idf[t] * tf[t] * (k1 + 1) / (tf[t] + norm) for t in terms if t in tf)
            if s > 0:
                out.append((key, s))
        return sorted(out, key=lambda x: (-x[1], x[0]))

    return score


def bm25_ranker(conversation: Conversation, floor: float = 0.0) -> Ranker:
    score = bm25({t["name"]: f"{t['name']} {t['text'][:DESCRIPTION_CHARS]} {t['text']}" for t in conversation.turns})
    return lambda q: [key for key, s in score(q) if s > floor]


def dev_floor(dev: Path = DEV_RECALL) -> float | None:
    """The lowest score floor at which this BM25 answers at most 10% of the dev set's no-answer tasks
    (a fixed gate fitted there), or None without the dev set."""
    if not (dev / "queries.jsonl").is_file():
        return None
    rows = [json.loads(line) for line in (dev / "memories.jsonl").read_text(encoding="utf-8").splitlines() if line]
    queries = [json.loads(line) for line in (dev / "queries.jsonl").read_text(encoding="utf-8").splitlines() if line]
    live = {str(m["id"]): f"{m['name']} {m['description']} {m['body']}" for m in rows if not m.get("superseded")}
    score = bm25(live)
    negatives = [q for q in queries if not q["relevant"]]
    tops = sorted((s[0][1] if (s := score(str(q["query"]))) else 0.0) for q in negatives)
    allowed = math.floor(FI_TARGET * len(negatives))  # this many may still inject
    return tops[len(tops) - allowed - 1] if tops else None


# --- the run -----------------------------------------------------------------------------------------


@dataclass
class Tally:
    asked: int = 0
    recall: float = 0.0  # summed per-question recall@5
    silent: int = 0
    cross: int = 0
    injected: int = 0

    def row(self, label: str) -> str:
        return (f"  {label:<46} {self.recall / max(self.asked, 1):>9.3f} {self.silent / max(self.asked, 1):>8.1%} "
                f"{self.injected / max(self.cross, 1):>13.1%}")  # fmt: skip


def run(questions: Sequence[Question], rankers: dict[str, Ranker], order: Sequence[str]) -> Tally:
    """Ask each question of its own folder and of the next one's (`order`: the conversations by name)."""
    tally = Tally()
    for q in questions:
        got = rankers[q.conversation](q.text)[:K]
        tally.asked += 1
        tally.recall += len(set(q.evidence) & set(got)) / len(q.evidence)
        tally.silent += not got
        other = order[(order.index(q.conversation) + 1) % len(order)]
        tally.cross += 1
        tally.injected += bool(rankers[other](q.text)[:K])
    return tally


def build(
    source: Path, folders: Path | None
) -> tuple[list[Conversation], dict[str, Path], tempfile.TemporaryDirectory[str] | None]:
    conversations = [read_conversation(p) for p in sorted(source.glob("*.json"))]
    tmp = None
    if folders is None:
        tmp = tempfile.TemporaryDirectory()
        folders = Path(tmp.name)
    roots = {}
    for c in conversations:
        root = folders / c.name
        if not root.is_dir():
            write_folder(root, c)
        roots[c.name] = root
    return conversations, roots, tmp


def list_failures(questions: Sequence[Question], roots: dict[str, Path], order: Sequence[str]) -> None:
    """Each question left silent in its own folder, and each that injects in the next one, with the query
    gate's figures and reason."""
    for q in questions:
        other = order[(order.index(q.conversation) + 1) % len(order)]
        for name, cross in ((q.conversation, False), (other, True)):
            folder = MemoryDir(roots[name])
            result = recall(folder, q.text, k=K, min_score=0.0, log=False)
            if bool(result.results) != cross or result.gate is None:
                continue
            gate = result.gate
            print(f"  {'injects' if cross else 'silent'} {name}: {q.text!r}")
            print(f"      relevance {gate.relevance:.2f}, chance {gate.chance:.2g}, weighed {', '.join(gate.weighed)}, "
                  f"common {', '.join(gate.common)}: {gate.why(result.settings)}")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--sample", type=int, default=SAMPLE, help="questions sampled (default 200)")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--all", action="store_true", help="ask every question instead of a sample")
    parser.add_argument("--cli", action="store_true", help="run memdir recall as a process for each question")
    parser.add_argument("--list", action="store_true", help="list the silent and injecting questions, and why")
    parser.add_argument("--folders", type=Path, help="build the folders here and keep them (reused when present)")
    args = parser.parse_args()
    if not any(args.dir.glob("*.json")):
        print(f"eval_locomo: no LoCoMo conversations in {args.dir} (they live in ../shared); nothing to evaluate")
        return 0
    conversations, roots, tmp = build(args.dir, args.folders)
    try:
        questions = sample(conversations, None if args.all else args.sample, args.seed)
        order = [c.name for c in conversations]
        total = sum(len(c.questions) for c in conversations)
        sizes = ", ".join(f"{c.name}: {len(c.turns)}" for c in conversations)
        print(f"{len(conversations)} conversations (memories: {sizes}); {len(questions)} of {total} questions "
              f"(categories 1-4 with evidence){'' if args.all else f', seed {args.seed}'}; top {K}")  # fmt: skip
        if args.list:
            list_failures(questions, roots, order)
            return 0
        print(f"\n  {'system':<46} {'recall@5':>9} {'silent':>8} {'cross-folder':>13}")
        print(f"  {'':<46} {'':>9} {'':>8} {'injection':>13}")
        open_gate = replace(RecallSettings(), gate=0.0)
        systems: list[tuple[str, Callable[[Conversation], Ranker]]] = [
            ("memdir recall (defaults)", lambda c: memdir_ranker(roots[c.name])),
            (BEFORE_LABEL, lambda c: names_of(before_issue_31(MemoryDir(roots[c.name])))),
            ("memdir recall without the query gate (gate 0)", lambda c: memdir_ranker(roots[c.name], open_gate)),
            ("plain BM25, no floor", lambda c: bm25_ranker(c)),
        ]
        if (floor := dev_floor()) is not None:
            systems.append((f"plain BM25, dev floor {floor:.2f}", lambda c: bm25_ranker(c, floor + 1e-9)))
        if args.cli:
            systems.insert(1, ("memdir recall as a process (--cli)", lambda c: cli_ranker(roots[c.name])))
        for label, make in systems:
            print(run(questions, {c.name: make(c) for c in conversations}, order).row(label), flush=True)
    finally:
        if tmp is not None:
            tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The evaluation scripts' own logic: the LoCoMo protocol (scripts/eval_locomo.py) and the halves the
cross-validation modes of scripts/eval_recall.py and scripts/eval_pairs.py split their sets into. The
protocol is checked on a small conversation written here; the runs on ../shared skip without it."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import SHARED

from memdir.folder import MemoryDir

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from scripts import eval_locomo, eval_pairs, eval_recall  # noqa: E402

sys.path.remove(str(ROOT))

SAILING = "Lovely. " + " ".join(["I went sailing on the lake."] * 8)
CONVERSATION = {
    "speaker_a": "Ada",
    "speaker_b": "Ben",
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [
        {"speaker": "Ada", "dia_id": "D1:1", "text": "I adopted a greyhound called Pixel last week!"},
        {"speaker": "Ben", "dia_id": "D1:2", "text": SAILING, "blip_caption": "a photo of a small boat"},
    ],
    "session_2_date_time": "10:37 am on 27 June, 2023",
    "session_2": [{"speaker": "Ada", "dia_id": "D2:1", "text": "Pixel loves the beach."}],
    "session_3_date_time": "9:00 am on 1 July, 2023",  # a date with no session: LoCoMo has these
    "qa": [
        {"question": "What is the name of Ada's dog?", "answer": "Pixel", "evidence": ["D1:1"], "category": 1},
        {"question": "Where does Pixel like to go?", "answer": "beach", "evidence": ["D2:1; D1:1"], "category": 4},
        {"question": "Where did Ben sail?", "answer": "a lake", "evidence": ["D:1:2", "D9:9"], "category": 2},
        {"question": "What did Ada say about cats?", "evidence": ["D1:1"], "category": 5},  # adversarial: not asked
        {"question": "Who is Ben?", "answer": "?", "evidence": ["D"], "category": 3},  # no evidence left: not asked
    ],
}


def test_locomo_turns_become_memories_as_the_protocol_says(tmp_path: Path) -> None:
    (tmp_path / "26.json").write_text(json.dumps(CONVERSATION), encoding="utf-8")
    conversation = eval_locomo.read_conversation(tmp_path / "26.json")
    eval_locomo.write_folder(tmp_path / "folder", conversation)
    memories = {m.name: m for m in MemoryDir(tmp_path / "folder").list()}
    assert sorted(memories) == ["turn-d1-1", "turn-d1-2", "turn-d2-1"]
    sailing = memories["turn-d1-2"]
    assert sailing.path == "user_turn-d1-2.md" and sailing.type is not None and sailing.type.value == "user"
    whole = f"Ben: {SAILING} [shares a photo of a small boat]"
    assert sailing.body.strip() == whole
    assert len(sailing.description) <= 140 and whole.startswith(sailing.description)
    assert str(memories["turn-d2-1"].fields["created"]) == "2023-06-27"
    # Categories 1-4 with evidence; "D2:1; D1:1" is two turns, "D:1:2" is D1:2, an unknown turn is dropped.
    assert [(q.text, q.evidence) for q in conversation.questions] == [
        ("What is the name of Ada's dog?", ("turn-d1-1",)),
        ("Where does Pixel like to go?", ("turn-d2-1", "turn-d1-1")),
        ("Where did Ben sail?", ("turn-d1-2",)),
    ]


def test_locomo_sample_is_fixed_by_its_seed() -> None:
    conversations = [
        eval_locomo.Conversation(str(n), [], [eval_locomo.Question(str(n), f"q{n}-{i}", ("t",), 1) for i in range(50)])
        for n in range(3)
    ]
    first = eval_locomo.sample(conversations, 20, 0)
    assert first == eval_locomo.sample(conversations, 20, 0) != eval_locomo.sample(conversations, 20, 1)
    assert len(first) == len(set(first)) == 20
    assert len(eval_locomo.sample(conversations, None, 0)) == 150


def test_locomo_bm25_ranks_the_rarer_match_first() -> None:
    score = eval_locomo.bm25({"a": "the boat on the lake", "b": "the lake", "c": "a greyhound"})
    assert [key for key, _ in score("Which boat? The LAKE one")] == ["a", "b"]


def test_locomo_evaluation_skips_without_the_data(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "eval_locomo.py"), str(tmp_path)],
                         capture_output=True, text=True, check=True)  # fmt: skip
    assert "nothing to evaluate" in out.stdout


def test_cross_validation_halves_are_stratified_and_fixed() -> None:
    queries = [{"id": f"q{i}", "relevant": ["m"] if i % 5 else []} for i in range(60)]
    halves = eval_recall.halves(queries)
    assert halves == eval_recall.halves(queries)
    assert sorted(q["id"] for half in halves.values() for q in half) == sorted(q["id"] for q in queries)
    assert [sum(not q["relevant"] for q in half) for half in halves.values()] == [6, 6]
    pairs = [{"id": i, "label": label, "difficulty": "hard" if i % 3 == 0 else "normal"}
             for i, label in enumerate(["duplicate", "unrelated"] * 20)]  # fmt: skip
    split = eval_pairs.halves(pairs)
    counts = [Counter((p["label"], p["difficulty"]) for p in half) for half in split.values()]
    assert all(abs(counts[0][key] - counts[1][key]) <= 1 for key in counts[0] | counts[1])
    assert sum(map(len, split.values())) == len(pairs)


def test_recall_interval_is_a_fixed_bootstrap_of_the_mean() -> None:
    tasks = [1.0, 0.5, 0.0, 1.0, 0.0, 1.0, 0.5, 1.0] * 6  # 48 tasks, as in the dev set
    low, high = eval_recall.interval(tasks)
    assert (low, high) == eval_recall.interval(tasks)  # a fixed seed: the same interval every run
    assert low < sum(tasks) / len(tasks) < high
    assert 0.15 < high - low < 0.35  # about +-0.1 on 48 tasks of this spread
    quarter = eval_recall.interval(tasks[:12])
    assert quarter[1] - quarter[0] > high - low  # fewer tasks, a wider interval
    assert eval_recall.interval([0.5] * 10) == (0.5, 0.5)


def test_recall_grid_says_when_no_setting_holds_false_injection() -> None:
    queries = [{"id": "q1", "query": "deploy", "relevant": ["m1"]}, {"id": "q2", "query": "tcp", "relevant": []}]

    def answers_everything(settings: object) -> eval_recall.System:
        return lambda query: ["m1"]

    assert eval_recall.best_of_grid(answers_everything, queries) is None  # q2 always injects
    assert eval_recall.tuned(answers_everything, queries)[0] == eval_recall.RecallSettings()  # the defaults

    def answers_when_strict(settings: eval_recall.RecallSettings) -> eval_recall.System:
        return lambda query: ["m1"] if query == "deploy" or settings.gate < 0.75 else []

    best = eval_recall.best_of_grid(answers_when_strict, queries)
    assert best is not None and best[0].gate >= 0.75 and best[1] == (1.0, 1.0, 0.0)


def _memory(key: str, description: str, body: str, type: str = "project") -> eval_pairs.MemoryText:
    return eval_pairs.MemoryText(key, key, description, body, type)


def test_facts_rule_says_why_it_does_not_take_a_pair() -> None:
    why, compare = eval_pairs.facts_rule_why, eval_pairs.compare
    sunset = _memory("api-sunset", "The public API is shut down on 2026-03-31", "Point integrators to the new API.")
    reworded = _memory("retirement", "Old public endpoints go dark on 31 March 2026", "Integrators get the API docs.")
    verdict = compare(sunset, reworded)
    assert verdict is not None and verdict.label == "duplicate" and why(sunset, reworded) == "it applies"
    assert why(sunset, replace(reworded, type="feedback")) == "types differ (project, feedback)"
    assert why(sunset, sunset).startswith("scores 1.00, at the bar or above")
    at_ten = replace(sunset, description=sunset.description + " at 10:00")
    assert why(at_ten, reworded) == "b lacks one of the other's specific facts (2026-03-31, 10:00)"
    never = replace(reworded, description="Old public endpoints never go dark before 31 March 2026")
    assert why(sunset, never) == "one says no or never, the other does not"
    acme = replace(sunset, description="The public API at Acme is shut down on 2026-03-31")
    globex = replace(reworded, description="Old Globex public endpoints go dark on 31 March 2026")
    assert why(acme, globex) == "names differ: Acme vs Globex"
    logs = _memory("logs", "Log files rotate every 45 minutes", "On the server.")
    assert why(_memory("invoices", "Invoices are due 45 days after issue", "Net."), logs).startswith("words agree too")
    comma, oxford = (
        _memory("comma", "Use the serial comma", "Always."),
        _memory("oxford", "Take the Oxford comma", "Yes."),
    )
    assert why(comma, oxford) == "a states no specific fact"
    for a, b in ((at_ten, reworded), (sunset, never), (acme, globex), (comma, oxford)):
        assert compare(a, b) is None  # each reason is one the rule really stops at


LOCOMO = SHARED / "eval" / "locomo-dev"


@pytest.mark.slow  # builds five folders of 370-680 memories and asks 200 questions of two folders each
@pytest.mark.skipif(not (LOCOMO / "26.json").is_file(), reason="the LoCoMo conversations in ../shared are not here")
def test_locomo_recall_speaks_when_the_folder_knows_and_beats_bm25(tmp_path: Path) -> None:
    conversations, roots, _ = eval_locomo.build(LOCOMO, tmp_path)
    questions = eval_locomo.sample(conversations, eval_locomo.SAMPLE, eval_locomo.SEED)
    order = [c.name for c in conversations]
    ours = eval_locomo.run(questions, {c.name: eval_locomo.memdir_ranker(roots[c.name]) for c in conversations}, order)
    plain = eval_locomo.run(questions, {c.name: eval_locomo.bm25_ranker(c) for c in conversations}, order)
    # Issue 31's targets: silent on at most 15%, cross-folder false injection at most 15%, and recall@5 at
    # least plain BM25's on the same sample (docs/recall.md has the measured figures).
    assert ours.silent <= 0.15 * ours.asked and ours.injected <= 0.15 * ours.cross
    assert ours.recall >= plain.recall

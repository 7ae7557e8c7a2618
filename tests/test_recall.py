"""memdir.read.recall and `memdir recall`: scoring and its gates, exclusions, the log, the stored index,
the command's formats and errors, `--llm` against recorded responses, and the dev-set evaluation."""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conftest import SHARED, TODAY, MakeMemory, invoke_memdir, recorded_client

from memdir.core import store
from memdir.core.config import Config, RecallSettings, load_config
from memdir.core.store import STATE_DIR
from memdir.folder import MemoryDir
from memdir.read.recall import RecallError, recall, recalled_memories
from memdir.read.recall_llm import recall_llm
from memdir.read.recall_log import LOG_FILE, read_log
from memdir.read.scoring import RecallResult
from memdir.read.termindex import INDEX_FILE, _Stored

ROOT = Path(__file__).resolve().parents[1]


def _dir(root: Path, **settings: Any) -> MemoryDir:
    return MemoryDir(root, config=Config(recall=replace(RecallSettings(), **settings)), today=TODAY)


def _paths(root: Path, query: str, **options: Any) -> list[str]:
    return [r.path for r in recall(_dir(root), query, **options).results]


def _days_ago(days: int) -> str:
    return (TODAY - dt.timedelta(days=days)).isoformat()


@pytest.fixture
def deploys(make_memory: MakeMemory) -> None:
    make_memory(
        "feedback_no-friday-deploys.md",
        description="No production deploys on Fridays",
        created=_days_ago(60),
        body="Don't deploy to production on a Friday.\n\n**Why:** a Friday release broke imports.\n",
    )
    make_memory(
        "reference_grafana.md",
        description="Cluster monitoring dashboards are at grafana.example.com",
        created=_days_ago(10),
        body="Disk, memory and CPU alerts of the k3s cluster.\n",
    )
    make_memory(
        "user_coffee.md",
        description="The user drinks oat-milk flat whites",
        created=_days_ago(400),
        body="Order oat milk.\n",
    )


# --- scoring ----------------------------------------------------------------------------------


def test_the_relevant_memory_comes_first(folder: Path, deploys: None) -> None:
    result = recall(_dir(folder), "Can we deploy the fix to production this Friday?")
    assert [r.path for r in result.results] == ["feedback_no-friday-deploys.md"]
    best = result.results[0]
    assert best.relevance > 0.75 and result.passed_gate
    assert {"friday", "deploy", "production"} <= set(best.matched)


def test_the_score_is_the_weighted_sum_of_its_parts(folder: Path, deploys: None) -> None:
    best = recall(_dir(folder), "grafana disk alert on the cluster").results[0]
    assert best.path == "reference_grafana.md"
    assert best.recency == pytest.approx(0.5 ** (10 / 30))
    assert best.importance == 0.5
    assert best.score == pytest.approx(0.6 * best.relevance + 0.25 * best.recency + 0.15 * best.importance)


def _written_days_ago(path: Path, days: int, second: int = 0) -> None:
    day = TODAY - dt.timedelta(days=days)
    noon = time.mktime((day.year, day.month, day.day, 12, 0, second, 0, 0, -1))
    os.utime(path, (noon, noon))


NAMING = "API field names are snake_case; the user id field is user_id"


def test_an_undated_memory_is_as_old_as_its_file(folder: Path, make_memory: MakeMemory) -> None:
    """Claude Code writes no `created`/`updated`: its memory's recency comes from its file's mtime,
    so it ranks beside a dated twin of the same age, not below it."""
    body = "Name the new API field for user id user_id.\n"
    undated = make_memory("feedback_naming.md", description=NAMING, body=body)
    _written_days_ago(undated, 10)
    make_memory("feedback_naming-copy.md", description=NAMING, body=body, created=_days_ago(10))
    found = {r.path: r for r in recall(_dir(folder), "how should I name the new API field for user id").results}
    undated_one, dated_one = found["feedback_naming.md"], found["feedback_naming-copy.md"]
    assert undated_one.recency == dated_one.recency == pytest.approx(0.5 ** (10 / 30))
    assert (undated_one.age.source, dated_one.age.source) == ("mtime", "frontmatter")


def test_claude_codes_memory_outranks_weak_matches_added_today(folder: Path, make_memory: MakeMemory) -> None:
    """The issue's case: two memories `memdir add` dated today that barely match must not push the
    naming memory Claude Code wrote last month (no date in it) down the list, nor out of the hook."""
    naming = make_memory("feedback_api-naming.md", description="How to name fields in the public API: snake_case ids",
                         body="New API fields use snake_case; a user id field is user_id, never userId.\n")  # fmt: skip
    _written_days_ago(naming, 25)
    for name, text in (("api-client", "The API client retries twice"), ("api-docs", "API docs live in docs/api")):
        make_memory(f"project_{name}.md", description=text, created=TODAY.isoformat(), body=f"{text}.\n")
    result = recall(_dir(folder), "how should I name the new API field for user id")
    assert result.results[0].path == "feedback_api-naming.md"


def test_a_memory_with_no_age_at_all_is_as_old_as_a_typical_one(folder: Path, make_memory: MakeMemory) -> None:
    """Where a copy reset every mtime and git has nothing, an undated memory gets the median recency of
    the candidates that have an age: not last for its author writing no date, nor above an older dated
    memory for that alone."""
    body = "Name the new API field for user id user_id.\n"
    paths = [make_memory("feedback_naming.md", description=NAMING, body=body)]
    for name, days in (("new", 0), ("recent", 10), ("older", 60), ("old", 730)):
        paths.append(make_memory(f"feedback_{name}.md", description=NAMING, body=body, created=_days_ago(days)))
    for path in paths:
        _written_days_ago(path, 3)  # one moment for all: what a copy does
    result = recall(_dir(folder), "how should I name the new API field for user id")
    assert [r.path for r in result.results] == [
        "feedback_new.md", "feedback_recent.md", "feedback_naming.md", "feedback_older.md", "feedback_old.md",
    ]  # fmt: skip
    undated = result.results[2]
    assert undated.age.source == "none"
    assert undated.recency == pytest.approx((0.5 ** (10 / 30) + 0.5 ** (60 / 30)) / 2)  # the middle of the four


def test_a_new_important_memory_with_no_relevance_is_never_returned(folder: Path, make_memory: MakeMemory) -> None:
    # Recency 1 and importance 1 make 0.4 without any relevance: above the seed's 0.35 floor.
    make_memory("project_launch.md", description="The launch is on 2026-12-01", created=TODAY.isoformat(),
                importance=1.0, body="Launch day for the new shop.\n")  # fmt: skip
    make_memory("feedback_commits.md", description="Commit messages in English, Conventional Commits style",
                created=_days_ago(300), body="feat:, fix:, docs:.\n")  # fmt: skip
    assert _paths(folder, "Explain the difference between TCP and UDP") == []
    assert _paths(folder, "write the commit message for this conventional commits change") == ["feedback_commits.md"]
    # a min-score of 0 does not let it in either
    assert _paths(folder, "Explain the difference between TCP and UDP", min_score=0.0) == []


@pytest.fixture
def pilot(make_memory: MakeMemory) -> None:
    make_memory("project_vineyard-pilot.md", description="FieldSense vineyard pilot with 40 nodes at Weingut Kranz",
                body="Soil moisture nodes in three rows of the vineyard until harvest.\n")  # fmt: skip
    make_memory("reference_fieldsense-supplier.md", description="FieldSense boards are assembled by Huaxin PCB",
                body="About ten working days from order to delivery.\n")  # fmt: skip
    make_memory("reference_fieldsense-repo.md", description="FieldSense firmware lives in the fieldsense-fw repo")
    make_memory("project_pilot-rows.md", description="Vineyard pilot nodes sit in rows 4 to 6")
    make_memory("project_pilot-gateway.md", description="The vineyard pilot gateway is on the barn roof")
    make_memory("user_coffee.md", description="The user drinks oat-milk flat whites")
    make_memory("reference_invoicing.md", description="Invoices go out on the first of the month",
                body="FieldSense, Acme and Tallyo are invoiced in Lexoffice.\n")  # fmt: skip


def test_the_best_matches_lend_their_names(folder: Path, pilot: None) -> None:
    # Nothing in the task names FieldSense; the pilot's memory does, and the supplier's memory, which
    # shares only "boards" with the task, rises on the name it carries.
    result = recall(_dir(folder), "We need 50 more boards for the vineyard pilot")
    paths = [r.path for r in result.results]
    assert paths and paths[0] == "project_vineyard-pilot.md", (result.top_relevance, result.candidates)
    assert "reference_fieldsense-supplier.md" in paths and "user_coffee.md" not in paths
    supplier = next(r for r in result.results if r.path == "reference_fieldsense-supplier.md")
    assert "~fieldsense" in supplier.matched
    # the lent name adds to its relevance, not to what the gate weighs
    assert supplier.relevance > supplier.direct > 0
    # it counts where a memory is about FieldSense (its name or description), not where one mentions
    # it in passing, and never for the memory that lent it
    assert all(c.path != "reference_invoicing.md" for c in result.candidates)
    assert "~fieldsense" not in result.results[0].matched


def test_a_lent_name_alone_never_recalls_a_memory(folder: Path, pilot: None, make_memory: MakeMemory) -> None:
    # The firmware repo carries the lent name and nothing of the task; new and important, it would
    # outrank the supplier on recency and importance. It stays a candidate, and says why it was left.
    make_memory("reference_fieldsense-repo.md", description="FieldSense firmware lives in the fieldsense-fw repo",
                created=TODAY.isoformat(), importance=1.0)  # fmt: skip
    result = recall(_dir(folder), "We need 50 more boards for the vineyard pilot")
    assert "reference_fieldsense-repo.md" not in [r.path for r in result.results]
    repo = next(c for c in result.candidates if c.path == "reference_fieldsense-repo.md")
    assert repo.matched == ("~fieldsense",) and repo.direct == 0 and repo.relevance >= 0.3
    assert result.why_not(repo) == "no word of the query matches it, only names lent by the best matches"


def test_lent_names_never_open_the_gate(folder: Path, pilot: None) -> None:
    # "harvest" is a weak match (one word of a body); the names the pilot would lend must not lift the
    # query over the gate, nor be lent at all.
    result = recall(_dir(folder), "harvest")
    assert [c.path for c in result.candidates] == ["project_vineyard-pilot.md"]
    assert not result.passed_gate and result.results == []
    assert all("~fieldsense" not in c.matched for c in result.candidates)


def test_a_weak_best_match_recalls_nothing(folder: Path, deploys: None) -> None:
    result = recall(_dir(folder), "Which CPU should the new laptop have?")
    assert [c.path for c in result.candidates] == ["reference_grafana.md"]
    assert result.results == [] and not result.passed_gate
    assert result.why_not(result.candidates[0]).startswith("the folder does not know the query")
    assert result.gate is not None and result.gate.chance >= 1 and not result.gate.passed
    # ... but the gate is a setting
    opened = recall(_dir(folder, gate=0.0), "Which CPU should the new laptop have?")
    assert [r.path for r in opened.results] == ["reference_grafana.md"]


def test_nothing_recalled_says_plainly_whose_words_are_common(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("feedback_lint.md", description="Run npm run lint before every commit; CI was red for a day")
    result = invoke_memdir("--dir", str(folder), "recall", "every day before noon")
    assert result.exit_code == 0, result.output
    assert "the only words the query shares with the best match are common English words" in result.stderr


def test_min_relevance_keeps_out_a_new_memory_that_matches_only_a_trace(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("reference_sentry.md", description="Dashboard errors are in Sentry project acme-dispatch",
                created=_days_ago(200), body="Sentry.\n")  # fmt: skip
    make_memory("project_notes.md", description="Weekly notes", created=TODAY.isoformat(), importance=1.0,
                body="Notes from the week, the errors we saw, the plans.\n")  # fmt: skip
    loose = recall(_dir(folder, min_relevance=0.0), "Where are the Sentry errors of acme-dispatch?")
    strict = recall(_dir(folder, min_relevance=0.5), "Where are the Sentry errors of acme-dispatch?")
    assert {r.path for r in loose.results} == {"reference_sentry.md", "project_notes.md"}
    assert [r.path for r in strict.results] == ["reference_sentry.md"]
    notes = next(c for c in strict.candidates if c.path == "project_notes.md")
    assert strict.why_not(notes).startswith("relevance")


@pytest.mark.parametrize(
    ("fields", "why"),
    [
        ({"status": "superseded"}, "superseded"),
        ({"superseded_by": "feedback_new.md"}, "superseded"),
        ({"status": "quarantined"}, "quarantined"),
        ({"status": "archived"}, "archived"),
        ({"expires": "2026-11-01"}, "expired"),
    ],
)
def test_excluded_memories_are_never_recalled(
    folder: Path, make_memory: MakeMemory, fields: dict[str, str], why: str
) -> None:
    make_memory("feedback_old.md", description="Payments over EUR 2,000 need the user's OK", **fields)
    result = recall(_dir(folder, gate=0.0), "pay this supplier payment of EUR 2,500")
    assert result.results == [] and result.candidates == []
    assert [(path, reason.split()[0]) for path, reason in result.excluded] == [("feedback_old.md", why)]


def test_a_superseded_memorys_match_passes_to_its_successor(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("project_rate-720.md", description="Studio day rate is EUR 720", status="superseded",
                superseded_by="project_rate-2026.md")  # fmt: skip
    make_memory("project_rate-2026.md", description="From 2026, new clients pay EUR 780 per person-day")
    result = recall(_dir(folder), "what is the studio day rate?")
    assert [r.path for r in result.results] == ["project_rate-2026.md"]
    assert result.results[0].via == "project_rate-720.md"


def test_recall_is_deterministic(folder: Path, make_memory: MakeMemory) -> None:
    for n in range(6):  # identical memories but their names: ties are broken by path
        make_memory(f"feedback_lint-{n}.md", description="Run the linter before every commit", created=_days_ago(5))
    first = recall(_dir(folder), "run the linter before I commit", k=3)
    second = recall(_dir(folder, log=False), "run the linter before I commit", k=3)
    assert [r.path for r in first.results] == ["feedback_lint-0.md", "feedback_lint-1.md", "feedback_lint-2.md"]
    assert first.results == second.results and first.candidates == second.candidates


def test_k_and_min_score_cut_the_list(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("feedback_lint.md", description="Run the linter before every commit", created=_days_ago(1))
    make_memory("feedback_lint-ci.md", description="The linter runs in CI on every commit", created=_days_ago(300))
    both = recall(_dir(folder), "linter commit")
    assert len(both.results) == 2
    assert len(recall(_dir(folder), "linter commit", k=1).results) == 1
    floor = (both.results[0].score + both.results[1].score) / 2
    assert [r.path for r in recall(_dir(folder), "linter commit", min_score=floor).results] == ["feedback_lint.md"]
    with pytest.raises(RecallError):
        recall(_dir(folder), "linter", k=0)


def test_weights_and_half_life_come_from_the_config(folder: Path, deploys: None, tmp_path: Path) -> None:
    (tmp_path / ".memdir.toml").write_text(
        '[recall]\nrelevance-weight = 1\nrecency-weight = 0\nimportance-weight = 0\nhalf-life-days = 10\n'
        'gate = 0.5\nk = 2\nsynonyms = [["grafana", "dashboards"]]\n'
    )  # fmt: skip
    config = load_config(tmp_path)
    settings = config.recall
    assert (settings.relevance_weight, settings.recency_weight, settings.importance_weight) == (1.0, 0.0, 0.0)
    assert (settings.half_life_days, settings.gate, settings.k) == (10.0, 0.5, 2)
    best = recall(MemoryDir(folder, config=config, today=TODAY), "grafana alerts").results[0]
    assert best.score == pytest.approx(best.relevance)
    assert best.recency == pytest.approx(0.5)  # ten days old, ten-day half-life


def test_bad_recall_settings_are_refused(tmp_path: Path) -> None:
    from memdir.core.errors import ConfigError

    bad = ("gate = 2", "k = 0", "recency-weight = -1", 'synonyms = ["a"]', "half-life-days = 0", "log = 1",
           "gate = nan", "relevance-weight = inf", "half-life-days = nan", "min-score = nan")  # fmt: skip
    for text in bad:
        (tmp_path / ".memdir.toml").write_text(f"[recall]\n{text}\n")
        with pytest.raises(ConfigError, match="recall"):
            load_config(tmp_path)


def test_configured_synonyms_let_a_query_word_match_another(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("reference_kiln.md", description="Kiln firing schedule is on the studio wiki")
    assert recall(_dir(folder), "when is the next bisque batch?").candidates == []
    settings = {"synonyms": (("bisque", "kiln firing"),)}
    result = recall(_dir(folder, **settings), "when is the next bisque firing?")
    assert [r.path for r in result.results] == ["reference_kiln.md"]
    assert "bisque=kiln firing" in result.results[0].matched


def test_a_german_memory_answers_an_english_question(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("project_sicherung.md", description="Die Datenbank-Sicherung läuft jede Nacht um drei",
                body="Aufbewahrung 30 Tage.\n")  # fmt: skip
    result = recall(_dir(folder, gate=0.5), "when does the database backup run?")
    assert [r.path for r in result.results] == ["project_sicherung.md"]


def test_a_word_finds_the_german_compounds_it_begins(folder: Path, make_memory: MakeMemory) -> None:
    # The stemmer makes "Termin" "termi" but cuts "Terminplanung" to "termin": the two have to be joined
    # by hand, both for the query's own words and for the glossary's ("meeting" -> "Termin").
    # The gates are opened: this is about what matches, not about what is worth recalling.
    make_memory("reference_agentur.md", description="Terminplanung mit der Agentur Nordlicht in Hamburg")
    for query in ("Termin", "meeting planner"):
        result = recall(_dir(folder, gate=0.1, min_relevance=0.0), query)
        assert [r.path for r in result.results] == ["reference_agentur.md"], query
    assert recall(_dir(folder, gate=0.1, min_relevance=0.0), "Termin").results[0].matched == ("termin=termin-",)


def test_the_glossary_keeps_no_word_chosen_with_the_dev_set_in_view() -> None:
    """Issue 31's audit (memdir/read/terms.py): these named exactly the dev set's German answers."""
    from memdir.read.terms import _glossary
    from memdir.text.words import term_list

    table = _glossary(())
    for word in ("VAT", "Umsatzsteuer", "fällig", "Beleg", "Steuerberater", "Inhaber", "Stellenanzeige", "Brief"):
        assert not any(term in table for term in term_list(word)), word
    assert any(term in table for term in term_list("Datenbank"))  # the general concepts stay


def test_chinese_text_is_matched_by_characters(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("reference_supplier.md", description="电路板在深圳下单贴片，交期约 10 个工作日")
    assert _paths(folder, "电路板 交期") == ["reference_supplier.md"]


def test_an_empty_query_is_refused(folder: Path, deploys: None) -> None:
    with pytest.raises(RecallError, match="the query is empty"):
        recall(_dir(folder), "   ")


def test_recalled_memories_are_read_from_their_files(folder: Path, deploys: None) -> None:
    root = _dir(folder)
    result = recall(root, "deploy to production on friday")
    memories = recalled_memories(root, result)
    assert [m.path for m in memories] == ["feedback_no-friday-deploys.md"]
    assert "Friday" in memories[0].body


# --- the log ----------------------------------------------------------------------------------


def test_every_recall_is_logged_with_what_it_weighed(folder: Path, deploys: None) -> None:
    recall(_dir(folder), "deploy to production on friday")
    recall(_dir(folder), "Explain the difference between TCP and UDP")
    entries = read_log(folder)
    assert [e["query"] for e in entries] == [
        "deploy to production on friday",
        "Explain the difference between TCP and UDP",
    ]
    first = entries[0]
    assert first["chosen"] == ["feedback_no-friday-deploys.md"] and first["passed_gate"] is True
    assert first["settings"]["weights"] == {"relevance": 0.6, "recency": 0.25, "importance": 0.15}
    candidate = first["candidates"][0]
    assert candidate["path"] == "feedback_no-friday-deploys.md" and candidate["why_not"] is None
    assert {"score", "relevance", "recency", "importance", "matched"} <= set(candidate)
    assert entries[1]["chosen"] == [] and entries[1]["passed_gate"] is False
    lines = (folder / STATE_DIR / LOG_FILE).read_text().splitlines()
    assert len(lines) == 2 and all(json.loads(line)["time"] for line in lines)


def test_the_log_answers_why_a_memory_was_not_chosen(folder: Path, make_memory: MakeMemory) -> None:
    for n in range(3):
        make_memory(f"feedback_lint-{n}.md", description="Run the linter before every commit")
    recall(_dir(folder), "run the linter", k=1)
    candidates = read_log(folder)[0]["candidates"]
    assert [c["why_not"] for c in candidates] == [None, "not in the top 1", "not in the top 1"]


def test_no_log_when_asked(folder: Path, deploys: None) -> None:
    recall(_dir(folder), "friday deploy", log=False)
    recall(_dir(folder, log=False), "friday deploy")
    assert read_log(folder) == []


def test_the_log_rotates_past_its_size(folder: Path, deploys: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store, "LOG_MAX_BYTES", 1500)
    for n in range(6):
        recall(_dir(folder), f"deploy to production on friday {n}")
    log = folder / STATE_DIR / LOG_FILE
    older = log.with_name(LOG_FILE + ".1")
    assert older.is_file() and log.stat().st_size <= 1500
    queries = [json.loads(line)["query"] for path in (older, log) for line in path.read_text().splitlines()]
    assert queries[-1] == "deploy to production on friday 5" and queries == sorted(queries)


def test_an_unwritable_log_does_not_stop_recall(folder: Path, deploys: None) -> None:
    (folder / STATE_DIR).mkdir(exist_ok=True)
    (folder / STATE_DIR / LOG_FILE).mkdir()  # a folder where the log should be
    result = recall(_dir(folder), "deploy to production on friday")
    assert result.results and result.log_path is None and result.log_error


def test_a_torn_log_line_is_skipped(folder: Path, deploys: None) -> None:
    recall(_dir(folder), "friday deploy")
    with open(folder / STATE_DIR / LOG_FILE, "a") as handle:
        handle.write('{"query": "torn')
    assert [e["query"] for e in read_log(folder)] == ["friday deploy"]


# --- the stored index -------------------------------------------------------------------------


def test_the_index_is_stored_and_follows_every_change(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("feedback_lint.md", description="Run the linter before every commit")
    assert _paths(folder, "linter commit") == ["feedback_lint.md"]
    stored = folder / STATE_DIR / INDEX_FILE
    assert stored.is_file()

    make_memory("feedback_lint.md", name="format", description="Format the code before every push")  # changed
    assert _paths(folder, "linter commit") == []
    assert _paths(folder, "format the code before push") == ["feedback_lint.md"]

    make_memory("reference_ci.md", description="The CI pipeline runs the linter on every push")  # added
    assert _paths(folder, "linter pipeline") == ["reference_ci.md"]

    (folder / "reference_ci.md").unlink()  # removed
    assert _paths(folder, "linter pipeline") == []

    make_memory("feedback_lint.md", name="format", description="Format the code before every push",
                status="superseded")  # fmt: skip
    assert _paths(folder, "format the code before push") == []


def test_the_stored_index_is_what_a_fresh_build_gives(folder: Path, deploys: None) -> None:
    queries = ["deploy on friday", "grafana cluster alerts", "oat milk"]
    built = [recall(MemoryDir(folder, today=TODAY, cache=False), q, log=False).candidates for q in queries]
    recall(_dir(folder), "warm it", log=False)  # writes .memdir/recall-index
    stored = [recall(_dir(folder), q, log=False).candidates for q in queries]
    assert stored == built
    index, _ = _Stored.read(folder / STATE_DIR / INDEX_FILE)
    for term in ("deploy", "friday", "cluster", "oat", "absent"):  # df counts without decoding the postings
        assert index.df(term) == len(index.postings(term))


@pytest.mark.parametrize(
    "content",
    [b"", b"garbage\n", b"memdir recall index 1\n{not json\n", b"memdir recall index 1\n{\"memdir\": \"0.0.0\"}\n",
     b"memdir recall index 0\nold format\n"],
)  # fmt: skip
def test_a_corrupt_or_stale_index_file_is_rebuilt(folder: Path, deploys: None, content: bytes) -> None:
    expected = _paths(folder, "deploy on friday")
    stored = folder / STATE_DIR / INDEX_FILE
    stored.write_bytes(content)
    assert _paths(folder, "deploy on friday") == expected
    assert stored.read_bytes().startswith(b"memdir recall index")


def test_a_truncated_index_file_is_rebuilt(folder: Path, deploys: None) -> None:
    expected = _paths(folder, "grafana cluster")
    stored = folder / STATE_DIR / INDEX_FILE
    data = stored.read_bytes()
    stored.write_bytes(data[: len(data) // 2])
    assert _paths(folder, "grafana cluster") == expected


def test_an_index_from_another_folder_is_not_trusted(tmp_path: Path, make_memory: MakeMemory, folder: Path) -> None:
    make_memory("feedback_lint.md", description="Run the linter before every commit")
    _paths(folder, "linter")
    other = tmp_path / "other"
    other.mkdir()
    make_memory("feedback_tea.md", description="The user drinks green tea", root=other)
    (other / STATE_DIR).mkdir()
    (other / STATE_DIR / INDEX_FILE).write_bytes((folder / STATE_DIR / INDEX_FILE).read_bytes())
    assert _paths(other, "linter") == [] and _paths(other, "green tea") == ["feedback_tea.md"]


def test_without_the_cache_nothing_is_written(folder: Path, deploys: None) -> None:
    recall(MemoryDir(folder, today=TODAY, cache=False), "deploy on friday", log=False)
    assert not (folder / STATE_DIR / INDEX_FILE).exists()


# --- the command ------------------------------------------------------------------------------


def test_cli_prints_the_chosen_memories(folder: Path, deploys: None) -> None:
    result = invoke_memdir("--dir", str(folder), "recall", "deploy to production on friday")
    assert result.exit_code == 0, result.output
    assert "feedback_no-friday-deploys.md" in result.stdout and "No production deploys on Fridays" in result.stdout


def test_cli_json_has_the_documented_shape(folder: Path, deploys: None) -> None:
    result = invoke_memdir("--dir", str(folder), "recall", "deploy to production on friday", "--format", "json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert list(payload) == ["results"]
    assert list(payload["results"][0]) == ["name", "path", "type", "score", "relevance", "recency", "importance"]
    assert payload["results"][0]["path"] == "feedback_no-friday-deploys.md"


def test_cli_json_explain_says_why_and_why_not(folder: Path, deploys: None) -> None:
    result = invoke_memdir("--dir", str(folder), "recall", "laptop cpu", "--format", "json", "--explain")
    payload = json.loads(result.stdout)
    assert payload["results"] == [] and payload["passed_gate"] is False and payload["gate"] == 0.8
    assert payload["near_misses"][0]["path"] == "reference_grafana.md"
    assert "below the gate" in payload["near_misses"][0]["why_not"]
    assert payload["gate_figures"]["passed"] is False and payload["gate_figures"]["chance"] >= 1


def test_cli_explain_shows_the_sum_and_the_matched_words(folder: Path, deploys: None) -> None:
    result = invoke_memdir("--dir", str(folder), "recall", "deploy to production on friday", "--explain")
    assert result.exit_code == 0
    assert "= 0.6 x relevance" in result.stdout and "matched: " in result.stdout


def test_cli_says_why_nothing_was_recalled(folder: Path, deploys: None) -> None:
    result = invoke_memdir("--dir", str(folder), "recall", "laptop cpu")
    assert result.exit_code == 0 and result.stdout == ""
    assert "would match the query as well" in result.stderr
    result = invoke_memdir("--dir", str(folder), "recall", "zebra")
    assert "no memory shares a word with the query" in result.stderr


def test_cli_k_and_no_log(folder: Path, make_memory: MakeMemory) -> None:
    for n in range(3):
        make_memory(f"feedback_lint-{n}.md", description="Run the linter before every commit")
    result = invoke_memdir("--dir", str(folder), "recall", "linter commit", "-k", "2", "--format", "json",
                           "--no-log")  # fmt: skip
    assert len(json.loads(result.stdout)["results"]) == 2
    assert read_log(folder) == []


def test_cli_reads_the_recall_settings(folder: Path, deploys: None, tmp_path: Path) -> None:
    (tmp_path / ".memdir.toml").write_text("[recall]\nrecency-weight = 0\nimportance-weight = 0\n")
    result = invoke_memdir("--dir", str(folder), "recall", "friday deploy", "--format", "json", cwd=tmp_path)
    best = json.loads(result.stdout)["results"][0]
    assert best["score"] == pytest.approx(0.6 * best["relevance"], abs=1e-3)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["recall", "x", "--llm"], "needs an Anthropic API key"),
        (["--dir", "/nonexistent/memory", "recall", "x"], "does not exist"),
    ],
)
def test_cli_errors_are_one_line_and_exit_2(
    folder: Path, args: list[str], message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    if args[0] == "recall":
        args = ["--dir", str(folder), *args]
    result = invoke_memdir(*args)
    assert result.exit_code == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.output


def test_cli_bad_config_is_one_line_and_exit_2(folder: Path, tmp_path: Path) -> None:
    (tmp_path / ".memdir.toml").write_text("[recall]\ngate = 7\n")
    result = invoke_memdir("--dir", str(folder), "recall", "x", cwd=tmp_path)
    assert result.exit_code == 2 and "recall.gate" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


# --- --llm, against recorded responses ----------------------------------------------------------


def _tool_reply(selected: list[str]) -> dict[str, Any]:
    """A Messages API response, as recorded, in which the model calls select_memories."""
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [{"type": "tool_use", "id": "toolu_01", "name": "select_memories", "input": {"selected": selected}}],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 412, "output_tokens": 38},
    }


def test_llm_recall_sends_the_manifest_and_keeps_the_models_picks(folder: Path, deploys: None,
                                                                  make_memory: MakeMemory) -> None:  # fmt: skip
    make_memory("feedback_old.md", description="Deploys need a ticket", status="superseded")
    sent: list[dict[str, Any]] = []
    reply = _tool_reply(["feedback_no-friday-deploys.md", "no-such-memory.md", "grafana"])
    client = recorded_client([(200, reply)], sent)
    result = recall_llm(_dir(folder), "Ship the fix, it's Friday", client=client, model="claude-test")

    request = sent[0]
    assert request["model"] == "claude-test"
    assert request["tool_choice"] == {"type": "tool", "name": "select_memories"}
    assert request["tools"][0]["input_schema"]["properties"]["selected"]["maxItems"] == 5
    manifest = request["messages"][0]["content"]
    assert "Ship the fix, it's Friday" in manifest
    assert "- feedback_no-friday-deploys.md (feedback): No production deploys on Fridays" in manifest
    assert "feedback_old.md" not in manifest  # superseded memories are not offered

    assert [r.path for r in result.results] == ["feedback_no-friday-deploys.md", "reference_grafana.md"]
    assert result.method == "llm" and result.results[0].relevance == 1.0
    assert result.llm is not None and result.llm["unknown"] == ["no-such-memory.md"]
    logged = read_log(folder)[-1]
    assert logged["method"] == "llm" and logged["llm"]["picked"][0] == "feedback_no-friday-deploys.md"
    assert logged["chosen"] == ["feedback_no-friday-deploys.md", "reference_grafana.md"]


def test_llm_recall_can_pick_nothing(folder: Path, deploys: None) -> None:
    result = recall_llm(_dir(folder), "Explain TCP", client=recorded_client([(200, _tool_reply([]))], []))
    assert result.results == []


def test_llm_recall_keeps_at_most_k(folder: Path, deploys: None) -> None:
    reply = _tool_reply(["reference_grafana.md", "user_coffee.md", "feedback_no-friday-deploys.md"])
    result = recall_llm(_dir(folder), "anything", k=2, client=recorded_client([(200, reply)], []))
    assert [r.path for r in result.results] == ["reference_grafana.md", "user_coffee.md"]


def test_llm_recall_api_errors_become_recall_errors(folder: Path, deploys: None) -> None:
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    with pytest.raises(RecallError, match=r"answered 529 \(Overloaded\) after the SDK.s retries"):
        recall_llm(_dir(folder), "deploy", client=recorded_client([(529, error)], []))
    text_only = _tool_reply([]) | {"content": [{"type": "text", "text": "I would pick the deploy rule."}]}
    with pytest.raises(RecallError, match="did not call select_memories"):
        recall_llm(_dir(folder), "deploy", client=recorded_client([(200, text_only)], []))
    with pytest.raises(RecallError, match="an answer that is not a Messages API response"):  # a proxy's page
        recall_llm(_dir(folder), "deploy", client=recorded_client([(200, "<html>Bad gateway</html>")], []))
    for garbage in ('{"content": "not a list"}', "[1, 2]", '"text"', "{}"):
        with pytest.raises(RecallError):
            recall_llm(_dir(folder), "deploy", client=recorded_client([(200, garbage)], []))


def test_cli_llm_goes_through_the_sdk(folder: Path, deploys: None, monkeypatch: pytest.MonkeyPatch) -> None:
    import anthropic

    sent: list[dict[str, Any]] = []
    recorded = recorded_client([(200, _tool_reply(["feedback_no-friday-deploys.md"]))], sent)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setattr(anthropic, "Anthropic", lambda **_: recorded)
    result = invoke_memdir("--dir", str(folder), "recall", "ship it", "--llm", "--model", "claude-x",
                           "--format", "json")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert [r["path"] for r in json.loads(result.stdout)["results"]] == ["feedback_no-friday-deploys.md"]
    assert sent[0]["model"] == "claude-x"


def test_recall_does_not_import_the_sdk(tmp_path: Path) -> None:
    import subprocess

    probe = "import sys, memdir.read.recall; print(sorted(m for m in sys.modules if m.split('.')[0] == 'anthropic'))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


# --- the query gate: calibrated to the folder --------------------------------------------------


def _made_up_folder(root: Path, size: int = 300, everywhere: str = "") -> list[list[str]]:
    """`size` memories of made-up words (each word in about 2% of them; `everywhere` in all of them), so
    that which words meet by chance is known. Returns each memory's body words."""
    syllables = ["ka", "lo", "mi", "ru", "te", "zo", "pa", "ni", "ve", "su", "do", "gi"]
    vocabulary = [a + b + c for a in syllables for b in syllables for c in syllables]
    rng = random.Random(3)
    root.mkdir(parents=True)
    bodies = []
    for i in range(size):
        head, body = rng.sample(vocabulary, 2), rng.sample(vocabulary, 36)
        bodies.append(body)
        description = " ".join(["Note", *head, everywhere]).strip()
        (root / f"project_n{i}.md").write_text(
            f"---\nname: n{i}\ndescription: {description}\ntype: project\n---\n{' '.join(body)}\n"
        )
    return bodies


def test_the_gate_weighs_words_met_together_against_chance_in_this_folder(tmp_path: Path) -> None:
    bodies = _made_up_folder(tmp_path / "memory")
    folder = _dir(tmp_path / "memory", gate=1.0)  # the chance path alone
    together = recall(folder, " ".join(bodies[7][:3]), log=False)
    assert together.gate is not None and together.gate.passed and together.gate.chance <= 0.05
    assert together.results[0].path == "project_n7.md"
    # the same three kinds of word, each from another memory: what chance alone gives here
    apart = recall(folder, " ".join(body[0] for body in bodies[:3]), log=False)
    assert apart.gate is not None and not apart.gate.passed and apart.gate.chance > 0.05
    assert apart.results == [] and "by chance" in apart.why_not(apart.candidates[0])  # type: ignore[operator]


def test_a_word_in_most_of_the_folder_does_not_decide_the_gate(tmp_path: Path) -> None:
    bodies = _made_up_folder(tmp_path / "memory", size=120, everywhere="Lantern")
    folder = _dir(tmp_path / "memory")
    alone = recall(folder, "Lantern", log=False)
    assert alone.gate is not None and alone.gate.common == ("lantern",) and not alone.passed_gate
    with_words = recall(folder, "Lantern " + " ".join(bodies[5][:3]), log=False)
    assert with_words.gate is not None and with_words.gate.common == ("lantern",)
    assert with_words.passed_gate and with_words.results[0].path == "project_n5.md"


def _head_words(root: Path, i: int) -> list[str]:
    """The made-up words of memory n{i}'s description (_made_up_folder)."""
    text = (root / f"project_n{i}.md").read_text()
    description = next(line for line in text.splitlines() if line.startswith("description: "))
    return [w for w in description.split()[2:] if w not in ("Note", "Maria")]


def test_a_question_naming_the_folders_subject_passes_the_gate(tmp_path: Path) -> None:
    """A folder of one person's conversation names her in every memory: the gate cannot weigh her name
    (it is everywhere), and one other word can never beat chance. Naming her says the question is about
    what the folder is about; another folder's question names someone else (issue 31, LoCoMo)."""
    bodies = _made_up_folder(tmp_path / "memory", size=120, everywhere="Maria")
    folder = _dir(tmp_path / "memory")
    word = bodies[5][0]
    asked = recall(folder, f"When did Maria mention the {word}?", log=False)
    assert asked.passed_gate and "project_n5.md" in [r.path for r in asked.results]
    assert asked.gate is not None and asked.gate.subject == ("maria",) and asked.gate.chance >= 1
    assert "names maria, what the folder is about" in asked.gate.why(folder.config.recall)
    # another person's question, a subject written in lower case, or a word no memory holds: no such pass
    for other in (f"When did Joanna mention the {word}?", f"when did maria mention the {word}?",
                  f"When did Maria mention the {word} and Kubernetes?"):  # fmt: skip
        silent = recall(folder, other, log=False)
        assert silent.gate is not None and not silent.passed_gate and silent.results == [], other
    unknown = recall(folder, f"When did Maria mention the {word} and Kubernetes?", log=False).gate
    assert unknown is not None and unknown.unknown == ("kubernetes",)


def test_a_query_restating_one_memorys_description_is_a_look_up(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    _made_up_folder(root, size=120)
    folder = _dir(root, gate=1.0, gate_chance=0.0)  # the look-up alone
    first, second = _head_words(root, 5)
    found = recall(folder, f"{second} {first}", log=False)
    assert found.gate is not None and found.gate.lookup and found.results[0].path == "project_n5.md"
    assert "all in the best match's name or description" in found.gate.why(folder.config.recall)
    # words of two memories' descriptions, or one word no memory holds besides: not a look-up
    assert not recall(folder, f"{first} {_head_words(root, 6)[0]}", log=False).passed_gate
    assert not recall(folder, f"{second} {first} zuqoxite", log=False).passed_gate


def test_names_are_words_capitalised_inside_a_sentence_or_in_capitals() -> None:
    from memdir.read.terms import named_words

    assert named_words("What did Maria say? Where NASA went. Then (Bob) and 'Ann' too") == {
        "maria",
        "nasa",
        "bob",
        "ann",
    }
    assert named_words("Deploy the app. Check it") == frozenset()


def test_the_log_says_why_recall_stayed_silent(folder: Path, deploys: None) -> None:
    recall(_dir(folder), "Which CPU should the new laptop have?")
    entry = read_log(folder)[-1]
    assert entry["passed_gate"] is False and entry["settings"]["gate_chance"] == 0.01
    assert entry["gate"]["chance"] >= 1 and entry["gate"]["weighed"] == ["cpu"]
    assert "by chance 1 memory would match the query as well" in entry["gate"]["why"]


@pytest.mark.slow  # about 400 recalls over the real folders, copied to a temporary folder
@pytest.mark.skipif(not (SHARED / "corpus" / "real").is_dir(), reason="the real folders in ../shared are not here")
def test_realistic_no_answer_protocol_on_the_real_folders() -> None:
    sys.path.insert(0, str(ROOT))
    try:
        from scripts import eval_noanswer
    finally:
        sys.path.remove(str(ROOT))
    results = eval_noanswer.evaluate((), SHARED / "corpus" / "real", SHARED / "eval" / "dev" / "recall")
    ((ours, plain),) = results.values()
    # Measured (docs/recall.md): 1.0% of answerable queries get nothing, 13.8% of cross-folder queries
    # (27 of 196) inject something; issue 20's targets are 10% and 15%, two queries above that.
    assert ours.silent / ours.own <= 0.05 and ours.injected / ours.cross <= 0.15
    if plain is not None:  # plain BM25 at the dev set's floor is silent far more often
        assert plain.silent > 5 * ours.silent


# --- the dev-set evaluation ---------------------------------------------------------------------

DEV = SHARED / "eval" / "dev" / "recall"


@pytest.mark.skipif(not (DEV / "queries.jsonl").is_file(), reason="the labelled data in ../shared is not here")
def test_dev_set_recall_stays_above_its_floor_and_beats_bm25(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT))
    try:
        from scripts import eval_recall as ev
    finally:
        sys.path.remove(str(ROOT))
    memories, queries = ev.read_jsonl(DEV / "memories.jsonl"), ev.read_jsonl(DEV / "queries.jsonl")
    today = max(dt.date.fromisoformat(str(m["created"])) for m in memories) + dt.timedelta(days=1)
    ids = ev.write_folder(tmp_path / "memory", memories)
    root = MemoryDir(tmp_path / "memory", today=today)
    recall_at_5, precision_at_5, false_injection = ev.evaluate(
        lambda q: [ids[r.path] for r in recall(root, q, log=False).results], queries
    )
    # Measured 0.672 / 0.397 / 8.3% (docs/recall.md); the floors leave room for a query's worth of change.
    assert recall_at_5 >= 0.65 and precision_at_5 >= 0.35 and false_injection <= 0.10
    baseline = ev.bm25_baseline(memories)
    floor = ev.lowest_fitting_floor(baseline, queries)
    assert floor is not None
    plain = ev.evaluate(lambda q: [key for key, s in baseline(q) if s > floor], queries)
    assert plain[2] <= 0.10 and recall_at_5 > plain[0] + 0.1


def test_other_commands_do_not_load_recall() -> None:
    import subprocess
    import sys

    code = "import sys, memdir.cli; memdir.cli._typer_app(); print('memdir.read.recall' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_damaged_log_line_is_skipped_not_fatal(folder: Path, deploys: None) -> None:
    recall(_dir(folder), "deploy to production on friday")
    log = folder / STATE_DIR / LOG_FILE
    with log.open("ab") as handle:
        handle.write(b'{"query": "torn\n\xff\xfe not utf-8\n[1, 2]\n')
    recall(_dir(folder), "friday deploy")
    assert [entry["query"] for entry in read_log(folder)] == ["deploy to production on friday", "friday deploy"]


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_an_empty_query_is_an_error_and_is_not_logged(folder: Path, deploys: None, query: str) -> None:
    # Logged as a recall that found nothing, it would count in stats' empty-recall rate.
    for command in (["recall", query], ["recall", query, "--llm"], ["context", "--for", query]):
        result = invoke_memdir("--dir", str(folder), *command, env={"ANTHROPIC_API_KEY": "test-key"})
        assert result.exit_code == 2, (command, result.output)
        assert "the query is empty" in result.stderr and "Traceback" not in result.output
    assert read_log(folder) == []


def test_files_that_cannot_be_read_are_named_by_every_recall(folder: Path, deploys: None) -> None:
    (folder / "user_bad.md").write_text('---\nname: x\ndescription: "Note" y\ntype: user\n---\nb\n')
    (folder / "blob.md").write_bytes(bytes(range(256)))
    (folder / "notes.md").write_text("# Just notes, no frontmatter: not a memory, and not a problem\n")
    expected = [("blob.md", "is a binary file, not markdown"), ("user_bad.md", "invalid YAML")]

    def named(result: RecallResult) -> list[tuple[str, str]]:
        return [(path, why[: len(want)]) for (path, why), (_, want) in zip(result.unreadable, expected, strict=True)]

    assert named(recall(_dir(folder), "deploy on friday")) == expected  # built
    assert named(recall(_dir(folder), "deploy on friday")) == expected  # read from .memdir/recall-index
    for path in folder.glob("*.md"):  # old enough for the stored index to be trusted with them
        os.utime(path, (time.time() - 100, time.time() - 100))
    assert named(recall(_dir(folder), "deploy on friday")) == expected
    (folder / "user_new.md").write_text("---\nname: new\ndescription: New one\ntype: user\n---\nb\n")
    assert named(recall(_dir(folder), "deploy on friday")) == expected  # rebuilt, the others reused
    result = invoke_memdir("--dir", str(folder), "recall", "deploy on friday")
    assert result.exit_code == 0
    assert "2 files could not be read as memories, so recall did not search them" in result.stderr
    assert "blob.md: is a binary file" in result.stderr and "notes.md" not in result.stderr


def test_an_importance_of_nan_counts_as_the_default(folder: Path, make_memory: MakeMemory) -> None:
    # YAML reads `.nan` as a float; compared with anything it is false, so it sank below every memory
    # and went into the JSON output and the log as a bare NaN, which is not JSON.
    make_memory("reference_walrus.md", description="Walrus feeding schedule at the zoo", importance=".nan")
    result = invoke_memdir("--dir", str(folder), "recall", "walrus feeding schedule", "--format", "json", "--explain")
    assert result.exit_code == 0, result.output
    [found] = json.loads(result.stdout)["results"]
    assert found["importance"] == 0.5
    assert "NaN" not in (folder / ".memdir" / LOG_FILE).read_text()


@pytest.mark.parametrize("cache", [True, False], ids=["stored-index", "no-cache"])
def test_a_folder_where_no_memory_has_a_body_is_searched(folder: Path, make_memory: MakeMemory, cache: bool) -> None:
    # Every body empty made BM25's average body length 0, and recall a ZeroDivisionError.
    make_memory("project_deploy.md", body="", description="Deploys go out on Tuesdays")
    make_memory("project_other.md", body="", description="The other deploy runs nightly")
    root = MemoryDir(folder, today=TODAY, cache=cache)
    for _ in range(2):  # built, then (with the cache) read back from the stored index
        assert recall(root, "when do deploys go out").results[0].path == "project_deploy.md"
    flags = [] if cache else ["--no-cache"]
    result = invoke_memdir("--dir", str(folder), *flags, "recall", "when do deploys go out")
    assert result.exit_code == 0 and "project_deploy.md" in result.stdout, result.output


def test_a_one_word_query_finds_the_memory_filed_under_it(tmp_path: Path, make_memory: MakeMemory) -> None:
    """One word cannot beat chance by co-occurrence: the null model gives it one memory by chance in
    any folder. It is a look-up, answered when a memory names the word in its name or description."""
    root = tmp_path / "memory"
    make_memory("user_fine.md", "Deploys go through the cluster.", root, description="Prefers kubernetes")
    make_memory("project_misc.md", "The kubernetes dashboard is slow on Mondays.", root, description="Misc notes")
    make_memory("user_other.md", "Writes Go.", root, description="Backend developer")
    found = recall(_dir(root), "kubernetes", log=False)
    assert found.gate is not None and found.gate.lookup and found.passed_gate
    assert found.results[0].path == "user_fine.md"
    assert "one uncommon word" in found.gate.why(_dir(root).config.recall)
    # in a body only, or among other words, the word must still beat chance
    assert not recall(_dir(root), "dashboard", log=False).passed_gate
    assert not recall(_dir(root), "kubernetes laptop budget", log=False).gate.lookup  # type: ignore[union-attr]


def _one_chinese_memory(tmp_path: Path, description: str, body: str) -> MemoryDir:
    """A made-up folder of 120 English memories and one Chinese one (project_zh.md), recalled through
    the chance path of the gate alone."""
    root = tmp_path / "memory"
    _made_up_folder(root, size=120)
    (root / "project_zh.md").write_text(f"---\nname: zh\ndescription: {description}\ntype: project\n---\n{body}\n")
    return _dir(root, gate=1.0)


def test_common_chinese_words_meeting_say_nothing_about_a_subject(tmp_path: Path) -> None:
    """The general-language prior covers Chinese, Japanese and Korean too: "用户" (user) and "需要" (need)
    meet in any Chinese text, as "explain" and "example" do in English, so their meeting in one memory
    does not open the gate; a rare word met with them does."""
    folder = _one_chinese_memory(tmp_path, "用户需要所有文件的稀疏注意力内核", "用户需要所有文件。")
    common = recall(folder, "用户 需要 所有 文件", log=False)
    assert common.gate is not None and not common.gate.specific and not common.passed_gate
    rare = recall(folder, "用户 需要 稀疏 内核", log=False)
    assert rare.gate is not None and rare.gate.specific and rare.passed_gate
    assert rare.results[0].path == "project_zh.md"


def test_the_cjk_prior_lists_words_as_recall_reads_them() -> None:
    """terms._cjk_prior reads the list without stemming: each word must be one pair term as it stands."""
    from memdir.read.common_cjk import COMMON_CJK
    from memdir.text.words import term_list

    words = [word for band in COMMON_CJK.values() for word in band.split()]
    assert len(words) == len(set(words)) > 5000
    assert all(len(word) == 2 and term_list(word)[-1] == word for word in words)


def test_the_no_answer_protocol_rewords_with_the_words_recall_reads() -> None:
    """A reworded description keeps words whole as recall tokenises them ("D505", not "D" and "505",
    which no memory holds), and none that recall ignores in a query (numbers of one or two digits, a
    CJK run's last single character)."""
    sys.path.insert(0, str(ROOT))
    try:
        from scripts.eval_noanswer import reworded
    finally:
        sys.path.remove(str(ROOT))
    query = reworded("Switches D500 and D505 swapped in rack 12 of the 2 server rooms, per ticket 4711")
    assert query == "ticket rooms rack D505 Switches"
    assert reworded("论文合作者王磊负责理论部分") == "责理 者王 论文"  # 13 characters: six words, 分 left over
    assert reworded("Deploy 2 of 3 nodes in 12 days") is None  # deploy, nodes, days: fewer than four words


def test_chinese_pairs_across_a_particle_are_not_weighed_by_the_gate(tmp_path: Path) -> None:
    """The particles "的" and "了" join words, so the pairs that hold one ("中的", "的自") straddle a word
    boundary in any Chinese text, the query's and the memory's: their meeting says nothing of a subject."""
    folder = _one_chinese_memory(tmp_path, "系统中的自动稀疏内核", "系统中的自动稀疏内核。")
    fragments = recall(folder, "中的 的自", log=False)
    assert fragments.gate is not None and fragments.gate.weighed == () and not fragments.passed_gate
    words = recall(folder, "中的 稀疏 内核", log=False)
    assert words.gate is not None and words.gate.weighed == ("稀疏", "内核") and words.passed_gate
    assert words.results[0].path == "project_zh.md"


def test_japanese_words_made_with_ryo_are_weighed_by_the_gate(tmp_path: Path) -> None:
    """了 is a particle in Chinese only: in Japanese it is half of words such as 完了 (completion), so a
    query written with kana keeps them; 的 stays a suffix in both."""
    folder = _one_chinese_memory(tmp_path, "移行が完了したら監視を止める", "移行が完了したら監視を止める。")
    japanese = recall(folder, "移行 完了 した", log=False)
    assert japanese.gate is not None and "完了" in japanese.gate.weighed
    chinese = recall(folder, "移行 完了", log=False)  # no kana: read as Chinese, where 完了 is "X done"
    assert chinese.gate is not None and "完了" not in chinese.gate.weighed
    dotted = recall(folder, "移行・完了", log=False)  # the middle dot is punctuation in Chinese too
    assert dotted.gate is not None and "完了" not in dotted.gate.weighed

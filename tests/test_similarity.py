"""memdir.text.similarity: duplicates, possible contradictions, and a folder scan that is not all-pairs."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memdir.text import similarity, words
from memdir.text.similarity import (
    MemoryText,
    compare,
    duplicate_groups,
    fact_differences,
    find_pairs,
)
from memdir.text.words import term_list

DEV_PAIRS = Path(__file__).parents[1].parent / "shared" / "eval" / "dev" / "pairs.jsonl"


def mem(key: str, name: str, description: str, body: str, type: str | None = "project") -> MemoryText:
    return MemoryText(key, name, description, body, type)


def test_what_an_apostrophe_leaves_of_a_negation_is_not_a_term() -> None:
    # "didn't" splits into "didn" and "t"; "didn" then stemmed to "did" and matched any memory saying "did".
    assert term_list("The stamps didn't appear and the app isn't syncing; we haven't shipped") == [
        "stamp", "appear", "app", "sync", "shipp",
    ]  # fmt: skip


def test_the_fold_skips_stripping_only_where_no_character_could_hold_an_accent() -> None:
    # _fold's fast path trusts _may_hold_accents() to cover every character that decomposes to an
    # accent: a Python with a newer Unicode database must not make it skip one.
    import unicodedata

    for code in range(0x110000):
        char = chr(code)
        if words._ACCENTS.search(unicodedata.normalize("NFD", char)):
            assert words._may_hold_accents().match(char), f"U+{code:04X}"
    assert words.fold("Español — 日本語 ≠ Ångström") == "espanol — 日本語 = angstrom"
    assert words.fold("会議 — 한국어") == "会議 — 한국어"
    assert words.fold("\u1100\u1161") == "\uac00"  # conjoining jamo compose, as before


# Hand-written pairs, none taken from the labelled dev set.
RENEWAL = mem(
    "a.md",
    "domain-renewal-registrar",
    "The studio domain renews through Gandi every March",
    "Our domain is registered at Gandi and auto-renews each March on the card ending 4421.\n\n"
    "**Why:** A lapsed renewal took the shop offline in 2023.\n**How to apply:** Check the card before March.",
)
RENEWAL_REWORDED = mem(
    "b.md",
    "gandi-domain-renewal",
    "Domain registration is at Gandi and renews in March",
    "The studio's domain is with Gandi; it renews automatically every March, charged to the card ending 4421.\n\n"
    "**Why:** In 2023 a missed renewal took the shop offline.\n**How to apply:** Before March, check the card.",
)
RETRY_5 = mem(
    "retry-5.md",
    "webhook-retry-limit",
    "Payment webhooks are retried at most 5 times",
    "The payment webhook consumer retries a failed delivery at most 5 times with exponential backoff.\n\n"
    "**Why:** Stripe stops sending after repeated failures.\n**How to apply:** Keep max_retries at 5.",
)
RETRY_8 = mem(
    "retry-8.md",
    "webhook-retry-limit-raised",
    "Payment webhooks are retried at most 8 times",
    "The payment webhook consumer retries a failed delivery at most 8 times with exponential backoff.\n\n"
    "**Why:** Stripe stops sending after repeated failures.\n**How to apply:** Keep max_retries at 8.",
)
LINTER = mem(
    "lint.md",
    "python-lint-ruff",
    "Python code is linted with ruff",
    "Run ruff check before each commit; the config lives in pyproject.toml.\n\n"
    "**Why:** One tool instead of flake8 and isort.\n**How to apply:** Fix findings before pushing.",
    "feedback",
)
FORMATTER = mem(
    "format.md",
    "python-format-line-length",
    "Python code is formatted with a 120-character line length",
    "Format Python with ruff format and a line length of 120.\n\n"
    "**Why:** Long type hints wrapped badly at 88.\n**How to apply:** Never hand-wrap lines.",
    "feedback",
)
BIRTHDAY = mem(
    "bday.md", "partner-birthday", "Partner's birthday is in early June", "Book the restaurant in May.", "user"
)


def test_reworded_duplicate_is_found() -> None:
    verdict = compare(RENEWAL, RENEWAL_REWORDED)
    assert verdict is not None
    assert verdict.label == "duplicate"
    assert (verdict.a, verdict.b) == ("a.md", "b.md")
    assert verdict.score >= similarity.DUPLICATE_SCORE
    assert "4421" in verdict.reason  # the shared facts are named


def test_same_topic_with_a_different_number_is_a_contradiction_not_a_duplicate() -> None:
    verdict = compare(RETRY_5, RETRY_8)
    assert verdict is not None
    assert verdict.label == "contradiction"
    assert "numbers differ: 5 vs 8" in verdict.reason
    assert fact_differences(RETRY_5, RETRY_8)


# Pairs on one subject whose second memory changes the first, and the words its reason must name.
CHANGES = {
    "a changed owner": (
        mem("o1.md", "billing-owner", "Billing service is owned by Priya", "Ask Priya Raman about billing changes."),
        mem("o2.md", "billing-owner-now", "Billing service is owned by Tomasz", "Tomasz Nowak owns billing changes."),
        ["Priya", "Tomasz"],
    ),
    "an announced change": (
        mem("q1.md", "queue-broker", "Background jobs use the Redis queue", "Jobs are enqueued on the Redis queue."),
        mem("q2.md", "queue-broker-sqs", "Background jobs no longer use the Redis queue", "Jobs are enqueued on SQS."),
        ["no longer"],
    ),
    # "moving off" was not read as a change (only "moved off" was), so this update was a "duplicate".
    "a change in progress": (
        mem("c.md", "mobile-stack", "The field app is built with Flutter", "Field app stack: Flutter, one codebase."),
        mem(
            "d.md", "mobile-stack-native", "The field app is moving to native Swift and Kotlin",
            "The field app is moving off Flutter to native Swift and Kotlin apps.",
        ),
        ["moving to"],
    ),
    # eu-central-1 and eu-west-1 were read as neither names nor numbers, so a moved region was a "duplicate":
    # an identifier ending in a number after a hyphen is a name.
    "a moved region": (
        mem("r1.md", "prod-region", "Production runs in eu-central-1", "All production workloads run in eu-central-1."),
        mem("r2.md", "prod-region-west", "Production runs in eu-west-1", "All production workloads run in eu-west-1."),
        ["eu-central-1", "eu-west-1"],
    ),
}  # fmt: skip


@pytest.mark.parametrize("change", CHANGES.values(), ids=CHANGES.keys())
def test_a_change_of_one_subject_is_a_contradiction(change: tuple[MemoryText, MemoryText, list[str]]) -> None:
    before, after, named = change
    verdict = compare(before, after)
    assert verdict is not None and verdict.label == "contradiction"
    assert all(word in verdict.reason for word in named), verdict.reason


def test_a_shared_template_about_different_subjects_is_not_a_contradiction() -> None:
    # Each head names something the other memory never mentions: two facts, not one fact changed.
    payments = mem("p.md", "payments-owner", "The payments owner is Alice", "Alice owns the payments service.")
    search = mem("s.md", "search-owner", "The search owner is Bob", "Bob owns the search service.")
    assert compare(payments, search) is None
    gateway = mem("g.md", "uart-gateway", "Debug UART on the gateway board runs at 115200 baud", "115200 8N1.")
    sensor = mem("n.md", "uart-sensor", "Debug UART on the sensor board runs at 921600 baud", "921600 8N1.")
    assert compare(gateway, sensor) is None
    # ... while the same subject with another owner still is one
    changed = mem("p2.md", "payments-owner-bob", "The payments owner is Bob", "Bob owns the payments service.")
    verdict = compare(payments, changed)
    assert verdict is not None and verdict.label == "contradiction"


# A rule reworded from end to end: the ordinary words change, the specific facts (a backup's 14 days,
# its bucket) stay. Word overlap alone leaves it under DUPLICATE_SCORE.
BACKUPS = mem(
    "bk1.md",
    "staging-snapshots",
    "Staging database snapshots are kept for 14 days",
    "Nightly snapshots of the staging Postgres go to s3://acme-db-backups and are deleted after 14 days.\n\n"
    "**Why:** Storage costs doubled when nobody pruned them.\n**How to apply:** Restore from the newest one.",
    "reference",
)
BACKUPS_REWORDED = mem(
    "bk2.md",
    "preprod-dumps-retention",
    "Where the pre-production DB dumps live and how long they stay",
    "Each night the pre-production database is dumped into s3://acme-db-backups; a dump is removed once it "
    "is 14 days old.\n\n**Why:** Unpruned dumps once doubled the bill.\n**How to apply:** Use the latest dump.",
    "reference",
)


BOARD = mem(
    "art1.md",
    "sprite-requests-board",
    "Sprite requests are tracked on the Trello board 'Field Kit - Art'",
    "Every new sprite or tileset request goes on the board 'Field Kit - Art'; the artist reads it on Fridays.",
    "reference",
)
BOARD_REWORDED = mem(
    "art2.md",
    "asking-the-illustrator",
    "How to ask the illustrator for new graphics",
    "For new visuals (characters, tiles), add a card to 'Field Kit - Art' in Trello; the illustrator goes "
    "through the cards once a week.",
    "reference",
)


@pytest.mark.parametrize(
    ("a", "b", "facts"), [(BACKUPS, BACKUPS_REWORDED, "14"), (BOARD, BOARD_REWORDED, "Field Kit - Art")]
)
def test_a_rewording_that_keeps_every_specific_fact_is_a_duplicate(a: MemoryText, b: MemoryText, facts: str) -> None:
    assert similarity.similarity(a, b) < similarity.DUPLICATE_SCORE
    verdict = compare(a, b)
    assert verdict is not None and verdict.label == "duplicate"
    assert verdict.reason.startswith(f"same facts, reworded: {facts}")


@pytest.mark.parametrize(
    "other",
    [
        # one more specific fact on one side: the same topic, not the same memory
        mem(
            "bk3.md", "preprod-dumps-region", BACKUPS_REWORDED.description,
            BACKUPS_REWORDED.body + " The bucket is replicated to eu-west-1.", "reference",
        ),
        # another type of statement with the same facts
        mem("bk4.md", "preprod-dumps-rule", *(BACKUPS_REWORDED.description, BACKUPS_REWORDED.body), "feedback"),
    ],
    ids=["an extra identifier", "another type"],
)  # fmt: skip
def test_shared_specific_facts_are_not_enough_without_the_rest(other: MemoryText) -> None:
    verdict = compare(BACKUPS, other)
    assert verdict is None or verdict.label != "duplicate", verdict


def test_small_counts_and_years_are_not_specific_facts() -> None:
    # "at most 4" and "in 2025" recur in unrelated memories: sharing them is no evidence of one fact.
    threads = mem(
        "t.md",
        "gateway-worker-threads",
        "Limit the gateway daemon to four worker threads",
        "Since 2025 the gateway runs at most 4 worker threads; more starved the packet forwarder.",
    )
    posts = mem(
        "p.md", "newsletter-threads", "Promote each newsletter issue with four teasers on Threads",
        "Since 2025 each issue gets at most 4 short posts on Threads.",
    )  # fmt: skip
    a, b = similarity._Profile.of(threads), similarity._Profile.of(posts)
    assert similarity._word_score(a, b) >= similarity._FACTS_SCORE
    assert similarity._score(a, b) < similarity.DUPLICATE_SCORE
    assert compare(threads, posts) is None


def test_one_shared_number_and_no_shared_words_is_chance() -> None:
    invoices = mem("i.md", "invoice-terms", "Client invoices are due 45 days after issue", "Net 45.", "reference")
    logs = mem("l.md", "log-rotation", "Log files rotate every 45 minutes", "Rotation: 45 minutes.", "reference")
    # The shared 45 alone lifts these short memories over _FACTS_SCORE; their words alone stay under it.
    a, b = similarity._Profile.of(invoices), similarity._Profile.of(logs)
    assert similarity._word_score(a, b) < similarity._FACTS_SCORE <= similarity._score(a, b)
    assert compare(invoices, logs) is None


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            mem("f1.md", "deploy-freeze", "Deploy freeze starts 2026-12-01", "No deploys from 2026-12-01."),
            mem("f2.md", "freeze-cancelled", "The deploy freeze of 2026-12-01 is cancelled",
                "The freeze planned for 2026-12-01 was called off; deploys go on as usual."),
        ),
        (
            mem("t1.md", "request-timeout", "Set the request timeout to 30 seconds in config/app.yaml",
                "The gateway reads config/app.yaml at start-up; 30 seconds suits the slow report endpoints.",
                "feedback"),
            mem("t2.md", "timeout-ceiling", "Never raise the API time limit above 30 seconds",
                "Keep it in config/app.yaml at 30 seconds at most: load balancers drop longer requests.",
                "feedback"),
        ),
    ],
    ids=["cancelled", "never"],
)  # fmt: skip
def test_the_same_facts_with_a_negation_on_one_side_are_not_a_duplicate(a: MemoryText, b: MemoryText) -> None:
    # Every fact agrees, but one side calls it off or forbids it: skipping it as a rewording would lose
    # the news. A call-off is a difference (a possible contradiction); a lone "never" leaves the facts
    # rule without a verdict.
    verdict = compare(a, b)
    assert verdict is None or verdict.label != "duplicate", verdict
    if a.key == "f1.md":
        assert verdict is not None and "called off ('cancelled')" in verdict.reason, verdict


def test_stated_values_read_every_date_form_with_or_without_a_month_name() -> None:
    # The three month-name date patterns are skipped for a text that names no month, and the value
    # words are found before dates and numbers are blanked out: neither may change what is read.
    assert similarity.stated_values(
        "Moved on 3 May 2026, then march 4, 2026; review in June 2026 and on 2026-07-01. "
        "Budget 1,500 or 10k, 30% and v2.1; every tuesday, twelve seats."
    ) == {
        "2026-07-01": "2026-07-01",
        "2026-05-03": "3 may 2026",
        "2026-03-04": "march 4, 2026",
        "2026-06": "june 2026",
        "1500": "1,500",
        "10k": "10k",
        "30%": "30%",
        "2.1": "v2.1",
        "tuesday": "tuesday",
        "12": "twelve",
    }
    assert similarity.stated_values("Twelve seats every Tuesday; budget 1,500 with v2.1 on 2026-07-01.") == {
        "2026-07-01": "2026-07-01",
        "1500": "1,500",
        "2.1": "v2.1",
        "12": "twelve",
        "tuesday": "tuesday",
    }


def test_a_capitalised_word_is_a_name_where_no_sentence_starts_whatever_came_first() -> None:
    # _names judges each distinct word once; where it stands is still asked of each occurrence.
    assert similarity._names("Lena ships it. Ask Lena first.") == {"lena": "Lena"}
    assert similarity._names("Ask Lena first. Lena ships it.") == {"lena": "Lena"}
    assert similarity._names("Lena ships it. Lena again.") == {}


def test_latin_abbreviations_are_not_names() -> None:
    # "e.g." and "i.e." have an inner dot like a host name; read as names, they made two wordings differ.
    a = mem(
        "c.md",
        "parquet-intermediates",
        "Keep intermediate tables as Parquet files, not CSV",
        "Write intermediate tables as Parquet files, e.g. with to_parquet; CSV loses dtypes.",
        "feedback",
    )
    b = mem(
        "d.md",
        "parquet-not-csv",
        "Intermediate tables go in Parquet rather than CSV",
        "Save intermediate tables in Parquet (i.e. a typed columnar file) rather than CSV, which loses dtypes; "
        "use to_parquet.",
        "feedback",
    )
    assert fact_differences(a, b) == []
    verdict = compare(a, b)
    assert verdict is not None and verdict.label == "duplicate"


def _dev_set_verdicts(label: str) -> tuple[list[dict[str, Any]], int, int]:
    """The labelled dev pairs, how many `compare` gives `label`, and how many of those are labelled so."""
    if not DEV_PAIRS.parents[2].is_dir():
        pytest.skip("../shared is not here; the labelled pairs live there")
    rows = [json.loads(line) for line in DEV_PAIRS.read_text(encoding="utf-8").splitlines() if line.strip()]
    flagged = correct = 0
    for row in rows:
        a, b = (MemoryText(k, row[k]["name"], row[k]["description"], row[k]["body"], row[k]["type"]) for k in "ab")
        verdict = compare(a, b)
        if verdict is not None and verdict.label == label:
            flagged += 1
            correct += row["label"] == label
    return rows, flagged, correct


def test_dev_set_contradiction_precision() -> None:
    _, flagged, correct = _dev_set_verdicts("contradiction")
    assert flagged and correct / flagged >= 0.90, f"contradiction precision {correct}/{flagged}"


@pytest.mark.parametrize(("a", "b"), [(LINTER, FORMATTER), (RENEWAL, BIRTHDAY), (RETRY_5, LINTER)])
def test_compatible_and_unrelated_memories_are_not_flagged(a: MemoryText, b: MemoryText) -> None:
    assert compare(a, b) is None


def test_dates_written_differently_do_not_differ() -> None:
    iso = mem("d1.md", "launch", "Launch is on 2026-03-31", "The public launch is 2026-03-31.")
    words = mem("d2.md", "launch-date", "Launch on 31 March 2026", "We launch publicly on March 31, 2026.")
    assert fact_differences(iso, words) == []
    moved = mem("d3.md", "launch-moved", "Launch is on 2026-04-14", "The public launch is 2026-04-14.")
    assert fact_differences(iso, moved) == ["dates differ: 2026-03-31 vs 2026-04-14"]


def test_spelled_out_numbers_match_digits() -> None:
    digits = mem("n1.md", "team-size", "The team has 6 engineers", "Six people, 6 engineers in total.")
    spelled = mem("n2.md", "team-size-words", "The team has six engineers", "There are six engineers.")
    assert fact_differences(digits, spelled) == []


def test_find_pairs_reports_each_pair_once_in_input_order() -> None:
    items = [LINTER, RETRY_5, RENEWAL, FORMATTER, RENEWAL_REWORDED, RETRY_8, BIRTHDAY]
    pairs = find_pairs(items)
    assert [(p.a, p.b, p.label) for p in pairs] == [
        ("retry-5.md", "retry-8.md", "contradiction"),
        ("a.md", "b.md", "duplicate"),
    ]
    # Reversed input: the same pairs, each named in the new input order.
    reversed_pairs = find_pairs(items[::-1])
    assert {(p.b, p.a, p.label) for p in reversed_pairs} == {(p.a, p.b, p.label) for p in pairs}


def test_find_pairs_agrees_with_compare() -> None:
    items = [LINTER, RETRY_5, RENEWAL, FORMATTER, RENEWAL_REWORDED, RETRY_8, BIRTHDAY]
    expected = [verdict for i, a in enumerate(items) for b in items[i + 1 :] if (verdict := compare(a, b)) is not None]
    assert find_pairs(items) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        " \n\t ",
        "**Why:**\n**How to apply:**",
        "word " * 50_000,
        "ünïcödé façade naïve Ærø — «quotes» “curly” 'x' \"y\" \u200b\u00a0 emoji 🚀🔥",
        "用户在上海工作，时区 UTC+8。和美国同事约会议时，先给出上海时间。",
        "ユーザーは東京に住んでいます。会議は午前10時から。",
        "사용자는 서울에 있고 회의는 오전 10시에 시작합니다.",
        "(((((((((( )))))))))) ---- //// ____ 12:00 2026-13-45 v 1,2,3,4,5,6",
    ],
)
def test_odd_text_does_not_break_anything(text: str) -> None:
    odd = mem("odd.md", text[:40], text[:200], text)
    twin = mem("twin.md", text[:40], text[:200], text)
    assert 0.0 <= similarity.similarity(odd, RENEWAL) <= 1.0
    compare(odd, RENEWAL)
    fact_differences(odd, twin)
    pairs = find_pairs([odd, RENEWAL, twin])
    if similarity.similarity(odd, twin) >= similarity.DUPLICATE_SCORE:
        assert [(p.a, p.b, p.label) for p in pairs] == [("odd.md", "twin.md", "duplicate")]


def test_empty_inputs() -> None:
    assert find_pairs([]) == []
    assert duplicate_groups([]) == []
    empty = mem("e.md", "", "", "", None)
    assert similarity.similarity(empty, empty) == 0.0
    assert compare(empty, mem("f.md", "", "", "", None)) is None


def test_chinese_duplicate_is_found() -> None:
    a = mem("zh1.md", "daima-shencha", "合并前必须有人审查代码", "所有合并请求在合并前都需要至少一位同事审查代码。")
    b = mem("zh2.md", "shencha-guize", "代码合并前需要同事审查", "合并请求合并前，至少要有一位同事审查代码。")
    verdict = compare(a, b)
    assert verdict is not None and verdict.label == "duplicate"


SYLLABLES = ("ka", "ri", "mo", "ve", "lan", "tor", "qui", "sel", "bra", "dun", "fen", "gal", "hol", "ix", "jor", "kep")


def _words(rng: random.Random, n: int) -> str:
    return " ".join("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))) for _ in range(n))


def _unrelated_folder(size: int) -> list[MemoryText]:
    rng = random.Random(1234)
    return [
        mem(f"m{i:04d}.md", f"note-{i}", _words(rng, 8), _words(rng, 30), rng.choice(["user", "project"]))
        for i in range(size)
    ]


def test_find_pairs_does_not_compare_all_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    items = _unrelated_folder(2_000)
    items.append(mem("copy.md", items[7].name, items[7].description, items[7].body, items[7].type))
    calls = 0
    verify = similarity._verdict

    def counting(
        a: similarity._Profile, b: similarity._Profile, whole: float | None = None
    ) -> similarity.PairVerdict | None:
        nonlocal calls
        calls += 1
        return verify(a, b, whole)

    monkeypatch.setattr(similarity, "_verdict", counting)
    pairs = find_pairs(items)
    all_pairs = len(items) * (len(items) - 1) // 2
    assert calls < all_pairs // 100, f"{calls} comparisons for {len(items)} memories"
    assert [(p.a, p.b, p.label) for p in pairs] == [("m0007.md", "copy.md", "duplicate")]


# Every way a term is made: ASCII words and stopwords, accents composed and combining, characters
# that fold to ASCII (ß, the Kelvin sign, the fi ligature, dotted I), "≠" that folds to a separator,
# full-width letters (which go the CJK way), Chinese, Japanese and Korean runs, a lone surrogate.
TERM_ALPHABET = [*"aZe 0_9.,-=\n\t", "é", "e\u0301", "=\u0338", "ß", "\u212a", "ﬁ", "İ", "\u2260", "Ａ", "ａ", "ｶ"]
TERM_ALPHABET += [
    *"中文的了한국어ア\u3040\u303f",
    "𝐀",
    "😀",
    "\u00a0",
    "\u200b",
    "—",
    "，",
    "\ud800",
    "Σς",
    "Deploy",
    "the ",
]


def _term_texts() -> list[str]:
    rng = random.Random(11)
    texts = ["".join(rng.choice(TERM_ALPHABET) for _ in range(rng.randint(0, 30))) for _ in range(1500)]
    return [
        *texts,
        "word " * 300,
        "用户在上海工作，时区 UTC+8。和美国同事约会议时，先给出上海时间。",
        "사용자는 서울에 있고",
    ]


def test_a_texts_term_set_is_its_term_sequence_and_its_keys_say_the_same() -> None:
    for text in _term_texts():
        terms = words.terms(text)
        assert terms == {term for term, _ in words.term_sequence(text)}, repr(text)
        keys = words.term_keys(text)
        assert keys == set(map(words.term_key, terms)), repr(text)
        assert words.terms_of_keys(keys) == terms, repr(text)


def test_a_folders_profiles_are_each_memorys_own_and_has_asks_the_whole_terms() -> None:
    # all_of holds each head as keys, one object per distinct key across the folder; has() answers
    # from the keys what `in terms` answers from the text, for every kind of term and for strings
    # that are none.
    texts = _term_texts()[-400:]  # the random ones and the long ones
    items = [
        mem(f"m{i}.md", first, second, third)
        for i, (first, second, third) in enumerate(zip(texts, texts[1:], texts[2:], strict=False))
    ]
    profiles = similarity._Profile.all_of(items)
    shared = {key: key for profile in profiles for key in profile.head}
    assert all(shared[key] is key for profile in profiles for key in profile.head)
    for item, profile in zip(items, profiles, strict=True):
        alone = similarity._Profile.of(item)
        head = words.terms(f"{item.name}\n{item.description}")
        assert set(profile.head) == set(alone.head) == set(map(words.term_key, head))
        assert words.terms_of_keys(profile.head) == head
        assert sorted(words.text_of_keys(profile.head)) == sorted(head)
        assert profile.terms == words.terms(f"{item.name}\n{item.description}\n{item.body}")
        for term in [*profile.terms, *words.terms(item.body + " zorblat 用户在"), "用户在", "x"]:
            assert profile.has(term) == (term in profile.terms), (repr(term), repr(item))


def test_a_body_cut_at_ascii_whitespace_has_the_terms_of_its_parts() -> None:
    texts = _term_texts()
    for first, second, space in zip(texts, texts[1:], "\n \t\r\x0b\x0c" * 300, strict=False):
        assert words.terms(first + space + second) == words.terms(first) | words.terms(second)


def _candidate_folder() -> list[MemoryText]:
    """Memories whose heads share rare words in pairs and whose bodies range from a line to pages:
    copies, copies with more added, rewrites, CJK text, so some pairs score high and many are cut short."""
    rng = random.Random(99)
    topics = [_words(rng, 2).split() for _ in range(12)]
    items = []
    for i in range(90):
        topic = topics[i % 12]
        body = _words(rng, rng.choice([5, 30, 200, 1500]))
        if i >= 12 and rng.random() < 0.4:  # the same as an earlier memory of the topic, maybe with more
            body = items[i - 12].body + (" " + _words(rng, rng.choice([0, 10, 300])))
        if rng.random() < 0.2:
            body += "\n用户在上海工作，时区 UTC+8。和美国同事约会议时，先给出上海时间。" * rng.randint(1, 3)
        description = f"{topic[0]} {topic[1]} {_words(rng, 3)}"
        items.append(mem(f"m{i:02d}.md", f"{topic[0]}-{i}", description, body, rng.choice(["project", "feedback"])))
    # One text said again with more and more added: scores that cross TOPIC_SCORE, longer bodies
    # read a part at a time.
    core, extra = _words(rng, 60), _words(rng, 400).split()
    for k in range(0, 400, 20):
        body = " ".join(extra[:k]) + " " + core
        items.append(mem(f"s{k:03d}.md", f"sweep-{k}", f"sweep wobble {_words(rng, 2)}", body))
    return items


def test_find_pairs_gives_every_candidate_pair_the_verdict_compare_gives() -> None:
    # The scan reads a long body only as far as it takes to show that a pair cannot reach TOPIC_SCORE,
    # and counts CJK terms as numbers: neither may change a verdict.
    items = _candidate_folder()
    profiles = [similarity._Profile.of(item) for item in items]
    candidates = similarity._candidates(profiles)
    # compare's verdict without what only compare adds (_same_facts, which the scan leaves out)
    fresh = [similarity._Profile.of(item) for item in items]
    expected = [verdict for i, j in candidates if (verdict := similarity._verdict(fresh[i], fresh[j])) is not None]
    assert len(candidates) > 200 and len(expected) > 20
    assert find_pairs(items) == expected


def test_pairs_either_side_of_topic_score_are_told_apart_while_the_longer_body_is_read_in_parts() -> None:
    # The longer body starts with words the shorter lacks and ends with all of the shorter's: read in
    # parts, its bound is the final cosine, which crosses what the heads leave to reach.
    # (Words made up to share nothing: the bound is then exactly the cosine until the longer is read.)
    heads = ["zorblat quintex " + " ".join(f"{side}{i:02d}x" for i in range(18)) for side in "ab"]
    core = " ".join(f"c{i:03d}x" for i in range(200))
    extra = [f"e{i:03d}x" for i in range(400)]
    short = mem("a.md", "a", heads[0], f"{core} 30")
    outcomes = set()
    for k in range(150, 260, 3):  # 30 vs 45: a possible contradiction from TOPIC_SCORE up
        long = mem("b.md", "b", heads[1], " ".join(extra[:k]) + f" {core} {heads[0]} 45")
        verdict = compare(short, long)
        assert find_pairs([short, long]) == ([verdict] if verdict else [])
        outcomes.add(verdict is None)
    assert outcomes == {True, False}


def test_a_long_body_is_read_only_as_far_as_a_pair_needs() -> None:
    # The two heads share two words of five; the long body soon holds far more words than the short
    # one could share with it, so the pair cannot reach TOPIC_SCORE and the rest is never read.
    rng = random.Random(7)
    short = mem("s.md", "zorblat-quintex", "zorblat quintex alpha beta gamma", _words(rng, 40), "project")
    long = mem("l.md", "zorblat-quintex-log", "zorblat quintex delta epsilon", _words(rng, 5000), "reference")
    a, b = similarity._Profile.of(short), similarity._Profile.of(long)
    assert similarity._whole(a, b) is None
    assert b.reading.read < b.reading.length / 10
    assert compare(short, long) is None


def test_find_pairs_is_deterministic() -> None:
    items = [*_unrelated_folder(300), RENEWAL, RENEWAL_REWORDED, RETRY_5, RETRY_8, LINTER, FORMATTER]
    assert find_pairs(items) == find_pairs(list(items))


def test_find_pairs_does_not_depend_on_string_hashing() -> None:
    # Set and dict order change with PYTHONHASHSEED; the verdicts and their reasons must not.
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]); import test_similarity as t; "
        "items = [*t._unrelated_folder(300), t.RENEWAL, t.RENEWAL_REWORDED, t.RETRY_5, t.RETRY_8, t.LINTER]; "
        "print(t.find_pairs(items)); print(t.duplicate_groups(items))"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script, str(Path(__file__).parent)],
            env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(Path(__file__).parents[1])},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(outputs) == 1
    assert "retry-5.md" in outputs.pop()


def test_duplicate_groups_never_join_different_numbers() -> None:
    base = "Nightly exports of the orders table go to the analytics bucket and keep {n} days of history."
    a = mem("x1.md", "orders-export", "Nightly orders export to the analytics bucket", base.format(n=30))
    b = mem("x2.md", "orders-export-again", "Orders are exported nightly to the analytics bucket", base.format(n=30))
    c = mem("x3.md", "orders-export-retention", "Nightly orders export to the analytics bucket", base.format(n=90))
    assert duplicate_groups([a, b, c]) == [["x1.md", "x2.md"]]
    assert duplicate_groups([RENEWAL, LINTER, RENEWAL_REWORDED]) == [["a.md", "b.md"]]


def test_dev_set_duplicate_precision_and_recall() -> None:
    rows, flagged, correct = _dev_set_verdicts("duplicate")
    actual = sum(row["label"] == "duplicate" for row in rows)
    assert flagged and correct / flagged >= 0.95, f"duplicate precision {correct}/{flagged}"
    assert correct / actual >= 0.70, f"duplicate recall {correct}/{actual}"


def test_the_facts_rule_takes_a_number_of_thousands_of_digits() -> None:
    # Two memories of one type, under the duplicate bar, sharing a 5,000-digit number: Python's int()
    # refuses text that long, and compare (the write path's, for every neighbour) raised ValueError.
    number = "7" * 5000
    a = mem(
        "a.md", "build-id", "Which build is on staging", f"The staging build id is {number}; it stays until Friday."
    )
    b = mem(
        "b.md", "pinned", "Nobody redeploys the pinned staging host", f"Pinned to {number}; redeploys need sign-off."
    )
    pair = similarity.compare(a, b)
    assert pair is not None and pair.label == "duplicate" and pair.reason.startswith("same facts, reworded")
    assert similarity._specific_value("0012") and not similarity._specific_value("009")  # from 10 up, as int() read it


# The fact checks read each close pair's texts in few passes; these pin what the faster readings must
# keep: the values, names, words and cues the plain readings found (HEAD's output, written out).


def test_values_are_read_as_the_plain_patterns_read_them() -> None:
    text = (
        "Ship v1.2 and 1,000 items (30% of 5k) to eu-west-1 and PA5 on 2026-01-02, 3 March 2026, April 7, 2026"
        " or May 2026; 1.5.2 at 10:30, every Tuesday, twelve weekly. 2026-03 x.7"
    )
    assert similarity.stated_values(text) == {
        "2026-01-02": "2026-01-02", "2026-03-03": "3 march 2026", "2026-04-07": "april 7, 2026",
        "2026-05": "may 2026", "1.2": "v1.2", "1000": "1,000", "30%": "30%", "5k": "5k", "1.5.2": "1.5.2",
        "10:30": "10:30", "2026": "2026", "03": "03", "tuesday": "tuesday", "12": "twelve", "weekly": "weekly",
    }  # fmt: skip
    # Without a digit, only the words are values; in a word or after a letter and a hyphen, no number.
    assert similarity.stated_values("Twelve runs every Tuesday") == {"12": "twelve", "tuesday": "tuesday"}
    assert similarity.stated_values("PA5 eu-west-1 x_2 a.5 v2x") == {}


def test_names_are_judged_as_the_plain_checks_judge_them() -> None:
    text = (
        'Ask Lena and IEEE about TestFlight; see eu-west-1, app.qonto.com, "Quarterly Board Review" and'
        " https://Example.com/X. May we? Tuesday. A b."
    )
    assert similarity._names(text) == {
        "lena": "Lena", "ieee": "IEEE", "testflight": "TestFlight", "euwest1": "eu-west-1",
        "appqontocom": "app.qonto.com", "quarterlyboardreview": "Quarterly Board Review",
        "httpsexamplecomx": "https://Example.com/X",
    }  # fmt: skip
    # A capitalised ASCII word, judged without the regular expressions: as they judged it.
    assert similarity._name_of("Lena") == ("lena", "Lena", False)
    assert similarity._name_of("IEEE") == ("ieee", "IEEE", True)
    assert similarity._name_of("TestFlight") == ("testflight", "TestFlight", True)
    assert similarity._name_of("May") is similarity._name_of("TUESDAY") is similarity._name_of("A") is None
    assert similarity._name_of("Ωmega") == ("ωmega", "Ωmega", False)  # not ASCII: the general checks


def test_a_memorys_words_are_those_of_its_whole_text() -> None:
    # Profile.words reads the words inside its name candidates, not the text again: the same set.
    body = "Ask 'Lena Díaz' at https://x.io/a_b or eu-west-1; 用户在 Zürich_2 said ﬁne, ｆｕｌｌ width. A.B. x--y"
    profile = similarity._Profile.of(mem("k.md", "Some-Name", "Über it", body))
    text = words.fold(f"Some-Name\nÜber it\n{body}")
    candidates = set(similarity._NAME_CANDIDATE.findall(text))
    squashed = {similarity._SQUASH.sub("", candidate) for candidate in candidates}
    assert profile.words == set(words.TOKEN.findall(text)) | squashed
    assert words.fold("ÀΣ\u0301") + "\n" + words.fold("\u0301b") == words.fold("ÀΣ\u0301\n\u0301b")


@pytest.mark.parametrize("words_first", [False, True])
def test_a_cue_is_found_whether_or_not_the_words_are_known(words_first: bool) -> None:
    # Once a memory's words are known, a text lacking every cue's words skips the cue's pattern.
    cases = {
        "We moved to Berlin and it was cancelled": ("moved to", "cancelled"),
        "nowhere moved_to cancel_ok 取消": (None, "取消"),
        "No longer, then now; called off": ("no longer", "called off"),
        "no, longer is fine; called it off": (None, None),
        "现在 it is": ("现在", None),
    }
    for text, expected in cases.items():
        profile = similarity._Profile.of(mem("k.md", "n", text, ""))
        if words_first:
            assert profile.words
        assert (profile.change, profile.called_off) == expected, text


def test_a_month_and_a_day_in_it_agree() -> None:
    unmatched = similarity._unmatched_values
    assert unmatched({"2026-03": "march 2026"}, {"2026-03-31": "2026-03-31"}) == []
    assert unmatched({"2026-03-31": "x"}, {"2026-03": "x", "2026": "y"}) == []
    assert unmatched({"2026-03-31": "x", "30": "30"}, {"2026-04": "x", "2026-03-3": "y"}) == ["2026-03-31", "30"]


def test_long_runs_read_in_linear_time() -> None:
    # No pattern of the fact checks backtracks over a run: each such text is read once, not per start.
    for run in ("7" * 20_000, " " * 20_000, "A" * 20_000, "Ab " * 7_000, "1." * 10_000, "v1" * 10_000, "a-1" * 7_000):
        assert isinstance(similarity.stated_values(run), dict)
        assert isinstance(similarity._names(run), dict)


def test_the_words_spare_the_values_pass_only_where_no_value_word_can_stand() -> None:
    # _stated_values skips reading the words in order when the memory's words rule out every value
    # word and month, including one between digits ("5may2026") or after a full-width digit.
    for text in ("Runs 5may2026 and x2tuesday", "every other week", "due 3 mai 2026", "zwei runs", "１二weekly"):
        profile = similarity._Profile.of(mem("k.md", "n", text, ""))
        plain = similarity._stated_values(profile.said)
        assert similarity._stated_values(profile.said, profile.words) == plain, text
    assert not similarity._may_say_value_words(frozenset({"every", "other", "week", "x5y"}))


def test_name_candidates_read_a_long_run_of_marks_in_linear_time() -> None:
    """Bug: a run of quotes, dots or hyphens with no word after it made the last branch of
    _NAME_CANDIDATE read to the run's end from each of its places: 20,000 quotes took 7 s, a
    megabyte (the largest memory file read) hours.

    Counted, not timed. What an attempt at a place takes, it has read; with a word after the run,
    an attempt that reads to the run's end (and, without one, fails there) takes all of it. The
    characters taken by the attempts at every place, per character of text, stay near 40 whatever
    the run's length when linear (only the run's first 40 places start one); with the bug they
    grow with it, 750 for 1,500 marks and 6,000 for 12,000."""
    from memdir.text.similarity import _NAME_CANDIDATE

    def taken_per_character(text: str) -> float:
        return sum(len(m[0]) for at in range(len(text)) if (m := _NAME_CANDIDATE.match(text, at))) / len(text)

    for mark in "'-.":
        small, large = (taken_per_character(mark * size + "x") for size in (1_500, 12_000))
        assert large / small < 2.8, (mark, small, large)  # between 1 and 8, as far from each on a log scale
    # what it finds is what it found: marks before a word belong to it, whatever their number
    said = "x" + "-" * 50 + "word 'a title' " + "'" * 45 + "end http://h/" + "." * 41 + "z"
    assert _NAME_CANDIDATE.findall(said) == [
        "x" + "-" * 50 + "word",
        "'a title'",
        "'" * 45 + "end",
        "http://h/" + "." * 41 + "z",
    ]


def test_a_folder_scan_keeps_nothing_of_its_fact_checks_once_done() -> None:
    """Bug (issue 18): the candidates judged as names and the names' other forms were kept for the
    whole process (a module dict and an lru_cache), 2.9 MiB past the realistic 10k folder's pair
    search, which raised lint's peak memory (it comes later). They go with the scan's profiles now:
    a scan of new names leaves each container of the module as the scan before left it (but the
    term cache, `_TERM_OF`, which the scan and recall share)."""

    def sizes() -> dict[str, int]:
        held = {}
        for name, value in vars(similarity).items():
            if name.startswith("__") or value is words.TERM_OF:
                continue
            if isinstance(value, dict | set | list):
                held[name] = len(value)
            elif hasattr(value, "cache_info"):
                held[name] = value.cache_info().currsize
        return held

    def scan(who: str, what: str) -> list[str]:
        body = "Ask {0} at '{1} Review' before the mobile app ships on Friday; {0} signs the release off."
        theirs = body.format("Oskar", what)
        head = "Who signs off the Friday release of the mobile app"
        pair = [mem("a.md", "release-owner", head, body.format(who, what)), mem("b.md", "release-owner", head, theirs)]
        return [verdict.reason for verdict in find_pairs(pair)]

    assert scan("Lena", "Quarterly") == ["same topic; names differ: Lena vs Oskar"]
    before = sizes()
    assert scan("Mirela", "Weekly") == ["same topic; names differ: Mirela vs Oskar"]
    assert sizes() == before

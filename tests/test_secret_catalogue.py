"""memdir's secret detectors against the gitleaks rule set's own example secrets, as data.

tests/data/gitleaks_samples.jsonl holds the true- and false-positive examples of 30 gitleaks rule
files (tests/data/README.md says which commits and how). Recall per provider family must not fall
below what was measured when the floors were set; false-positive examples may be reported only
where an allowance below says why. `python scripts/secret_recall.py` prints the table in
docs/secrets.md from the same data.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest

from memdir.text.sensitive import find_secrets
from scripts.secret_recall import SAMPLES, detected, detected_bare, flagged, load, score

HEADER, ROWS = load()

# Detected true-positive samples per family, as measured (scripts/secret_recall.py). A family
# below its floor is a regression; raise a floor when a detector improves.
FLOORS = {
    "anthropic": 15,  # of 16: the one gitleaks wrote with "fake" in it reads as a placeholder
    "aws": 30,
    "claude-code-session": 0,  # not a credential memdir looks for (docs/secrets.md)
    "cohere": 2,
    "databricks": 1,
    "digitalocean": 18,
    "doppler": 1,
    "gcp": 10,
    "generic-api-key": 3,  # of 6: `client_id` and go.sum hashes are not secrets to memdir
    "github": 5,
    "gitlab": 88,  # of 90: not the `_gitlab_session` cookie
    "grafana": 21,
    "groq": 6,
    "huggingface": 21,  # of 32: not the `api_org_` tokens retired in 2023
    "jwt": 2,
    "langsmith": 3,
    "linear": 2,
    "notion": 3,
    "npm": 1,
    "openai": 15,
    "perplexity": 6,
    "private-key": 2,  # of 3: not a bare DER body without its BEGIN line
    "pypi": 6,
    "sendgrid": 1,
    "sentry": 1,
    "shopify": 24,
    "slack": 91,  # of 105: short legacy workspace tokens, a repeated-digit sample, webhooks without a scheme
    "stripe": 1,
    "twilio": 6,
    "xai": 6,
}
BARE_FLOOR = 378  # of 431 true-positive secrets found with no `key =` around them

# gitleaks' false-positive examples that memdir reports on purpose, per rule: at most this many.
ALLOWED = {
    # Published in firebase/firebase-android-sdk: real keys, and memdir keeps no list of them.
    "gcp-api-key": 16,
    # A key file without `"type": "service_account"`: its private key is still a private key.
    "gcp-service-account-key": 1,
    # Too short for gitleaks' {93}, the wrong last two characters, or the other Anthropic kind: a
    # truncated or mistyped key is still a leak.
    "anthropic-api-key": 3,
    "anthropic-admin-api-key": 3,
    # `anthropic_token = "sk-ant-oat01-tooShort"`: a random-looking value under a token's key name
    # is reported whatever its prefix, so a provider's new key format is still caught.
    "anthropic-oauth-token": 1,
    "anthropic-oauth-refresh-token": 1,
}


def test_the_data_file_is_well_formed() -> None:
    assert len(ROWS) > 500
    assert all(re.fullmatch(r"[0-9a-f]{40}", commit) for commit in HEADER["files"].values())
    for row in ROWS:
        assert row["gitleaks"] in ("tp", "fp")
        assert row["rule"] in HEADER["rules"]
        assert row["family"] in FLOORS
        if row["gitleaks"] == "tp":
            assert row["secret"] in row["text"]


def test_the_data_file_itself_holds_no_provider_token() -> None:
    """The samples are stored with their digits and `_-.` as JSON escapes, so the file's bytes hold
    no provider key shape for a secret scanner (memdir's own, GitHub push protection) to block, while
    `json.loads` gives the samples back. Random values after `Token=` still look like assignments."""
    kinds = {hit.kind for hit in find_secrets(SAMPLES.read_text(encoding="utf-8"))}
    assert kinds <= {"env-assignment"}


@pytest.mark.parametrize("family", sorted(FLOORS))
def test_recall_per_family_does_not_fall_below_its_floor(family: str) -> None:
    rows = [row for row in ROWS if row["family"] == family and row["gitleaks"] == "tp"]
    assert rows
    found = sum(detected(row) for row in rows)
    assert found >= FLOORS[family], f"{family}: {found} of {len(rows)} detected, floor {FLOORS[family]}"


def test_recall_without_context_does_not_fall_below_its_floor() -> None:
    assert sum(detected_bare(row) for row in ROWS if row["gitleaks"] == "tp") >= BARE_FLOOR


def test_false_positive_examples_are_reported_only_where_allowed() -> None:
    reported = Counter(row["rule"] for row in ROWS if row["gitleaks"] == "fp" and flagged(row))
    over = {rule: n for rule, n in reported.items() if n > ALLOWED.get(rule, 0)}
    assert over == {}
    assert sum(ALLOWED.values()) <= 25


def test_the_score_adds_up() -> None:
    families = score(ROWS)
    assert set(families) == set(FLOORS)
    assert sum(f.samples for f in families.values()) == sum(row["gitleaks"] == "tp" for row in ROWS)

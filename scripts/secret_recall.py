#!/usr/bin/env python3
"""Recall of memdir's secret detectors on the gitleaks rule set's example secrets, per provider family.

    python scripts/secret_recall.py [--misses]

Reads tests/data/gitleaks_samples.jsonl (what it holds and where it comes from: tests/data/README.md),
runs `memdir.text.sensitive.find_secrets` over every sample and prints the table in docs/secrets.md.
A true-positive sample is *detected* when the hits cover at least 90% of its secret's characters
(so `redact` removes it; a public prefix such as Slack's `xoxe.` may stay). *Bare* is the same for
the secret alone, with no `key =` around it: what the token shapes catch without context, which is
how a secret usually appears in a memory's prose. A false-positive sample is *flagged* when any
hit falls in it. --misses lists the undetected and flagged samples, masked.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memdir.text.sensitive import find_secrets, mask_secrets  # noqa: E402

SAMPLES = ROOT / "tests" / "data" / "gitleaks_samples.jsonl"
COVERED = 0.9

# Why a family's recall is what it is; printed in the table's last column.
NOTES = {
    "anthropic": "all four shapes, and the truncated keys gitleaks counts as false",
    "aws": "access key IDs; a secret access key only when labelled as one",
    "claude-code-session": "not covered: session URLs are not reported (see below)",
    "cohere": "no prefix: found by its key name (`CO_API_KEY=`, `cohere_api_token =`)",
    "databricks": "no token shape (`dapi` has no rare character to anchor on); found by key name",
    "gcp": "API keys and service-account JSON; the flagged false samples are real keys Firebase published",
    "generic-api-key": "key names ending in key/secret/token/password; not `client_id`, not go.sum hashes",
    "github": "",
    "gitlab": "every prefix but the `_gitlab_session` cookie",
    "grafana": "`glsa_`, `glc_` and the older `eyJrIjoi` keys",
    "huggingface": "`hf_`; not the `api_org_` tokens Hugging Face retired in 2023",
    "jwt": "three base64url parts, signed",
    "langsmith": "",
    "linear": "`lin_api_`; client secrets (32 hex digits) by key name",
    "notion": "`ntn_`, and `secret_` + 43",
    "private-key": "PEM blocks; not a bare base64 DER body (`MII…`) with no BEGIN line",
    "sendgrid": "gitleaks' sample is not SendGrid's `SG.<22>.<43>` shape; found by key name",
    "sentry": "no prefix in this rule (64 hex digits): found by key name",
    "slack": "bot, user, app, configuration and legacy tokens, webhooks with a scheme",
}


@dataclass
class Family:
    """Counts for one provider family."""

    samples: int = 0
    detected: int = 0
    bare: int = 0
    false_samples: int = 0
    flagged: int = 0
    misses: list[str] = field(default_factory=list)


def load(path: Path = SAMPLES) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The header line and the sample rows."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return json.loads(lines[0]), [json.loads(line) for line in lines[1:] if line.strip()]


def covered(text: str, start: int, end: int) -> float:
    """The share of `text[start:end]` that find_secrets' hits cover."""
    marked = [False] * (end - start)
    for hit in find_secrets(text):
        for i in range(max(hit.start, start), min(hit.end, end)):
            marked[i - start] = True
    return sum(marked) / max(1, end - start)


def detected(row: dict[str, Any]) -> bool:
    start = row["text"].index(row["secret"])
    return covered(row["text"], start, start + len(row["secret"])) >= COVERED


def detected_bare(row: dict[str, Any]) -> bool:
    return covered(row["secret"], 0, len(row["secret"])) >= COVERED


def flagged(row: dict[str, Any]) -> bool:
    return bool(find_secrets(row["text"]))


def score(rows: list[dict[str, Any]]) -> dict[str, Family]:
    families: dict[str, Family] = defaultdict(Family)
    for row in rows:
        fam = families[row["family"]]
        if row["gitleaks"] == "tp":
            fam.samples += 1
            if detected(row):
                fam.detected += 1
            else:
                fam.misses.append(f"missed  {row['rule']}: {mask_secrets(row['text'])[:100]!r}")
            fam.bare += detected_bare(row)
        else:
            fam.false_samples += 1
            if flagged(row):
                fam.flagged += 1
                fam.misses.append(f"flagged {row['rule']}: {mask_secrets(row['text'])[:100]!r}")
    return dict(sorted(families.items()))


def table(families: dict[str, Family]) -> str:
    out = [
        "| family | samples | detected | recall | bare | false samples | flagged | note |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    total = Family()
    for name, f in families.items():
        out.append(
            f"| {name} | {f.samples} | {f.detected} | {f.detected / f.samples:.0%} | {f.bare / f.samples:.0%} "
            f"| {f.false_samples} | {f.flagged} | {NOTES.get(name, '')} |"
        )
        total.samples += f.samples
        total.detected += f.detected
        total.bare += f.bare
        total.false_samples += f.false_samples
        total.flagged += f.flagged
    out.append(
        f"| **all** | {total.samples} | {total.detected} | {total.detected / total.samples:.0%} "
        f"| {total.bare / total.samples:.0%} | {total.false_samples} | {total.flagged} | |"
    )
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--misses", action="store_true", help="list the missed and the flagged samples, masked")
    args = parser.parse_args()
    header, rows = load()
    families = score(rows)
    print(f"{len(rows)} samples from {len(header['files'])} gitleaks rule files\n")
    print(table(families))
    if args.misses:
        for name, f in families.items():
            for line in f.misses:
                print(f"{name}: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The recall log: every recall appended to `.memdir/recall.jsonl`, with what it weighed."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from memdir.core.store import append_lines, ensure_state_dir, read_generations, state_dir
from memdir.read.scoring import RecallResult
from memdir.text.outward import dumps

LOG_FILE = "recall.jsonl"
LOG_CANDIDATES = 50  # candidates written to the log per recall, best first (all chosen ones included)


# --- the log: every recall, with what it weighed ------------------------------------------------


def log_entry(result: RecallResult) -> dict[str, Any]:
    """The line `.memdir/recall.jsonl` gets for `result`: enough to answer "why did the agent bring that
    up?" (and "why not that one?") without re-running anything."""
    settings = result.settings
    chosen = {r.path for r in result.results}
    logged = result.candidates[:LOG_CANDIDATES] + [c for c in result.candidates[LOG_CANDIDATES:] if c.path in chosen]
    entry: dict[str, Any] = {
        "time": dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "query": result.query,
        "method": result.method,
        "settings": {
            "weights": {
                "relevance": settings.relevance_weight,
                "recency": settings.recency_weight,
                "importance": settings.importance_weight,
            },
            "half_life_days": settings.half_life_days,
            "gate": settings.gate,
            "gate_chance": settings.gate_chance,
            "min_relevance": settings.min_relevance,
            "min_score": result.min_score,
            "k": result.k,
        },
        "top_relevance": round(result.top_relevance, 4),
        "passed_gate": result.passed_gate,
        # Why recall spoke or stayed silent: the null model's figures (docs/recall.md, "The gates").
        "gate": None if result.gate is None else result.gate.to_json() | {"why": result.gate.why(settings)},
        "chosen": [r.path for r in result.results],
        "candidates": [c.to_json(explain=True) | {"why_not": result.why_not(c)} for c in logged],
        "candidates_total": len(result.candidates),
        "excluded": [{"path": path, "why": why} for path, why in result.excluded[:LOG_CANDIDATES]],
    }
    if result.llm is not None:
        entry["llm"] = result.llm
    return entry


def write_log(root: Path, result: RecallResult) -> Path:
    """Append `result` to `<root>/.memdir/recall.jsonl` (one JSON object a line, secrets masked) and return its path.

    One write() of one line in append mode, so concurrent recalls never interleave within a line. Past
    store.LOG_MAX_BYTES (10 MiB) the log is renamed to recall.jsonl.1 (replacing an older one) and starts afresh."""
    path = ensure_state_dir(root) / LOG_FILE
    # The query and the candidates' descriptions are free text: no key is copied into the log.
    line = (dumps(log_entry(result), indent=None, compact=True) + "\n").encode("utf-8")
    append_lines(path, line, rotate=True)
    return path


def read_log(root: Path) -> list[dict[str, Any]]:
    """The recalls logged in `<root>/.memdir/recall.jsonl` and its older generation, oldest first
    (unreadable lines skipped)."""
    return read_generations(state_dir(root) / LOG_FILE)

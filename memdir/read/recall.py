"""Recall: the memories that bear on a task, best first, and why each was (or was not) chosen.

`recall(folder, query)` scores every live memory against the query, lexically and offline
(terms.py, termindex.py, scoring.py), and logs it (recall_log.py); `recall_llm` (recall_llm.py)
lets a model pick from the manifest instead. Nothing here prints.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from memdir.core.cache import ParseCache
from memdir.core.config import RecallSettings
from memdir.core.errors import MemdirError
from memdir.core.model import Memory
from memdir.core.store import (
    STATE_DIR,
    load_file,
)
from memdir.read.recall_log import write_log
from memdir.read.scoring import Gate, Recalled, RecallResult, score_query
from memdir.read.termindex import load_index

if TYPE_CHECKING:
    from memdir.folder import MemoryDir


class RecallError(MemdirError):
    """Recall could not be done as asked (e.g. `--llm` without an API key, or the API failed)."""


# --- recall --------------------------------------------------------------------------------------


def recall(
    folder: MemoryDir,
    query: str,
    *,
    k: int | None = None,
    min_score: float | None = None,
    settings: RecallSettings | None = None,
    log: bool | None = None,
    already: Iterable[str] = (),
) -> RecallResult:
    """The memories of `folder` most worth bringing up for `query`, best first (at most `k`).

    `settings` default to the folder's config (`[recall]`); `k` and `min_score` override theirs. Nothing
    is returned when the query does not pass the gate (scoring.Gate: the folder does not know it).
    `already` names memories the reader has in full anyway (the pinned ones of a context): they are
    never chosen, so they take no slot. The recall is appended to `.memdir/recall.jsonl` unless `log`
    (default: the `recall.log` setting) is false.
    """
    settings = settings or folder.config.recall
    k = settings.k if k is None else k
    min_score = settings.min_score if min_score is None else min_score
    check_request(query, k)
    index = load_index(folder)
    candidates, excluded, gate = score_query(index, query, settings, folder.today)
    skip = frozenset(already)
    chosen, top, passed = _choose(candidates, gate, settings, k, min_score, skip)
    result = RecallResult(query, chosen, candidates, excluded, top, passed, settings, "lexical", k, min_score,
                          unreadable=index.unreadable, already=skip, gate=gate)  # fmt: skip
    return with_log(folder, result, settings.log if log is None else log)


def check_request(query: str, k: int) -> None:
    if not query.strip():
        raise RecallError("the query is empty: say what the task is")
    if k < 1:
        raise RecallError("k must be at least 1")


def _choose(
    candidates: Sequence[Recalled],
    gate: Gate,
    settings: RecallSettings,
    k: int,
    min_score: float,
    skip: frozenset[str] = frozenset(),
) -> tuple[list[Recalled], float, bool]:
    """The gates and the cut: (chosen, best relevance, whether the query passed the gate). The gate weighs
    every memory; those in `skip` (already in the reader's context) are never chosen."""
    top = max((c.direct for c in candidates), default=0.0)
    if top <= 0 or not gate.passed:
        return [], top, False
    chosen = [
        c
        for c in candidates
        if c.path not in skip and c.direct > 0 and c.relevance >= settings.min_relevance and c.score >= min_score
    ]
    return chosen[:k], top, True


def with_log(folder: MemoryDir, result: RecallResult, log: bool) -> RecallResult:
    if not log:
        return result
    try:
        return replace(result, log_path=write_log(folder.root, result))
    except OSError as exc:
        return replace(result, log_error=f"{exc.strerror or exc}: {exc.filename or folder.root / STATE_DIR}")


def recalled_memories(folder: MemoryDir, result: RecallResult, cache: ParseCache | None = None) -> list[Memory]:
    """The chosen memories, read from their files (e.g. for `render_context(recalled=...)`); a file that
    changed into something that is not a memory since it was recalled is skipped. `cache`, the folder's
    parse cache, spares parsing a file that has not changed (it is keyed by the file's stat)."""
    out = []
    for chosen in result.results:
        loaded = load_file(str(folder.root / chosen.path), chosen.path, cache or ParseCache.disabled())
        if isinstance(loaded, Memory):
            out.append(loaded)
    return out

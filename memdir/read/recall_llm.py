"""Recall through a model: `recall --llm` lets a model pick from the folder's manifest with one
forced tool call (Claude Code's own approach), logged like any recall.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir.core.config import RecallSettings
from memdir.core.model import name_key
from memdir.read.recall import RecallError, check_request, with_log
from memdir.read.scoring import Recalled, RecallResult, recencies
from memdir.read.termindex import IndexedDoc, load_index
from memdir.write import llm

if TYPE_CHECKING:
    from memdir.folder import MemoryDir


# --- recall through a model ------------------------------------------------------------------------

SELECT_TOOL = "select_memories"
MANIFEST_MAX = 200  # memories shown to the model, most recently changed first (Claude Code's own cap)
_LLM_SYSTEM = (
    "You pick which of a user's saved memories an AI assistant should read before it works on the "
    "user's request. You get the request and a manifest: one line per memory, its file name, type and a "
    "one-line description. Call select_memories with the file names of the memories that will clearly "
    "help with this request, most useful first. Pick only memories you are confident are relevant; if "
    "none is, pick none. Rules and preferences that constrain how the request must be done count as "
    "relevant even when they share no words with it."
)


def recall_llm(
    folder: MemoryDir,
    query: str,
    *,
    k: int | None = None,
    settings: RecallSettings | None = None,
    client: Any = None,
    model: str | None = None,
    log: bool | None = None,
) -> RecallResult:
    """Recall the way Claude Code does: one forced tool call in which a model picks up to `k` memories
    (5 by default) from the folder's manifest. Their relevance is 1 (picked); recency and importance are
    computed as usual, and the model's order is kept.

    `client` is an `anthropic.Anthropic` (tests pass one with a mock transport); by default one is made
    from ANTHROPIC_API_KEY. `model` defaults to the `recall.model` setting. Raises RecallError when there
    is no key or the API call fails.
    """
    settings = settings or folder.config.recall
    k = settings.k if k is None else k
    check_request(query, k)
    model = model or settings.model
    client = client if client is not None else _default_client()
    index = load_index(folder)
    ages = {index.doc(i).path: index.age(i) for i in range(index.n)}
    live = [doc for doc in (index.doc(i) for i in range(index.n)) if doc.exclusion(folder.today) is None]
    # Most recently changed first, by the age recall ranks by (Claude Code's manifest order); no age: last.
    live.sort(key=lambda d: (ages[d.path].day or dt.date.min, d.path), reverse=True)
    shown, left_out = live[:MANIFEST_MAX], len(live) - MANIFEST_MAX
    # Ranked against the manifest, as lexical recall ranks against its candidates.
    freshness = dict(
        zip(
            (d.path for d in shown),
            recencies([ages[d.path] for d in shown], folder.today, settings.half_life_days),
            strict=True,
        )
    )
    picked: list[str] = []
    if shown:
        picked = _ask_model(client, model, query, shown, k)
    by_name: dict[str, IndexedDoc] = {}
    for doc in shown:  # a model may answer with the path, the file name or the memory's name
        for key in (doc.path, Path(doc.path).name, doc.name, name_key(doc.name)):
            by_name.setdefault(key, doc)
    chosen: list[Recalled] = []
    unknown: list[str] = []
    for name in picked:
        found = by_name.get(name) or by_name.get(name_key(name))
        if found is None:
            unknown.append(name)
        elif all(c.path != found.path for c in chosen) and len(chosen) < k:
            doc = found
            age = ages[doc.path]
            fresh = freshness[doc.path]
            score = settings.relevance_weight + settings.recency_weight * fresh
            score += settings.importance_weight * doc.importance
            chosen.append(Recalled(doc.path, doc.name, doc.type, doc.description, score, 1.0, fresh,
                                   doc.importance, ("picked by " + model,), None, 1.0, age))  # fmt: skip
    llm = {"model": model, "picked": picked, "unknown": unknown, "manifest": len(shown),
           "left_out_of_manifest": max(left_out, 0)}  # fmt: skip
    result = RecallResult(query, chosen, list(chosen), [], 1.0 if chosen else 0.0, bool(chosen), settings, "llm", k,
                          settings.min_score, llm, index.unreadable)  # fmt: skip
    return with_log(folder, result, settings.log if log is None else log)


def _manifest(docs: Iterable[IndexedDoc]) -> str:
    return "\n".join(f"- {doc.path} ({doc.type}): {doc.description}" for doc in docs)


def _default_client() -> Any:
    """An Anthropic client from the environment; RecallError without a key, before any work is done."""
    try:
        return llm.make_client("`recall --llm`")
    except llm.NoApiKey as exc:
        raise RecallError(str(exc)) from None


def _ask_model(client: Any, model: str, query: str, docs: Sequence[IndexedDoc], k: int) -> list[str]:
    tool = {
        "name": SELECT_TOOL,
        "description": "Select the memories that will clearly help with the request.",
        "input_schema": {
            "type": "object",
            "properties": {
                "selected": {
                    "type": "array",
                    "items": {"type": "string"},
                    "maxItems": k,
                    "description": f"File names from the manifest, most useful first; at most {k}, or none.",
                }
            },
            "required": ["selected"],
        },
    }
    content = f"Request: {query}\n\nMemories:\n{_manifest(docs)}"
    try:
        data = llm.forced_tool_call(
            client, model=model, max_tokens=1024, system=_LLM_SYSTEM, content=content, tool=tool
        )
    except llm.LlmError as exc:
        raise RecallError(f"{exc}; nothing recalled") from None
    selected = data.get("selected")
    if not isinstance(selected, list):
        raise RecallError(f"the model's {SELECT_TOOL} call has no list of names; nothing recalled")
    return [name.strip() for name in selected if isinstance(name, str) and name.strip()]

"""`memdir recall QUERY`: the memories worth bringing up for a task, best first, and why."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from memdir.cli.state import OutputFormat, State
from memdir.cli.typer_app import FormatOption, app, state

if TYPE_CHECKING:  # memdir.read.recall is loaded by `recall` itself, not by every other command
    from memdir.read.scoring import Recalled, RecallResult

_EXPLAIN_NEAR_MISSES = 5  # candidates shown with --explain after the chosen ones


@app.command()
def recall(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="The task or question, in the user's words.", show_default=False)],
    k: Annotated[
        int | None,
        typer.Option("-k", "--limit", min=1, help="Most memories to return (else `recall.k`, 5).", show_default=False),
    ] = None,
    min_score: Annotated[
        float | None,
        typer.Option(
            "--min-score", min=0.0, help="Leave out memories scoring below this (else `recall.min-score`, 0)."
        ),
    ] = None,
    explain: Annotated[
        bool, typer.Option("--explain", help="Show how each score is made, what matched, and the near misses.")
    ] = False,
    llm: Annotated[
        bool,
        typer.Option(
            "--llm", help="Let a model pick up to k memories from the folder's manifest (needs ANTHROPIC_API_KEY)."
        ),
    ] = False,
    model: Annotated[
        str | None, typer.Option("--model", help="The model for --llm (else `recall.model`).", show_default=False)
    ] = None,
    no_log: Annotated[
        bool, typer.Option("--no-log", help="Do not append this recall to .memdir/recall.jsonl.")
    ] = False,
    format: FormatOption = OutputFormat.text,
) -> None:
    """Print the memories most worth bringing up for QUERY, best first.

    score = 0.6 x relevance + 0.25 x recency + 0.15 x importance (configurable under [recall]).
    Relevance is lexical and offline; a query about something the folder does not know (its best
    match no better than chance would give, and weak) recalls nothing, however new or important a
    memory is. Superseded, expired, quarantined and archived memories are never recalled. Every
    recall is logged to .memdir/recall.jsonl. See docs/recall.md.
    """
    from memdir.read import recall as recalling
    from memdir.read import recall_llm

    st = state(ctx)
    folder = st.folder()
    log = False if no_log else None
    if llm:
        result = recall_llm.recall_llm(folder, query, k=k, model=model, log=log)
    else:
        result = recalling.recall(folder, query, k=k, min_score=min_score, log=log)
    st.warn_unreadable(result.unreadable, "recall did not search them")
    if result.log_error:
        st.warn(f"recall not logged: {result.log_error}")
    if format is OutputFormat.json:
        payload: dict[str, object] = {"results": [r.to_json(explain) for r in result.results]}
        if explain:
            payload |= _explain_json(result)
        st.write_json(payload)
        return
    _print_text(st, result, explain)


def _explain_json(result: RecallResult) -> dict[str, object]:
    out: dict[str, object] = {
        "method": result.method,
        "top_relevance": round(result.top_relevance, 4),
        "gate": result.settings.gate,
        "gate_chance": result.settings.gate_chance,
        "passed_gate": result.passed_gate,
        "gate_figures": None if result.gate is None else result.gate.to_json(),
        "near_misses": [r.to_json(True) | {"why_not": result.why_not(r)} for r in _near_misses(result)],
        "excluded": [{"path": path, "why": why} for path, why in result.excluded],
    }
    if result.llm is not None:
        out["llm"] = result.llm
    return out


def _near_misses(result: RecallResult) -> list[Recalled]:
    chosen = {r.path for r in result.results}
    return [c for c in result.candidates if c.path not in chosen][:_EXPLAIN_NEAR_MISSES]


def _print_text(st: State, result: RecallResult, explain: bool) -> None:
    if not result.results:
        st.say(f"nothing recalled: {result.why_nothing()}")
    width = max((len(r.path) for r in result.results), default=0)
    for r in result.results:
        st.write(f"{r.score:.3f}  {r.path:<{width}}  {r.description}\n")
        if explain:
            _explain_one(st, r, result)
    if explain:
        misses = _near_misses(result)
        if misses:
            st.write("\nnear misses:\n")
            for r in misses:
                st.write(f"{r.score:.3f}  {r.path}  ({result.why_not(r)})\n")
                _explain_one(st, r, result)
        for path, why in result.excluded:
            st.write(f"excluded: {path} ({why})\n")
        if result.log_path is not None:
            st.say(f"logged to {st.show_path(result.log_path)}")


def _explain_one(st: State, r: Recalled, result: RecallResult) -> None:
    s = result.settings
    age = f"{r.age.day.isoformat()}, {r.age.describe()}" if r.age.day else "no age"
    st.write(
        f"       = {s.relevance_weight:g} x relevance {r.relevance:.2f} + {s.recency_weight:g} x recency "
        f"{r.recency:.2f} ({age}) + {s.importance_weight:g} x importance {r.importance:.2f}\n"
    )
    if r.matched:
        via = f" (in {r.via}, which this memory supersedes)" if r.via else ""
        st.write(f"       matched: {', '.join(r.matched)}{via}\n")

"""The engine's record of model calls, and the budget that guards model steps.

Each result a stage submits may carry the model calls it made (`call`: one
`payloads.ModelCall`, or `calls`: a list). Accepting the result appends one `ModelCallRecord`
per call to the execution and adds it to the workflow's spend — from the committed event
alone, so a replay of the history rebuilds exactly the same records. A record is never
changed afterwards; `data[ACCEPTED_CALLS]` names, per data key, the record its value came from.

The budget is a guard the engine applies on its own: a transition that would dispatch a job to
a model stage (`Stage.model`) while `over_budget` says one more call would exceed the
workflow's budget goes to the review state instead, with reason `budget_exhausted`; a
reviewer's retry returns to that stage (and is refused again unless the budget was raised).
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from interlock.contracts.definition import EventSpec
from interlock.contracts.model_calls import (
    ACCEPTED_CALLS,
    BUDGET_EXHAUSTED,
    MAX_KEPT,
    ModelCallRecord,
    Tokens,
    Verdict,
    over_budget,
)
from interlock.contracts.payloads import ModelCall
from interlock.projector.engine.actions import Draft
from interlock.projector.engine.guards import Facts
from interlock.projector.engine.model import Review


def record_model_calls(f: Facts, spec: EventSpec, d: Draft) -> None:
    """Append the model calls `f.event` reports (a stage's result) to `d`."""
    if not spec.answers_job:
        return
    job = f.workflow.execution.open_jobs.get(f.event.causation_id or "")
    stage = job.stage if job is not None else None
    for call in _calls(f.payload):
        task = call.task or stage or "unknown"
        verdict: Verdict = (
            "invalid" if call.validation == "failed" else "repaired" if call.repair else "valid"
        )
        record = ModelCallRecord(
            seq=d.model_spend.calls + 1,
            task=task,
            attempt=1 + sum(1 for r in d.model_calls if r.task == task),
            state=f.workflow.state,
            stage=stage,
            event_id=f.event.event_id,
            event_type=f.event.type,
            job_id=f.event.causation_id,
            prompt_version=call.prompt_version,
            model=call.model,
            model_version=call.model_version,
            parameters=dict(call.parameters),
            input_digest=call.input_digest,
            input_refs=tuple(call.input_refs),
            output=dict(call.output),
            verdict=verdict,
            errors=tuple(call.errors),
            tokens=Tokens(input=call.tokens.prompt, output=call.tokens.completion),
            cost=call.cost,
            latency_ms=call.latency_ms,
            trace_id=call.trace_id,
            at=f.ctx.now,
        )
        kept = len(d.model_calls) < MAX_KEPT
        if kept:
            d.model_calls.append(record)
        d.model_spend = d.model_spend.add(record, kept)
        update = f.definition.data_updates.get(f.event.type)
        if verdict != "invalid" and update is not None:
            d.data[ACCEPTED_CALLS] = {**(d.data.get(ACCEPTED_CALLS) or {}), update.key: record.seq}


def _calls(payload: dict[str, Any]) -> list[ModelCall]:
    raw = payload.get("calls")
    found = list(raw) if isinstance(raw, list) else []
    if isinstance(payload.get("call"), dict):
        found.insert(0, payload["call"])
    calls = []
    for item in found:
        try:
            calls.append(ModelCall.model_validate(item))
        except ValidationError:
            continue  # not a model call: the event's own model decides what the field is
    return calls


def budget_stop(f: Facts, d: Draft, dispatches: bool) -> Review | None:
    """Send `d` to review instead of into a model stage whose job the budget does not allow:
    the review to record, or None when the job may go out."""
    definition = f.definition
    stage = definition.stages.get(d.target)
    if not dispatches or stage is None or not stage.model or definition.review_state is None:
        return None
    if over_budget(d.model_spend, dict(f.parameters)) is None:
        return None
    target, d.target = d.target, definition.review_state
    return Review(
        reason=BUDGET_EXHAUSTED,
        from_state=f.workflow.state,
        event_type=f.event.type,
        target=None if target in definition.effect_states else target,
    )

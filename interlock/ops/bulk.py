"""The preview of a bulk operator command: for each selected workflow, what the transition
table allows the command to do, and which effects would then be attempted again under which
idempotency key.

`preview_signal` and `preview_migration` are pure (the engine decides the would-be event on the
workflow as it stands, nothing is written); `candidates` reads the selection from the database.
An effect is never attempted blindly: a stage entering an effect state looks its key up at the
provider first and acts only if nothing was done under it; a compensation reverses what the
key took. The preview names the key wherever the workflow recorded one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from interlock.contracts.definition import WorkflowDefinition
from interlock.contracts.effectcheck import effects_of
from interlock.contracts.envelope import Envelope
from interlock.ops.selection import Selection, matches
from interlock.projector.engine import Context, Workflow
from interlock.projector.engine.migrate import refusal
from interlock.projector.engine.resolve import resolve
from interlock.projector.store import rows, selected

Preview = dict[str, Any]


async def candidates(database_url: str, chosen: Selection) -> tuple[list[Workflow], bool]:
    """The selected workflows, longest unchanged first (at most `chosen.limit`), and whether
    more matched than that."""
    since = chosen.since.total_seconds() if chosen.since is not None else None
    found, now = await selected.rows(
        database_url,
        chosen.workflow_type,
        states=list(chosen.states),
        tenant_id=chosen.tenant_id,
        since_seconds=since,
        reason=chosen.reason,
        limit=chosen.limit + 1,
    )
    kept = [r for r in found if matches(chosen, r, now)]
    return [rows.workflow_of(r, None) for r in kept[: chosen.limit]], len(kept) > chosen.limit


def view_of(wf: Workflow) -> dict[str, Any]:
    """The fields of `show --json` a signal's payload is bound from."""
    return {
        "workflow_id": wf.workflow_id,
        "workflow_type": wf.workflow_type,
        "tenant_id": wf.tenant_id,
        "state": wf.state,
        "version": wf.version,
        "definition_version": wf.definition_version,
        "data": wf.data,
        "execution": wf.execution.model_dump(mode="json"),
        "correlation_id": wf.correlation_id,
    }


def preview_signal(
    definition: WorkflowDefinition, wf: Workflow, event: Envelope, ctx: Context
) -> Preview:
    """What sending `event` would do to `wf`: the state it would enter, or why it would be
    refused (the engine's reason and failed guards); and the effects it would reconcile."""
    decision = resolve(definition, wf, event, ctx)
    if not decision.accepted:
        failed = [g[1:] for g in decision.guard_results if g.startswith("!")]
        return refused(wf, decision.reason, decision.detail, failed_guards=failed, **unknown(wf))
    into = decision.workflow.state
    return accepted(wf, into, effects_to_reconcile(definition, wf, into))


def preview_migration(
    source: WorkflowDefinition, target: WorkflowDefinition, wf: Workflow, into: str | None
) -> Preview:
    """What moving `wf` to `target` (into `into`, default its state) would do."""
    state = into or wf.state
    why = refusal(source, target, wf, state)
    if why is not None:
        return refused(wf, "migration_refused", why)
    return accepted(wf, state, effects_to_reconcile(target, wf, state), to_version=target.version)


def effects_to_reconcile(
    definition: WorkflowDefinition, wf: Workflow, into: str
) -> list[dict[str, Any]]:
    """The effects entering `into` would attempt again (`execute`: looked up by key first, made
    only if nothing was done under it) or reverse (`compensate`), each with the status the
    workflow records and the key it was made under (None: never attempted, so none yet)."""
    review = wf.execution.review
    found = []
    for effect in effects_of(definition):
        fact = wf.execution.effects.get(effect.state)
        status = fact.status if fact is not None else "none"
        key = fact.idempotency_key if fact is not None else None
        if key is None and review is not None and review.from_state == effect.state:
            key = review.idempotency_key
        if into == effect.state:
            attempt = "execute"
        elif into == effect.compensation and status in {"committed", "unknown"}:
            attempt = "compensate"
        else:
            continue
        found.append(
            {"state": effect.state, "attempt": attempt, "status": status, "idempotency_key": key}
        )
    return found


def unknown(wf: Workflow) -> dict[str, Any]:
    """`{"unknown_effects": [...]}` when an effect's outcome is unknown: it is settled by key
    (`interlock effect ID confirm|rerun|compensate`), not by a retry."""
    review = wf.execution.review
    found = [
        {
            "state": state,
            "idempotency_key": fact.idempotency_key
            or (review.idempotency_key if review is not None else None),
            "settle_with": "interlock effect ID confirm|rerun|compensate",
        }
        for state, fact in wf.execution.effects.items()
        if fact.status == "unknown"
    ]
    return {"unknown_effects": found} if found else {}


def accepted(wf: Workflow, into: str, effects: list[dict[str, Any]], **extra: Any) -> Preview:
    return {
        **_identity(wf),
        "outcome": "accepted",
        "to_state": into,
        "effects_to_reconcile": effects,
        **extra,
    }


def refused(wf: Workflow, reason: str, detail: str, **extra: Any) -> Preview:
    return {
        **_identity(wf),
        "outcome": "refused",
        "reason": reason,
        "detail": detail,
        "effects_to_reconcile": [],
        **extra,
    }


def _identity(wf: Workflow) -> dict[str, Any]:
    """Which workflow, where it stands, and the effects it has attempted (`effects`: each
    with its status and key), whatever the command would do."""
    return {
        "workflow_id": wf.workflow_id,
        "tenant_id": wf.tenant_id,
        "state": wf.state,
        "version": wf.version,
        "definition_version": wf.definition_version,
        "effects": [
            {"state": state, "status": fact.status, "idempotency_key": fact.idempotency_key}
            for state, fact in wf.execution.effects.items()
            if fact.status != "none"
        ],
    }


def summary(previews: list[Preview]) -> Mapping[str, int]:
    """How many would be accepted and refused."""
    accepted_count = sum(p["outcome"] == "accepted" for p in previews)
    return {"accepted": accepted_count, "refused": len(previews) - accepted_count}

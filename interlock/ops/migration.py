"""Moving one workflow to another definition version, as an operator's explicit act (the
`interlock migrate-workflow` command, one id or a selection).

The move is checked against the target definition's graph (`projector.engine.migrate`),
decided by the engine and committed as a transition would be: one statement writes the
checkpoint, an audit row naming the operator, the history's row (so a replay re-decides the
move), the jobs and timers of the state it enters. It commits only if the workflow is still at
the version it was checked at, so it never races the projector.
"""

from __future__ import annotations

import uuid
from typing import Any

from interlock.config import access
from interlock.config.plugins import installed
from interlock.config.settings import Settings
from interlock.contracts.definition import WorkflowDefinition
from interlock.contracts.envelope import Actor, Envelope, utcnow
from interlock.contracts.errors import UnknownDefinition
from interlock.ops import queries
from interlock.ops.errors import AmbiguousWorkflow
from interlock.projector.engine import Context, Workflow
from interlock.projector.engine.effects import facts_from_steps
from interlock.projector.engine.migrate import MIGRATE_EVENT, move, refusal
from interlock.projector.signing import JobSigner
from interlock.projector.store import ConcurrencyConflict
from interlock.projector.store.postgres import open_store
from interlock.projector.store.types import NO_TRACE


async def migrate(
    s: Settings,
    database_url: str,
    workflow_id: str,
    *,
    to_version: int,
    state: str | None,
    tenant: str | None,
    operator: Actor,
) -> dict[str, Any]:
    """Check and commit the move; the outcome as `--json` prints it."""
    reader = queries.open_reader(database_url)
    try:
        view = await queries.workflow_view(reader, workflow_id, tenant)
    except AmbiguousWorkflow as exc:
        return _refused("ambiguous_workflow", str(exc))
    finally:
        await reader.dispose()
    if view is None or view["archived"]:
        return _refused("unknown_workflow", workflow_id)
    store = await open_store(database_url, size=1)
    try:
        stored = await store.load(view["tenant_id"], workflow_id)
        if stored is None:
            return _refused("unknown_workflow", workflow_id)
        wf = stored.workflow
        try:
            source = installed().registry.get(wf.workflow_type, wf.definition_version)
            target = installed().registry.get(wf.workflow_type, to_version)
        except UnknownDefinition as exc:
            return _refused("unknown_version", str(exc))
        into = state or wf.state
        why = refusal(source, target, wf, into)
        if why is not None:
            return _refused("migration_refused", why)
        ctx = Context(
            now=utcnow(),
            parameters=s.parameters.get(wf.workflow_type, {}),
            guards=installed().registry.guards(wf.workflow_type),
        )
        event = _event(wf, target, into, operator, ctx, effects=_effects(source, wf, view["audit"]))
        decision = JobSigner(access.job_signing_key(s)).sign(move(target, wf, into, event, ctx))
        try:
            await store.commit(decision, event, NO_TRACE, ctx)
        except ConcurrencyConflict:
            return _refused("concurrent_change", f"{workflow_id} moved meanwhile; check it again")
    finally:
        await store.close()
    return {
        "accepted": True,
        "workflow_id": workflow_id,
        "event_id": event.event_id,
        "from_version": wf.definition_version,
        "to_version": to_version,
        "from_state": wf.state,
        "state": into,
        "version": decision.workflow.version,
    }


def _effects(
    source: WorkflowDefinition, wf: Workflow, audit: list[dict[str, Any]]
) -> dict[str, Any]:
    """The effect facts of a workflow decided before the engine kept them, from its audit."""
    if wf.execution.effects:
        return {}
    steps = [(r["from_state"], r["event_type"]) for r in audit if r["accepted"]]
    facts = facts_from_steps(source, steps)
    key = wf.execution.review.idempotency_key if wf.execution.review else None
    return {
        state: fact.model_copy(
            update={"idempotency_key": key} if fact.status == "unknown" else {}
        ).model_dump(mode="json")
        for state, fact in facts.items()
    }


def _event(
    wf: Workflow,
    target: WorkflowDefinition,
    state: str,
    operator: Actor,
    ctx: Context,
    *,
    effects: dict[str, Any],
) -> Envelope:
    return Envelope(
        event_id=f"migrate-{uuid.uuid4()}",
        type=MIGRATE_EVENT,
        workflow_type=wf.workflow_type,
        workflow_id=wf.workflow_id,
        tenant_id=wf.tenant_id,
        actor=operator,
        correlation_id=wf.correlation_id,
        occurred_at=ctx.now,
        expected_version=wf.version,
        payload={"to_version": target.version, "state": state}
        | ({"effects": effects} if effects else {}),
    )


def _refused(reason: str, detail: str) -> dict[str, Any]:
    return {"accepted": False, "reason": reason, "detail": detail}

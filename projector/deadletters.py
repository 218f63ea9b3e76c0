"""Auditing what the projector dead-letters: a well-formed message that names a workflow of
its tenant leaves a refused audit row with the dead letter's reason, so the workflow's history
shows every message about it that was never decided (a refusal redelivered is audited once:
the store records a refusal once per event id).

Not audited: a refusal of a sender without standing in the tenant (`door.WITHOUT_STANDING`:
it lands with its sender, on the dead-letter stream, never in that tenant's audit), a timer
firing that came too early (`timer_not_due`: the timer itself is still armed), and a message
naming no workflow of its tenant and type (there is nothing to audit it on).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import cast

from interlock.contracts.envelope import Envelope
from interlock.contracts.registry import Registry
from interlock.projector import door
from interlock.projector.engine import Rejected
from interlock.projector.engine.model import RejectReason
from interlock.projector.refusal_bounds import OVER_LIMIT
from interlock.projector.store.port import WorkflowStore
from interlock.projector.store.types import NO_TRACE

log = logging.getLogger("interlock.projector")
NOT_AUDITED = door.WITHOUT_STANDING | {"timer_not_due", "unknown_workflow", OVER_LIMIT}


async def audit_dead_letter(
    store: WorkflowStore,
    registry: Registry,
    event: Envelope,
    reason: str,
    detail: str,
    *,
    window: door.OccurredWindow,
    now: Callable[[], datetime],
) -> bool:
    """Audit the dead-lettered `event` on the workflow it names; True if a row was written.
    A timestamp outside `window` is recorded as `now()` (the detail says the original was
    refused): the original may be one the database cannot even store."""
    if reason in NOT_AUDITED:
        return False
    stored = await store.load(event.tenant_id, registry.workflow_id(event))
    if stored is None or stored.workflow.workflow_type != event.workflow_type:
        return False
    if window.refusal(event) is not None:
        event = event.model_copy(update={"occurred_at": now()})
    # Dead-letter reasons are a superset of the engine's rejection reasons.
    rejection = Rejected(cast(RejectReason, reason), detail)
    audited = await store.reject(stored.workflow, event, rejection, NO_TRACE)
    log.info("audited dead letter %s of %s: %s", event.event_id, event.workflow_id, reason)
    return audited

"""How the projector refuses: where a refusal is recorded, and when it is not.

A refusal is audited on the workflow it names when its sender may act for that tenant and
stays within its refusal bound; otherwise it is dead-lettered (`MalformedMessage`) with its
sender named, and nothing is written into the tenant's audit. A timer firing that arrives
early is waited for when clock skew explains it (`NotDueYet`), else refused unaudited.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta

from interlock.contracts.definition import WorkflowDefinition
from interlock.contracts.envelope import Envelope
from interlock.contracts.errors import MalformedMessage
from interlock.contracts.registry import Registry
from interlock.contracts.subjects import Inbound
from interlock.otel import metrics
from interlock.projector import door
from interlock.projector.deadletters import NOT_AUDITED, audit_dead_letter
from interlock.projector.duplicates import told_apart
from interlock.projector.engine import Context, Rejected
from interlock.projector.errors import ConcurrencyConflict, NotDueYet
from interlock.projector.outcome import EventOutcome, rejected
from interlock.projector.refusal_bounds import OVER_LIMIT, RefusalBounds, over_limit
from interlock.projector.store.port import WorkflowStore
from interlock.projector.store.types import Stored, TraceInfo

log = logging.getLogger("interlock.projector")


class Refusals:
    def __init__(
        self,
        store: WorkflowStore,
        registry: Registry,
        *,
        clients: door.Clients,
        bounds: RefusalBounds,
        occurred: door.OccurredWindow,
        clock: Callable[[], datetime],
        timer_tolerance: timedelta,
    ) -> None:
        self._store = store
        self._registry = registry
        self._clients = clients
        self._bounds = bounds
        self._occurred = occurred
        self._clock = clock
        self._timer_tolerance = timer_tolerance

    async def at_door(
        self, event: Envelope, rejection: Rejected, trace: TraceInfo, inbound: Inbound | None
    ) -> EventOutcome:
        """Audit a refusal on the workflow `event` addresses, if its tenant has one of that
        type and the sender may speak for that tenant at all; else it is dead-lettered, with
        the sender named, and nothing is written into the tenant's audit."""
        if rejection.reason in door.WITHOUT_STANDING:
            metrics.transition(event.workflow_type, event.type, False, rejection.reason)
            raise MalformedMessage(rejection.reason, rejection.detail)
        stored = await self._store.load(event.tenant_id, self._registry.workflow_id(event))
        if stored is None or stored.workflow.workflow_type != event.workflow_type:
            metrics.transition(event.workflow_type, event.type, False, rejection.reason)
            raise MalformedMessage(rejection.reason, rejection.detail)
        return await self.record(stored, event, rejection, trace, inbound=inbound)

    async def decided_on(
        self,
        stored: Stored,
        event: Envelope,
        rejection: Rejected,
        *,
        fresh: bool,
        trace: TraceInfo,
        ctx: Context | None,
        inbound: Inbound | None,
        definition: WorkflowDefinition,
    ) -> EventOutcome | None:
        """Record `rejection` of `event`, decided by the engine on `stored` (`fresh`: just
        loaded; else cached); None to decide it again on fresh state. A refusal decided on a
        cached checkpoint stands only if it is recorded while the workflow is still at that
        version (a stale entry must not turn a valid event away); one that would not be
        written under that check (a duplicate, a timer firing ahead of its time, a sender
        past its bound) is decided on fresh state only."""
        if not fresh and (rejection.reason == "duplicate" or rejection.retry_at is not None):
            return None
        wf = stored.workflow
        rejection = await told_apart(
            self._store, wf, event, inbound, rejection, definition=definition
        )
        try:
            return await self.record(
                stored, event, rejection, trace, ctx, inbound=inbound, at_version=not fresh
            )
        except ConcurrencyConflict:  # only at a cached checkpoint's version
            return None

    async def record(
        self,
        stored: Stored,
        event: Envelope,
        rejection: Rejected,
        trace: TraceInfo,
        ctx: Context | None = None,
        *,
        inbound: Inbound | None = None,
        at_version: bool = False,
    ) -> EventOutcome:
        """`stored`: the checkpoint it is refused on. `ctx`: what the engine decided in; None
        for a refusal made before it was asked. `inbound`: who sent it (a client past its
        bound is dead-lettered, not audited). `at_version`: `stored` is a cached checkpoint,
        so the refusal is written only while the workflow is still at its version, and one
        past its sender's bound (dead-lettered, nothing written) is not decided on it: either
        way `ConcurrencyConflict`, to decide it again on fresh state."""
        wf = stored.workflow
        if rejection.retry_at is not None:
            self._premature(rejection.retry_at)
        over = over_limit(self._bounds, inbound, wf, event, rejection.reason)
        if over is not None:
            if at_version:
                raise ConcurrencyConflict(f"{wf.workflow_id}: a bounded refusal, on fresh state")
            detail = f"{rejection.reason}: {rejection.detail}; not audited: {over}"
            raise MalformedMessage(OVER_LIMIT, detail)
        if rejection.reason != "duplicate":
            await self._store.reject(wf, event, rejection, trace, ctx, at_version=at_version)
        log.info("rejected %s on %s: %s", event.type, wf.workflow_id, rejection.reason)
        metrics.transition(wf.workflow_type, event.type, False, rejection.reason)
        return rejected(stored, event, rejection)

    async def dead_letter(
        self, event: Envelope, reason: str, detail: str, inbound: Inbound | None
    ) -> bool:
        """Audit a dead-lettered, well-formed `event` on the workflow it names, if its sender
        has standing there (True if a row was written; see `projector.deadletters`)."""
        if reason in NOT_AUDITED or not door.has_standing(event, inbound, self._clients):
            return False
        stored = await self._store.load(event.tenant_id, self._registry.workflow_id(event))
        if stored is not None and over_limit(self._bounds, inbound, stored.workflow, event, reason):
            return False  # its dead letter, naming the sender, is its record
        return await audit_dead_letter(
            self._store,
            self._registry,
            event,
            reason,
            detail,
            window=self._occurred,
            now=self._clock,
        )

    def _premature(self, due: datetime) -> None:
        """A timer firing ahead of its time: waited for if only clock skew explains it, else
        refused without an audit row (premature firings must neither hold consumer slots for
        long nor grow the audit trail)."""
        if due - self._clock() <= self._timer_tolerance:
            raise NotDueYet(due)
        raise MalformedMessage("timer_not_due", "the timer firing arrived before its time")

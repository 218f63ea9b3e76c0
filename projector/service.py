"""The projector's application service: validate at the door, load, decide, commit.

One call handles one event. Lost races (another writer committed the version first) are
retried by reloading and deciding again, never by overwriting. Messages that can never be
processed raise `MalformedMessage` so the consumer dead-letters them.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any

from opentelemetry import trace

from interlock.contracts.definition import WorkflowDefinition
from interlock.contracts.envelope import (
    Envelope,
    utcnow,
)
from interlock.contracts.errors import MalformedMessage, UnknownDefinition
from interlock.contracts.ids import fingerprint
from interlock.contracts.registry import Registry
from interlock.contracts.subjects import Inbound, parse_inbound
from interlock.otel import metrics
from interlock.projector import door
from interlock.projector.checked import first_checkpoint, validated
from interlock.projector.checkpoints import CheckpointCache
from interlock.projector.claims import ClaimVerifier
from interlock.projector.duplicates import told_apart
from interlock.projector.engine import Accepted, Context, Rejected, resolve
from interlock.projector.errors import ConcurrencyConflict, DuplicateEvent
from interlock.projector.outcome import EventOutcome, accepted, measure
from interlock.projector.refusal_bounds import RefusalBounds
from interlock.projector.refusals import Refusals
from interlock.projector.signing import JobSigner
from interlock.projector.store.port import WorkflowStore
from interlock.projector.store.types import NO_TRACE, Stored, TraceInfo

TIMER_TOLERANCE = timedelta(seconds=5)
"""How early a timer firing may arrive and still be waited for: the clock skew between the
timer service and the projector that the deployment must stay within."""
tracer = trace.get_tracer("interlock.projector")
__all__ = ["EventOutcome", "Projector", "first_checkpoint", "validated"]


class Projector:
    def __init__(
        self,
        store: WorkflowStore,
        *,
        registry: Registry,
        clock: Callable[[], datetime] = utcnow,
        rand: Callable[[], float] = random.random,
        parameters: Mapping[str, Mapping[str, Any]] | None = None,
        max_conflicts: int = 25,
        clients: door.Clients | None = None,
        timer_tolerance: timedelta = TIMER_TOLERANCE,
        signer: JobSigner | None = None,
        occurred_window: door.OccurredWindow | None = None,
        sender_claims: ClaimVerifier | None = None,
        refusal_bounds: RefusalBounds | None = None,
    ) -> None:
        """`clients`: who may send requests and signals (`INTERLOCK_CLIENTS`); none by
        default. `timer_tolerance`: how early a timer firing may arrive (clock skew between
        the timer service and the projector) and still be waited for rather than refused.
        `signer`: signs every job dispatched (without one, jobs go out unsigned, and stages
        refuse them). `occurred_window`: how far from now an event's `occurred_at` may lie.
        `sender_claims`: verifies the gateway's signed sender claims (`inbound`); without it a
        relayed message's sender is the one its event id names. `refusal_bounds`: how many
        refusal rows one client may write into workflow audits (`projector.refusal_bounds`)."""
        self._store = store
        self._occurred = occurred_window or door.OccurredWindow()
        self._registry = registry
        self._signer = signer
        self._clients = clients or {}
        self._clock = clock
        self._rand = rand
        self._parameters = parameters or {}
        self._max_conflicts = max_conflicts
        self._checkpoints = CheckpointCache()
        self._claims = sender_claims
        self._refusals = Refusals(
            store,
            registry,
            clients=self._clients,
            bounds=refusal_bounds or RefusalBounds(),
            occurred=self._occurred,
            clock=clock,
            timer_tolerance=timer_tolerance,
        )

    def inbound(self, subject: str, body: bytes, headers: Mapping[str, str]) -> Inbound:
        """What a message's subject (and, verified, its sender claim) says about it; raises
        `MalformedMessage` (`bad_subject`)."""
        inbound = parse_inbound(subject)
        return inbound if self._claims is None else self._claims.checked(inbound, body, headers)

    def refused_at_door(
        self, event: Envelope, inbound: Inbound, message_id: str | None = None
    ) -> bool:
        """Whether `event` (sent under `message_id`) is refused whatever its workflow's state:
        its sender, its ids or its timestamp (`handle` and the consumer decide how)."""
        if door.squatted_message_id(inbound, message_id) is not None:
            return True
        definition = self._latest(event.workflow_type)
        spec = definition.event(event.type)
        if spec is None or self._occurred.refusal(event) is not None:
            return True
        return door.refusal(definition, spec, event, inbound, self._clients) is not None

    async def handle(
        self, event: Envelope, trace: TraceInfo = NO_TRACE, *, inbound: Inbound | None = None
    ) -> EventOutcome:
        """Decide `event`. `inbound` is what its subject says: the kind of event, the
        workflow type and the sender the broker admitted on it (None: an in-process caller
        that did not go through the broker)."""
        definition = self._latest(event.workflow_type)
        spec = definition.event(event.type)
        if spec is None or not self._registry.knows_event(event.workflow_type, event.type):
            raise MalformedMessage(
                "unknown_type", f"{event.type} is not a {event.workflow_type} event"
            )
        refused = door.refusal(definition, spec, event, inbound, self._clients)
        bad_time = self._occurred.refusal(event)
        # Checked after standing (a sender without it is refused as such, nothing audited)
        # and before anything is written (such a timestamp may not even be storable).
        if bad_time is not None and (
            refused is None or refused.reason not in door.WITHOUT_STANDING
        ):
            metrics.transition(event.workflow_type, event.type, False, "bad_timestamp")
            raise MalformedMessage("bad_timestamp", bad_time)
        if refused is not None:
            return await self._refusals.at_door(event, refused, trace, inbound)
        if event.type == definition.start_event:
            return await self._start(definition, event, trace)
        if event.workflow_id is None:
            raise MalformedMessage("schema_mismatch", "workflow_id: required unless START")
        for _ in range(self._max_conflicts):
            stored, fresh = await self._checkpoint(
                event.tenant_id, event.workflow_id, event.event_id
            )
            if stored is None or stored.workflow.workflow_type != event.workflow_type:
                raise MalformedMessage(
                    "unknown_workflow", f"no {event.workflow_type} workflow {event.workflow_id}"
                )
            wf = stored.workflow
            definition = self._registry.get(wf.workflow_type, wf.definition_version)
            checked = validated(definition, event)
            ctx = self._context(definition)
            decision = door.job_refusal(wf, checked, inbound) or resolve(
                definition, wf, checked, ctx
            )
            if isinstance(decision, Rejected):
                outcome = await self._refusals.decided_on(
                    stored, checked, decision, fresh=fresh,
                    trace=trace, ctx=ctx, inbound=inbound, definition=definition,
                )  # fmt: skip
                if outcome is None:
                    self._checkpoints.forget(wf.tenant_id, wf.workflow_id)
                    continue
                return outcome
            try:
                decision = self._signed(decision)
                with tracer.start_as_current_span("projector commit"):
                    await self._store.commit(decision, checked, trace, ctx)
            except ConcurrencyConflict:
                self._checkpoints.forget(wf.tenant_id, wf.workflow_id)
                await asyncio.sleep(self._rand() * 0.005)  # de-synchronise racing writers
                continue
            except DuplicateEvent:
                self._checkpoints.forget(wf.tenant_id, wf.workflow_id)
                duplicate = Rejected("duplicate", "processed concurrently")
                refused = await told_apart(
                    self._store, wf, checked, inbound, duplicate, definition=definition
                )
                return await self._refusals.record(
                    stored, checked, refused, trace, ctx, inbound=inbound
                )
            self._remember(decision, stored.fingerprint, trace)
            measure(definition, decision, checked, stored, self._clock())
            return accepted(decision, checked, stored)
        raise ConcurrencyConflict(f"{event.workflow_id}: lost {self._max_conflicts} races in a row")

    async def _start(
        self, definition: WorkflowDefinition, event: Envelope, trace: TraceInfo
    ) -> EventOutcome:
        checked = validated(definition, event)
        workflow_id = self._registry.workflow_id(checked)
        checked = checked.model_copy(update={"workflow_id": workflow_id})
        # A type keyed by content says when two requests are the same: when their keys are.
        key = self._registry.request_key(checked)
        same_as = {"key": key} if key is not None else {"payload": checked.payload}
        request_fp = fingerprint(
            {"tenant": event.tenant_id, "type": event.workflow_type, **same_as}
        )
        for _ in range(self._max_conflicts):
            stored, fresh = await self._checkpoint(event.tenant_id, workflow_id, event.event_id)
            if stored is not None:
                same = stored.fingerprint == request_fp
                rejection = Rejected(
                    "idempotent_replay" if same else "idempotency_conflict",
                    "same request, existing workflow returned"
                    if same
                    else "the request key was reused with a different payload; nothing created",
                )
                outcome = await self._refusals.decided_on(
                    stored, checked, rejection, fresh=fresh,
                    trace=trace, ctx=None, inbound=None, definition=definition,
                )  # fmt: skip
                if outcome is None:
                    self._checkpoints.forget(event.tenant_id, workflow_id)
                    continue
                return outcome
            blank = first_checkpoint(definition, checked)
            ctx = self._context(definition)
            decision = resolve(definition, blank, checked, ctx)
            if not isinstance(decision, Accepted):
                raise MalformedMessage("invalid_request", decision.detail)
            decision = self._signed(decision)
            with tracer.start_as_current_span("projector commit"):
                created = await self._store.create(decision, checked, request_fp, trace, ctx)
            if created:
                self._remember(decision, request_fp, trace)
                metrics.transition(definition.workflow_type, checked.type, True, None)
                return accepted(decision, checked)
        raise ConcurrencyConflict(f"{workflow_id}: creation kept racing")

    async def audit_dead_letter(
        self, event: Envelope, reason: str, detail: str, inbound: Inbound | None
    ) -> bool:
        """Audit a dead-lettered, well-formed `event` on the workflow it names, if its sender
        has standing there (True if a row was written; see `projector.refusals`)."""
        return await self._refusals.dead_letter(event, reason, detail, inbound)

    async def job_stage(
        self, tenant_id: str, workflow_id: str, workflow_type: str, job_id: str
    ) -> str | None:
        """The stage of the open job `job_id` of the tenant's workflow of that type, as
        committed (read from the store, never a cached checkpoint: another process may have
        decided since); None if it lists no such job."""
        return await self._store.job_stage(tenant_id, workflow_id, workflow_type, job_id)

    async def _checkpoint(
        self, tenant_id: str, workflow_id: str, event_id: str
    ) -> tuple[Stored | None, bool]:
        """(checkpoint, freshly loaded?): the cached one if any, else from the store (and
        then cached: the workflow's current state, which its next event need not load)."""
        cached = self._checkpoints.get(tenant_id, workflow_id)
        if cached is not None:
            return cached, False
        loaded = await self._store.load(tenant_id, workflow_id, event_id)
        if loaded is not None:
            self._checkpoints.put(loaded)
        return loaded, True

    def _signed(self, decision: Accepted) -> Accepted:
        return decision if self._signer is None else self._signer.sign(decision)

    def _remember(self, decision: Accepted, request_fp: str, trace: TraceInfo) -> None:
        stored = Stored(decision.workflow, request_fp, self._clock(), dict(trace.headers))
        self._checkpoints.put(stored)

    def _latest(self, workflow_type: str) -> WorkflowDefinition:
        try:
            return self._registry.latest(workflow_type)
        except UnknownDefinition as exc:
            raise MalformedMessage("unknown_workflow_type", str(exc)) from exc

    def _context(self, definition: WorkflowDefinition) -> Context:
        overrides = self._parameters.get(definition.workflow_type, {})
        return Context(
            now=self._clock(),
            parameters=overrides,
            guards=self._registry.guards(definition.workflow_type),
        )

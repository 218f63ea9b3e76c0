"""A workflow store in memory that keeps the promises of the PostgreSQL store and fails the same
way: a compare-and-set on the version (`ConcurrencyConflict`), one acceptance per (tenant,
workflow, event id) (`DuplicateEvent`), creation that does nothing when the tenant's id exists,
refusals audited once and reserving nothing, and every write all or nothing. The same
contract suite runs against both.

It writes the values the PostgreSQL statements are given (`projector.store.rows`), through
the same JSON round trip, and keeps what PostgreSQL keeps in tables, for tests to read back:
the audit trail in commit order, processed events, outbox rows and timer rows.

Each call lets other tasks run before it takes effect, as a database round trip does, so
concurrent callers interleave (and race) the way they do against PostgreSQL. Set `available`
to False to make every call fail with `StoreUnavailable`, as when the database is unreachable.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from interlock.contracts.envelope import Envelope, utcnow
from interlock.contracts.errors import StoreUnavailable
from interlock.projector.engine.model import Accepted, Context, Rejected, Workflow
from interlock.projector.errors import ConcurrencyConflict, DuplicateEvent
from interlock.projector.store import rows
from interlock.projector.store.memory_rows import (
    Key,
    Values,
    armed_timers,
    as_stored,
    audit_record,
    belongs,
    history_record,
    key,
)
from interlock.projector.store.records import (
    AuditRecord,
    HistoryRecord,
    OutboxRecord,
    ProcessedEvent,
    TimerRecord,
)
from interlock.projector.store.types import Stored, TraceInfo

_SET_ON_CREATE = ("workflow_type", "tenant_id", "fingerprint", "correlation_id")
_SET_ON_COMMIT = ("state", "version", "definition_version", "data", "execution", "trace_headers")
"""The `workflows` columns CREATE writes besides these, and the ones COMMIT updates."""


class InMemoryWorkflowStore:
    """The `WorkflowStore` port in memory, for tests (one event loop, no persistence)."""

    def __init__(self, *, clock: Callable[[], datetime] = utcnow) -> None:
        self._clock = clock
        self.available = True
        self._workflows: dict[Key, Values] = {}  # `workflows` rows by (tenant, id)
        self._processed: list[ProcessedEvent] = []
        self._refused: set[tuple[str, str, str]] = set()
        self._audit: list[AuditRecord] = []
        self._outbox: list[OutboxRecord] = []
        self._timers: dict[str, TimerRecord] = {}
        self._history: list[HistoryRecord] = []

    # --- the port ----------------------------------------------------------------------

    async def load(
        self, tenant_id: str, workflow_id: str, event_id: str | None = None
    ) -> Stored | None:
        """The current checkpoint, with `seen_event_ids` = {event_id} if already processed."""
        await self._round_trip()
        row = self._workflows.get((tenant_id, workflow_id))
        if row is None:
            return None
        seen = ProcessedEvent(tenant_id, workflow_id, event_id or "") in self._processed
        return rows.loaded({**as_stored(row), "seen": seen}, event_id)

    async def job_stage(
        self, tenant_id: str, workflow_id: str, workflow_type: str, job_id: str
    ) -> str | None:
        """The stage of the open job `job_id`, None if the workflow does not list it."""
        await self._round_trip()
        row = self._workflows.get((tenant_id, workflow_id))
        if row is None or row["workflow_type"] != workflow_type:
            return None
        job = as_stored(row)["execution"].get("open_jobs", {}).get(job_id)
        return None if job is None else str(job["stage"])

    async def create(
        self,
        decision: Accepted,
        event: Envelope,
        fingerprint: str,
        trace: TraceInfo,
        ctx: Context | None = None,
    ) -> bool:
        """Insert a new workflow and its first transition; False if the id already exists."""
        values = as_stored(rows.accepted(decision, event, trace, fingerprint, ctx))
        await self._round_trip()
        if key(values) in self._workflows:
            return False
        columns = (*_SET_ON_CREATE, *_SET_ON_COMMIT)
        row = {"id": values["workflow_id"], "replays": {}, **{k: values[k] for k in columns}}
        self._record(values, row)
        return True

    async def commit(
        self, decision: Accepted, event: Envelope, trace: TraceInfo, ctx: Context | None = None
    ) -> None:
        """Apply an accepted decision; `ConcurrencyConflict` if the version moved meanwhile."""
        values = as_stored(rows.accepted(decision, event, trace, None, ctx))
        await self._round_trip()
        current = self._workflows.get(key(values))
        if current is None or current["version"] != values["version"] - 1:
            raise ConcurrencyConflict(
                f"{values['workflow_id']} moved past v{values['version'] - 1}"
            )
        self._record(values, {**current, **{k: values[k] for k in _SET_ON_COMMIT}})

    async def reject(
        self,
        workflow: Workflow,
        event: Envelope,
        rejection: Rejected,
        trace: TraceInfo,
        ctx: Context | None = None,
        *,
        at_version: bool = False,
    ) -> bool:
        """Record a refused event (no state change, its id not reserved); True if audited.
        `at_version`: only while the workflow is at `workflow`'s version and the event was
        not accepted for it, else `ConcurrencyConflict`."""
        values = as_stored(rows.rejected(workflow, event, rejection, trace, ctx))
        await self._round_trip()
        row = self._workflows.get(key(values), {})
        done = ProcessedEvent(workflow.tenant_id, workflow.workflow_id, event.event_id)
        if at_version and (row.get("version") != workflow.version or done in self._processed):
            raise ConcurrencyConflict(f"{workflow.workflow_id} moved past v{workflow.version}")
        first: bool
        if values["counted"]:
            replays: dict[str, int] | None = row.get("replays")
            if replays is None:
                return False
            replays[values["reason"]] = replays.get(values["reason"], 0) + 1
            first = replays[values["reason"]] == 1
        else:
            refused = (*key(values), values["event_id"])
            first = refused not in self._refused
            self._refused.add(refused)
        if first:
            audit = audit_record(values, to_state=None, accepted=False, reason=values["reason"])
            self._audit.append(audit)
            self._history.append(
                history_record(values, recorded_at=self._clock(), from_version=values["version"])
            )
        return first

    async def history(self, tenant_id: str, workflow_id: str) -> list[HistoryRecord]:
        """The workflow's decided events in the order they were decided."""
        await self._round_trip()
        return [h for h in self._history if belongs(h, tenant_id, workflow_id)]

    async def decided(
        self, tenant_id: str, workflow_id: str, event_id: str
    ) -> Mapping[str, Any] | None:
        """The event accepted under `event_id` on the workflow (None: none)."""
        history = await self.history(tenant_id, workflow_id)
        return next(
            (h.event for h in history if h.accepted and h.event["event_id"] == event_id), None
        )

    # --- what a test reads back ----------------------------------------------------------

    def audit(
        self, workflow_id: str | None = None, tenant_id: str | None = None
    ) -> list[AuditRecord]:
        """Audit rows in commit order (of one workflow, of one tenant or any, or all)."""
        return [a for a in self._audit if workflow_id is None or belongs(a, tenant_id, workflow_id)]

    def processed(self, workflow_id: str, tenant_id: str | None = None) -> list[ProcessedEvent]:
        """The events of the workflow that can never be decided again, in processing order."""
        return [p for p in self._processed if belongs(p, tenant_id, workflow_id)]

    def outbox(
        self, workflow_id: str | None = None, tenant_id: str | None = None
    ) -> list[OutboxRecord]:
        """Outbox rows in commit order (of one workflow, or all)."""
        return [
            o for o in self._outbox if workflow_id is None or belongs(o, tenant_id, workflow_id)
        ]

    def timers(
        self, workflow_id: str | None = None, tenant_id: str | None = None
    ) -> list[TimerRecord]:
        """Timer rows by id (of one workflow, or all)."""
        found = [
            t
            for t in self._timers.values()
            if workflow_id is None or belongs(t, tenant_id, workflow_id)
        ]
        return sorted(found, key=lambda t: t.id)

    def replays(self, workflow_id: str, tenant_id: str) -> dict[str, int]:
        """Repeated requests for the tenant's workflow, counted by reason."""
        row = self._workflows.get((tenant_id, workflow_id))
        return dict(row["replays"]) if row else {}

    # --- one statement -------------------------------------------------------------------

    async def _round_trip(self) -> None:
        await asyncio.sleep(0)  # other tasks run while the call is "on the wire"
        if not self.available:
            raise StoreUnavailable("the in-memory store is set unavailable")

    def _record(self, values: Values, workflow: Values) -> None:
        """Write an accepted transition, or nothing if any row would be a duplicate."""
        processed = ProcessedEvent(*key(values), values["event_id"])
        if processed in self._processed:
            raise DuplicateEvent("event already processed")
        armed = armed_timers(values)
        if len({t.id for t in armed}) < len(armed) or any(t.id in self._timers for t in armed):
            raise DuplicateEvent("timer already armed")
        self._workflows[key(values)] = {**workflow, "updated_at": self._clock()}
        self._processed.append(processed)
        self._audit.append(
            audit_record(values, to_state=values["state"], accepted=True, reason=None)
        )
        self._history.append(
            history_record(values, recorded_at=self._clock(), from_version=values["version"] - 1)
        )
        self._outbox += [
            OutboxRecord(subject, headers, body, values["tenant_id"], values["workflow_id"])
            for subject, headers, body in zip(
                values["subjects"], values["headers"], values["bodies"], strict=True
            )
        ]
        for timer_id in values["cancelled_timers"]:
            timer = self._timers.get(timer_id)
            if timer is not None and timer.status == "armed":
                self._timers[timer_id] = replace(timer, status="cancelled")
        self._timers.update((t.id, t) for t in armed)

"""The workflow store: loads checkpoints and commits decisions atomically.

An accepted decision is one transaction: the compare-and-set update of the workflow row, the
processed-event row, the audit row, the outbox rows and the timer rows. A rejection commits
its audit row (and processed-event row) only. Driver errors are translated into
`ConcurrencyConflict`, `DuplicateEvent` and `StoreUnavailable`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sqlalchemy import insert, select, true, update
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from contracts.envelope import Envelope
from contracts.errors import ErrorCode, InterlockError, TransientError
from projector.engine.model import Accepted, Execution, Rejected, Workflow
from projector.store import rows
from projector.store.schema import audit, outbox, processed_events, timers, workflows
from projector.store.types import Stored, TraceInfo

UNIQUE_VIOLATION = "23505"


class ConcurrencyConflict(TransientError):
    """Another writer advanced the workflow first; reload and decide again."""

    code = ErrorCode.CONCURRENCY_CONFLICT


class DuplicateEvent(InterlockError):
    """The event id was already processed by a concurrent writer."""

    code = ErrorCode.DUPLICATE_EVENT


class StoreUnavailable(TransientError):
    code = ErrorCode.STORE_UNAVAILABLE


class WorkflowStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    @asynccontextmanager
    async def _transaction(self) -> AsyncIterator[AsyncConnection]:
        try:
            async with self._engine.begin() as conn:
                yield conn
        except IntegrityError as exc:
            if getattr(exc.orig, "sqlstate", None) == UNIQUE_VIOLATION:
                raise DuplicateEvent("event already processed") from exc
            raise
        except DBAPIError as exc:
            if exc.connection_invalidated:
                raise StoreUnavailable("lost the database connection") from exc
            raise
        except OSError as exc:
            raise StoreUnavailable(f"database unreachable: {exc}") from exc

    async def load(self, workflow_id: str, event_id: str | None = None) -> Stored | None:
        """The current checkpoint, with `seen_event_ids` = {event_id} if already processed."""
        seen = (
            select(true())
            .where(
                processed_events.c.workflow_id == workflow_id,
                processed_events.c.event_id == event_id,
            )
            .scalar_subquery()
            if event_id
            else None
        )
        query = select(workflows, *([seen.label("seen")] if seen is not None else []))
        async with self._transaction() as conn:
            row = (await conn.execute(query.where(workflows.c.id == workflow_id))).first()
        if row is None:
            return None
        m = row._mapping
        return Stored(
            workflow=Workflow(
                workflow_id=m["id"],
                workflow_type=m["workflow_type"],
                tenant_id=m["tenant_id"],
                state=m["state"],
                version=m["version"],
                definition_version=m["definition_version"],
                data=m["data"],
                execution=Execution.model_validate(m["execution"]),
                correlation_id=m["correlation_id"],
                seen_event_ids=frozenset({event_id}) if event_id and m.get("seen") else frozenset(),
            ),
            fingerprint=m["fingerprint"],
            updated_at=m["updated_at"],
            trace_headers=m["trace_headers"],
        )

    async def create(
        self, decision: Accepted, event: Envelope, fingerprint: str, trace: TraceInfo
    ) -> bool:
        """Insert a new workflow and its first transition; False if the id already exists."""
        wf = decision.workflow
        async with self._transaction() as conn:
            result = await conn.execute(rows.insert_workflow(wf, fingerprint, trace))
            if result.rowcount == 0:
                return False  # nothing else was written; the transaction commits empty
            await self._record(conn, decision, event, trace)
        return True

    async def commit(self, decision: Accepted, event: Envelope, trace: TraceInfo) -> None:
        """Apply an accepted decision; `ConcurrencyConflict` if the version moved meanwhile."""
        wf = decision.workflow
        async with self._transaction() as conn:
            result = await conn.execute(
                update(workflows)
                .where(workflows.c.id == wf.workflow_id, workflows.c.version == wf.version - 1)
                .values(rows.workflow_changes(wf, trace))
            )
            if result.rowcount != 1:
                # Zero rows: another transition committed version `wf.version` first. The
                # caller reloads and decides again; we never overwrite.
                raise ConcurrencyConflict(f"{wf.workflow_id} moved past v{wf.version - 1}")
            await self._record(conn, decision, event, trace)

    async def reject(
        self, workflow: Workflow, event: Envelope, rejection: Rejected, trace: TraceInfo
    ) -> None:
        """Record a rejected event: audit (and processed-event) rows, no state change.

        Replays and premature events get no processed-event row: a replay is not a new
        event, and a premature one must be decided again when its time comes.
        """
        final = rejection.retry_at is None
        async with self._transaction() as conn:
            if final and rejection.reason not in ("idempotent_replay", "idempotency_conflict"):
                await conn.execute(
                    insert(processed_events).values(
                        rows.processed_row(event, workflow.workflow_id, accepted=False)
                    )
                )
            audit_row = rows.rejection_audit(workflow, event, rejection, trace)
            await conn.execute(insert(audit).values(audit_row))

    async def _record(
        self, conn: AsyncConnection, decision: Accepted, event: Envelope, trace: TraceInfo
    ) -> None:
        wf = decision.workflow
        await conn.execute(
            insert(processed_events).values(rows.processed_row(event, wf.workflow_id, True))
        )
        await conn.execute(insert(audit).values(rows.accepted_audit(decision, event, trace)))
        outbox_rows = rows.outbox_rows(decision, trace)
        if outbox_rows:
            await conn.execute(insert(outbox), outbox_rows)
        if decision.timers_armed:
            await conn.execute(insert(timers), rows.timer_rows(decision, trace))
        if decision.timers_cancelled:
            await conn.execute(
                update(timers)
                .where(timers.c.id.in_(decision.timers_cancelled), timers.c.status == "armed")
                .values(status="cancelled")
            )

"""The workflow store on PostgreSQL: loads checkpoints and commits decisions atomically.

An accepted decision is one statement (see `projector.store.sql`): the compare-and-set update
of the workflow row, the processed-event row, the audit row, the outbox rows and the timer
rows. A refusal writes one audit row (or a count) and reserves nothing. Driver errors become
`ConcurrencyConflict`, `DuplicateEvent` and `StoreUnavailable`; callers never see asyncpg's.

The store runs on an asyncpg pool rather than through SQLAlchemy's execution layer: this is
the projector's hot path (measured: the ORM-free Core path still cost ~2 ms of Python per
decision across eight round trips; this is two round trips and a fraction of the CPU).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, cast

import asyncpg
import orjson

from interlock.contracts.envelope import Envelope
from interlock.contracts.errors import StoreUnavailable
from interlock.contracts.urls import asyncpg_dsn
from interlock.projector.engine.model import Accepted, Context, Rejected, Workflow
from interlock.projector.errors import ConcurrencyConflict, DuplicateEvent
from interlock.projector.store import rows, sql
from interlock.projector.store.batching import MAX_BATCH, Batches
from interlock.projector.store.records import HistoryRecord
from interlock.projector.store.types import Stored, TraceInfo

if TYPE_CHECKING:
    from interlock.projector.outbox import OutboxPublisher

log = logging.getLogger("interlock.projector")
_LOST = (
    OSError,
    TimeoutError,
    asyncpg.InterfaceError,
    asyncpg.PostgresConnectionError,
    asyncpg.exceptions.OperatorInterventionError,
    # A connection the server ended while it sat idle in the pool fails its next statement
    # with asyncpg's internal protocol-state error; the pool then discards it.
    asyncpg.InternalClientError,
)
"""Driver errors that mean the database went away (nothing of the call is known written)."""


class _SessionFree(asyncpg.Connection):  # type: ignore[misc]
    """A pool connection the store never leaves session state on (no LISTEN, advisory lock,
    cursor or SET), so releasing it skips asyncpg's reset query: one round trip less per
    decision. An open transaction is still rolled back on release."""

    def get_reset_query(self) -> str:
        return ""


def _encode(value: Any) -> str:
    """JSON text for a JSON(B) parameter: orjson (a tenth of the standard encoder's time on
    the projector's rows), the standard encoder for what orjson refuses (integers beyond 64
    bits)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        return json.dumps(value)


async def json_codecs(conn: asyncpg.Connection) -> None:
    """JSON and JSONB columns as Python values on `conn` (read by the standard decoder:
    orjson would read an integer beyond 64 bits as a float)."""
    for name in ("json", "jsonb"):
        await conn.set_type_codec(name, encoder=_encode, decoder=json.loads, schema="pg_catalog")


async def open_store(
    database_url: str, *, size: int = 10, batch: int = MAX_BATCH, warm: bool = False
) -> PostgresWorkflowStore:
    """A store on a new pool of up to `size` connections for the plain postgresql:// URL,
    committing up to `batch` decisions in one statement; `close()` it when done.

    `warm`: open all `size` connections now and keep them open (the pool reconnects one the
    server or its idle timeout closed). A cold pool opens a connection when it runs out, and
    a new connection costs a server process, authentication and the codecs' type lookups:
    20 to 70 ms on a 2-core machine. A burst of messages after a quiet spell made every decision
    in flight wait for those together, a good workflow's step among them (measured in the
    hostile run: 19 to 66 ms per acquire as the burst began)."""
    try:
        pool = await asyncpg.create_pool(
            asyncpg_dsn(database_url),
            min_size=size if warm else 1,
            max_size=size,
            init=json_codecs,
            connection_class=_SessionFree,
        )
    except (OSError, asyncpg.PostgresError) as exc:
        raise StoreUnavailable(f"cannot reach the database: {type(exc).__name__}") from exc
    return PostgresWorkflowStore(pool, batch)


class PostgresWorkflowStore:
    """The `WorkflowStore` port on an asyncpg pool."""

    def __init__(self, pool: asyncpg.Pool, batch: int = MAX_BATCH) -> None:
        self._pool = pool
        self._publisher: OutboxPublisher | None = None
        self.batches = Batches(self._connection, lambda: self._publisher, batch)
        """Group commit of the decisions (`batching`)."""

    @property
    def pool(self) -> asyncpg.Pool:
        return self._pool

    def publish_after_commit(self, publisher: OutboxPublisher) -> None:
        """From now on, hand the outbox rows of every committed decision to `publisher`
        right after the commit (see `projector.outbox`); the relay waits its grace first."""
        self._publisher = publisher

    async def close(self) -> None:
        log.info(
            "group commit: %d decisions in %d statements",
            self.batches.decisions,
            self.batches.statements,
        )
        await self._pool.close()

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[asyncpg.Connection]:
        acquired = False
        try:
            async with self._pool.acquire() as conn:
                acquired = True
                yield conn
        except asyncpg.UniqueViolationError as exc:
            raise DuplicateEvent("event already processed") from exc
        except _LOST as exc:
            raise StoreUnavailable(f"lost the database: {type(exc).__name__}") from exc
        except asyncpg.PostgresError as exc:
            if acquired:
                raise  # a statement failed: a bug, not an outage
            # The pool replaces closed connections on acquire; the server refused a new one.
            raise StoreUnavailable(f"cannot reach the database: {type(exc).__name__}") from exc

    async def _run(self, statement: sql.Statement, values: dict[str, Any]) -> Any:
        async with self._connection() as conn:
            return await conn.fetchval(statement.sql, *statement.args(values))

    async def _write(self, kind: str, values: dict[str, Any]) -> bool:
        """Commit a decision (`commit` or `create`, grouped with others ready at the same time,
        `batching`); True if it wrote. The rows it left to this projector to publish are
        published once its statement returned."""
        written, deferred = await self.batches.write(kind, values)
        publisher = self._publisher
        if deferred and publisher is not None:
            messages = zip(values["subjects"], values["headers"], values["bodies"], strict=True)
            await publisher.publish(deferred, list(messages))
        return bool(written)

    async def load(
        self, tenant_id: str, workflow_id: str, event_id: str | None = None
    ) -> Stored | None:
        """The current checkpoint, with `seen_event_ids` = {event_id} if already processed."""
        values = {"tenant_id": tenant_id, "workflow_id": workflow_id, "event_id": event_id or ""}
        async with self._connection() as conn:
            row = await conn.fetchrow(sql.LOAD.sql, *sql.LOAD.args(values))
        return None if row is None else rows.loaded(row, event_id)

    async def job_stage(
        self, tenant_id: str, workflow_id: str, workflow_type: str, job_id: str
    ) -> str | None:
        """The stage of the open job `job_id`, None if the workflow does not list it."""
        values = {
            "tenant_id": tenant_id,
            "workflow_id": workflow_id,
            "workflow_type": workflow_type,
            "job_id": job_id,
        }
        async with self._connection() as conn:
            stage = await conn.fetchval(sql.JOB_STAGE.sql, *sql.JOB_STAGE.args(values))
        return None if stage is None else str(stage)

    async def create(
        self,
        decision: Accepted,
        event: Envelope,
        fingerprint: str,
        trace: TraceInfo,
        ctx: Context | None = None,
    ) -> bool:
        """Insert a new workflow and its first transition; False if the id already exists."""
        return await self._write("create", rows.accepted(decision, event, trace, fingerprint, ctx))

    async def commit(
        self, decision: Accepted, event: Envelope, trace: TraceInfo, ctx: Context | None = None
    ) -> None:
        """Apply an accepted decision; `ConcurrencyConflict` if the version moved meanwhile."""
        values = rows.accepted(decision, event, trace, None, ctx)
        if not await self._write("commit", values):
            wf = decision.workflow
            if await self._run(sql.DUPLICATE, values):
                raise DuplicateEvent(f"{event.event_id} already processed for {wf.workflow_id}")
            # Zero rows: another transition committed this version first. The caller
            # reloads and decides again; we never overwrite.
            raise ConcurrencyConflict(f"{wf.workflow_id} moved past v{wf.version - 1}")

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
        values = {**rows.rejected(workflow, event, rejection, trace, ctx), "at_version": at_version}
        async with self._connection() as conn:
            row = await conn.fetchrow(sql.REJECT.sql, *sql.REJECT.args(values))
        if not row["held"]:
            raise ConcurrencyConflict(f"{workflow.workflow_id} moved past v{workflow.version}")
        return bool(row["audited"])

    async def decided(
        self, tenant_id: str, workflow_id: str, event_id: str
    ) -> Mapping[str, Any] | None:
        """The event accepted under `event_id` on the workflow (None: none is kept)."""
        values = {"tenant_id": tenant_id, "workflow_id": workflow_id, "event_id": event_id}
        async with self._connection() as conn:
            event = await conn.fetchval(sql.DECIDED.sql, *sql.DECIDED.args(values))
        return cast(Mapping[str, Any], event) if event is not None else None

    async def history(self, tenant_id: str, workflow_id: str) -> list[HistoryRecord]:
        """The workflow's decided events in the order they were decided."""
        values = {"tenant_id": tenant_id, "workflow_id": workflow_id}
        async with self._connection() as conn:
            found = await conn.fetch(sql.HISTORY.sql, *sql.HISTORY.args(values))
        return [rows.history_record(row) for row in found]

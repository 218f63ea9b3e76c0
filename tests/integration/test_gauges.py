"""The relay's operational gauges against a real PostgreSQL: outbox lag and stuck workflows."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg

from interlock.relay.gauges import Gauges
from interlock.relay.store import ENSURE_CURSOR
from tests.support.polling import eventually
from tests.support.telemetry import recorded
from tests.support.workflow_rows import insert_workflow
from tests.support.workflows import REGISTRY

STUCK_AFTER = 60.0


async def _timer(db: asyncpg.Connection, wid: str, *, fires_in_s: float) -> None:
    await db.execute(
        """
        INSERT INTO timers (id, workflow_id, workflow_type, tenant_id, kind, event_type,
                            fire_at, status, armed_version)
        VALUES ($1, $2, 'support', 'acme', 'retry', 'RETRY_DUE',
                now() + make_interval(secs => $3), 'armed', 1)
        """,
        f"timer-{wid}",
        wid,
        fires_in_s,
    )


async def test_stuck_counts_only_workflows_that_stopped_without_a_reason(
    database_url: str, db: asyncpg.Connection
) -> None:
    old, fresh = STUCK_AFTER * 10, 1.0
    await insert_workflow(db, "idle-classifying", "CLASSIFYING", idle_s=old)  # stuck
    await insert_workflow(db, "idle-executing", "EXECUTING_ACTION", idle_s=old)  # stuck
    await insert_workflow(db, "busy", "CLASSIFYING", idle_s=fresh)
    await insert_workflow(db, "done", "COMPLETED", idle_s=old)
    await insert_workflow(db, "with-a-person", "AWAITING_APPROVAL", idle_s=old)
    await insert_workflow(db, "retry-pending", "RETRY_WAIT", idle_s=old)
    await _timer(db, "retry-pending", fires_in_s=30)
    await insert_workflow(db, "retry-lost", "RETRY_WAIT", idle_s=old)  # stuck: nothing will wake it
    # stuck: its timer is not firing
    await insert_workflow(db, "sla-overdue", "AWAITING_APPROVAL", idle_s=old)
    await _timer(db, "sla-overdue", fires_in_s=-old)
    await insert_workflow(db, "req-idle", "enriched", idle_s=old, workflow_type="request")  # stuck
    await insert_workflow(
        db, "req-waiting", "approval_required", idle_s=old, workflow_type="request"
    )

    sample = await Gauges(database_url, registry=REGISTRY, stuck_after=STUCK_AFTER).sample()

    assert sample.stuck == {
        ("support", "CLASSIFYING"): 1,
        ("support", "EXECUTING_ACTION"): 1,
        ("support", "RETRY_WAIT"): 1,
        ("support", "AWAITING_APPROVAL"): 1,
        ("request", "enriched"): 1,
    }


async def _outbox(db: asyncpg.Connection, n: int) -> list[int]:
    rows = await db.fetch(
        "INSERT INTO outbox (subject, body) SELECT 'wf.out.support.x', '\\x00'::bytea "
        "FROM generate_series(1, $1) RETURNING id",
        n,
    )
    return [int(r["id"]) for r in rows]


async def test_outbox_lag_counts_rows_after_the_relay_cursor(
    database_url: str, db: asyncpg.Connection
) -> None:
    gauges = Gauges(database_url, registry=REGISTRY, relay_name="r1")
    assert (await gauges.sample()).outbox_rows == 0

    ids = await _outbox(db, 3)
    await db.execute(ENSURE_CURSOR, "r1")
    lagging = await gauges.sample()
    assert lagging.outbox_rows == 3
    assert lagging.outbox_oldest_seconds >= 0

    await db.execute(
        "UPDATE relay_cursor SET txid = (SELECT txid FROM outbox WHERE id = $2), last_id = $2 "
        "WHERE name = $1",
        "r1",
        ids[1],
    )
    assert (await gauges.sample()).outbox_rows == 1


async def test_the_instruments_report_the_running_sampler(
    database_url: str, db: asyncpg.Connection
) -> None:
    recorded()
    await _outbox(db, 2)
    await insert_workflow(db, "idle", "VALIDATING_POLICY", idle_s=STUCK_AFTER * 10)
    stop = asyncio.Event()
    gauges = Gauges(
        database_url, registry=REGISTRY, relay_name="instrumented", interval=0.05, stuck_after=60
    )
    running = asyncio.create_task(gauges.run(stop))
    lag_key = (("relay", "instrumented"),)
    stuck_key = (("state", "VALIDATING_POLICY"), ("workflow_type", "support"))

    async def reported(name: str, key: tuple[tuple[str, Any], ...], value: float) -> bool:
        return recorded().gauge(name).get(key) == value

    try:
        await eventually(lambda: reported("interlock.outbox.lag", lag_key, 2), what="lag of 2")
        await eventually(lambda: reported("interlock.workflows.stuck", stuck_key, 1))

        await db.execute("UPDATE workflows SET state = 'COMPLETED' WHERE id = 'idle'")
        await eventually(
            lambda: reported("interlock.workflows.stuck", stuck_key, 0), what="stuck cleared"
        )
    finally:
        stop.set()
        await running
    assert lag_key not in recorded().gauge("interlock.outbox.lag")

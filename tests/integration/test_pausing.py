"""Pausing a workflow type, a tenant or one workflow, against real PostgreSQL and JetStream:
events keep being accepted and recorded, nothing is dispatched (the decisions' outbox rows are
held back by the commit itself), timers that fall due wait; resuming releases the held jobs in
the order they were decided and the timers fire. Every pause and resume is audited.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import timedelta

import asyncpg
import pytest
from nats.js import JetStreamContext

from interlock.contracts import subjects
from interlock.contracts.envelope import utcnow
from interlock.projector.outbox import OutboxPublisher
from interlock.projector.service import Projector
from interlock.projector.store import pauses
from interlock.projector.store.pauses import Scope, pause, paused, resume
from interlock.projector.store.postgres import PostgresWorkflowStore
from interlock.relay import OutboxRelay
from interlock.relay.sweeper import redispatch
from interlock.relay.timers import TimerService
from tests.support.direct import answer
from tests.support.payloads import PAYLOADS, envelope
from tests.support.polling import eventually
from tests.support.streams import messages_of
from tests.support.timer_rows import FakeClock, retry_waiting_workflow
from tests.support.workflows import REGISTRY

pytestmark = pytest.mark.timeout(60)


async def _jobs(js: JetStreamContext) -> list[str]:
    """The job ids WF_JOBS holds, in stream order."""
    return [
        json.loads(m.data or b"")["event_id"] for m in await messages_of(js, subjects.STREAM_JOBS)
    ]


@pytest.fixture
async def relay(database_url: str, js: JetStreamContext) -> AsyncIterator[OutboxRelay]:
    running = OutboxRelay(database_url, js)
    yield running
    await running.close()


async def _held(db: asyncpg.Connection) -> list[str]:
    rows = await db.fetch("SELECT body FROM held_outbox WHERE subject LIKE 'wf.job.%' ORDER BY id")
    return [json.loads(r["body"])["event_id"] for r in rows]


async def test_a_paused_type_records_events_dispatches_nothing_and_resumes_in_order(
    db: asyncpg.Connection,
    js: JetStreamContext,
    store: PostgresWorkflowStore,
    relay: OutboxRelay,
) -> None:
    projector = Projector(store, registry=REGISTRY)
    assert await pause(db, Scope("support"), "ops-1", "supplier outage")
    assert not await pause(db, Scope("support"), "ops-1")  # already paused: no-op
    for wf in ("wf-a", "wf-b", "wf-c"):
        started = await projector.handle(
            envelope("START", workflow_id=wf, payload=PAYLOADS["START"])
        )
        assert started.to_state == "CLASSIFYING"
    classified = await answer(projector, store, "wf-a", "CLASSIFICATION_SUCCEEDED")
    assert classified.accepted  # a result is still decided while paused
    await relay.publish_pending()

    assert await _jobs(js) == []  # nothing dispatched
    held = await _held(db)
    assert len(held) == 5  # three classify jobs, then wf-a's two evidence jobs
    audited = await db.fetchval("SELECT count(*) FROM audit WHERE accepted")
    assert audited == 4
    rows = await db.fetchval("SELECT count(*) FROM held_outbox")  # jobs and announcements
    [shown] = await paused(db)
    assert (shown["workflow_type"], shown["paused_by"], shown["held"]) == (
        "support",
        "ops-1",
        rows,
    )

    lifted, released = await resume(db, Scope("support"), "ops-2")
    assert (lifted, released) == (1, rows)
    await relay.publish_pending()
    assert await _jobs(js) == held  # released in the order they were decided
    assert await paused(db) == []
    assert await db.fetchval("SELECT count(*) FROM held_outbox") == 0

    # After the resume, decisions go out at once again.
    await answer(projector, store, "wf-b", "CLASSIFICATION_SUCCEEDED")
    await relay.publish_pending()
    assert len(await _jobs(js)) == 7
    log = await db.fetch("SELECT operator, action, selection::text AS s FROM operator_log")
    assert [(r["operator"], r["action"], json.loads(r["s"])) for r in log] == [
        ("ops-1", "pause", {"type": "support"}),
        ("ops-2", "resume", {"type": "support"}),
    ]


async def test_pausing_one_tenant_or_one_workflow_leaves_the_others_running(
    db: asyncpg.Connection,
    js: JetStreamContext,
    store: PostgresWorkflowStore,
    relay: OutboxRelay,
) -> None:
    projector = Projector(store, registry=REGISTRY)
    await pause(db, Scope("support", "acme"), "ops-1")
    await pause(db, Scope("support", "globex", "wf-held"), "ops-1")
    for tenant, wf in (("acme", "wf-1"), ("globex", "wf-2"), ("globex", "wf-held")):
        event = envelope("START", workflow_id=wf, tenant_id=tenant, payload=PAYLOADS["START"])
        assert (await projector.handle(event)).accepted
    await relay.publish_pending()
    assert len(await _jobs(js)) == 1  # only globex's wf-2
    assert len(await _held(db)) == 2
    # Resuming the type resumes every pause inside it.
    lifted, _ = await resume(db, Scope("support"), "ops-1")
    assert lifted == 2
    await relay.publish_pending()
    assert len(await _jobs(js)) == 3


async def test_a_timer_due_while_paused_fires_on_resume(
    database_url: str,
    db: asyncpg.Connection,
    js: JetStreamContext,
    store: PostgresWorkflowStore,
) -> None:
    projector = Projector(store, registry=REGISTRY)
    timer = await retry_waiting_workflow(projector, store, "wf-retry")
    await pause(db, Scope("support", workflow_id="wf-retry"), "ops-1")
    clock = FakeClock(utcnow() + timedelta(hours=1))
    service = TimerService(database_url, js, clock=clock)
    assert await service.next_due() is None  # a paused workflow's timer is not waited on
    assert await service.fire_due() == 0
    status = await db.fetchval("SELECT status FROM timers WHERE id = $1", timer["id"])
    assert status == "armed"
    await resume(db, Scope("support", workflow_id="wf-retry"), "ops-1")
    assert await service.fire_due() == 1


async def test_the_sweeper_leaves_a_paused_workflows_open_jobs_alone(
    database_url: str,
    db: asyncpg.Connection,
    store: PostgresWorkflowStore,
    relay: OutboxRelay,
) -> None:
    projector = Projector(store, registry=REGISTRY)
    event = envelope("START", workflow_id="wf-idle", payload=PAYLOADS["START"])
    assert (await projector.handle(event)).accepted
    await relay.publish_pending()  # the classify job is out; nobody answers it
    await db.execute(
        "UPDATE workflows SET updated_at = now() - interval '1 hour';"
        "UPDATE outbox SET created_at = now() - interval '1 hour'"
    )
    await pause(db, Scope("support"), "ops-1")
    assert await redispatch(database_url, after=60) == []
    await resume(db, Scope("support"), "ops-1")
    assert await redispatch(database_url, after=60) == ["wf-idle"]


async def test_a_decision_waiting_on_a_resume_goes_out_after_what_the_resume_released(
    db: asyncpg.Connection,
    js: JetStreamContext,
    store: PostgresWorkflowStore,
    relay: OutboxRelay,
) -> None:
    """A commit that reads the pause while a resume is deleting it waits for the resume, then
    writes to the outbox; its snapshot predates the released rows, and it must still leave its
    own rows behind them (to the relay, in commit order), not publish them itself first."""
    store.publish_after_commit(await OutboxPublisher.open(js, store.pool, 30.0))
    projector = Projector(store, registry=REGISTRY)
    scope = Scope("support", workflow_id="wf-race")
    await pause(db, scope, "ops-1")
    start = envelope("START", workflow_id="wf-race", payload=PAYLOADS["START"])
    assert (await projector.handle(start)).accepted
    [classify] = await _held(db)

    async with db.transaction():  # the resume, up to its commit
        await db.fetch(pauses.UNPAUSE, scope.workflow_type, "", scope.workflow_id)
        await db.execute(pauses.RELEASE, scope.workflow_type)
        decided = asyncio.create_task(
            answer(projector, store, "wf-race", "CLASSIFICATION_SUCCEEDED")
        )

        async def waiting_on_the_pause() -> bool:
            return bool(
                await db.fetchval(
                    "SELECT count(*) FROM pg_stat_activity "
                    "WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
                )
            )

        await eventually(waiting_on_the_pause, within=10, what="the commit waits on it")
    assert (await decided).accepted
    await relay.publish_pending()

    jobs = await _jobs(js)
    assert jobs[0] == classify, jobs  # the released job first, then what followed it
    assert len(jobs) == 3

"""Retention: a workflow finished long enough ago leaves the hot tables for the archive with
its audit trail (and `show` still finds it), old processed events, refusals and spent timers
are forgotten, and nothing that is still moving is touched — pruned as the relay's role,
which may prune only through the retention function."""

from __future__ import annotations

from datetime import timedelta

import asyncpg
import pytest

from interlock.config.access import DATABASE_ROLES, with_credentials
from interlock.config.components import database_access
from interlock.config.secrets import Secrets
from interlock.contracts.envelope import utcnow
from interlock.ops import queries
from interlock.projector.store.roles import RELAY_ROLE, provision_roles
from interlock.relay.retention import Pruned, Retention
from tests.support.timer_rows import T0, arm
from tests.support.workflow_rows import insert_workflow
from tests.support.workflows import REGISTRY

DAY = 24 * 3600.0


@pytest.fixture
async def relay_url(database_url: str, session_secrets: Secrets) -> str:
    passwords = session_secrets.postgres_passwords(list(DATABASE_ROLES))
    await provision_roles(database_url, passwords, database_access())
    return with_credentials(database_url, RELAY_ROLE, passwords[RELAY_ROLE])


async def _audit(db: asyncpg.Connection, workflow_id: str, event_id: str, age_days: float) -> None:
    await db.execute(
        """
        INSERT INTO audit (tenant_id, workflow_id, workflow_type, event_id, event_type,
                           from_state, to_state, accepted, actor_id, actor_role, state_version,
                           occurred_at)
        VALUES ('acme', $1, 'support', $2, 'START', NULL, 'CLASSIFYING', true, 'crm', 'upstream',
                1, now() - make_interval(days => $3))
        """,
        workflow_id,
        event_id,
        age_days,
    )
    await db.execute(
        "INSERT INTO processed_events (tenant_id, workflow_id, event_id, processed_at) "
        "VALUES ('acme', $1, $2, now() - make_interval(days => $3))",
        workflow_id,
        event_id,
        age_days,
    )


async def test_finished_workflows_are_archived_and_old_bookkeeping_forgotten(
    db: asyncpg.Connection, relay_url: str, database_url: str
) -> None:
    await insert_workflow(db, "done-long-ago", "COMPLETED", idle_s=40 * DAY)
    await _audit(db, "done-long-ago", "start-done", 40)
    await insert_workflow(db, "done-today", "COMPLETED", idle_s=60)
    await _audit(db, "done-today", "start-today", 0)
    await insert_workflow(db, "still-waiting", "AWAITING_APPROVAL", idle_s=40 * DAY)
    await _audit(db, "still-waiting", "start-waiting", 40)
    await arm(db, "t-armed", T0)
    await arm(db, "t-fired", T0)
    await db.execute(
        "UPDATE timers SET status = 'published', updated_at = now() - interval '40 days' "
        "WHERE id = 't-fired'"
    )

    pruned = await Retention(
        relay_url, registry=REGISTRY, archive_after=30 * DAY, forget_after=30 * DAY
    ).prune()

    assert pruned == Pruned(archived=1, events=2, timers=1)
    live = {r["id"] for r in await db.fetch("SELECT id FROM workflows")}
    assert live == {"done-today", "still-waiting"}
    assert await db.fetchval("SELECT count(*) FROM audit WHERE workflow_id = 'done-long-ago'") == 0
    assert await db.fetchval("SELECT count(*) FROM audit WHERE workflow_id = 'still-waiting'") == 1
    processed = {r["event_id"] for r in await db.fetch("SELECT event_id FROM processed_events")}
    assert processed == {"start-today"}
    timers = {r["id"] for r in await db.fetch("SELECT id FROM timers")}
    assert timers == {"t-armed"}
    engine = queries.open_reader(database_url)
    try:
        archived = await queries.workflow_view(engine, "done-long-ago")
    finally:
        await engine.dispose()
    assert archived is not None
    assert (archived["state"], archived["archived"]) == ("COMPLETED", True)
    assert [entry["event_id"] for entry in archived["audit"]] == ["start-done"]


async def test_a_second_pass_finds_nothing_left_to_prune(
    db: asyncpg.Connection, relay_url: str
) -> None:
    await insert_workflow(db, "done-long-ago", "CANCELLED", idle_s=40 * DAY)
    retention = Retention(
        relay_url, registry=REGISTRY, archive_after=30 * DAY, forget_after=30 * DAY
    )

    first, again = await retention.prune(), await retention.prune(utcnow() + timedelta(hours=1))

    assert (first.archived, again) == (1, Pruned())


async def _decided(db: asyncpg.Connection, workflow_id: str, age_days: float) -> None:
    await db.execute(
        """
        INSERT INTO history (tenant_id, workflow_id, workflow_type, definition_version, event_id,
                             event_type, event, accepted, from_version, inputs, outcome,
                             recorded_at)
        VALUES ('acme', $1, 'support', 1, gen_random_uuid()::text, 'START', '{}', true, 0, '{}',
                '{}', now() - make_interval(days => $2))
        """,
        workflow_id,
        age_days,
    )


async def test_histories_idle_past_the_history_retention_are_forgotten_whole(
    db: asyncpg.Connection, relay_url: str
) -> None:
    await _decided(db, "idle", 50)
    await _decided(db, "idle", 40)
    await _decided(db, "moving", 50)  # an old start, but it moved yesterday: kept entire
    await _decided(db, "moving", 1)
    retention = Retention(
        relay_url,
        registry=REGISTRY,
        archive_after=30 * DAY,
        forget_after=30 * DAY,
        history_after=30 * DAY,
    )

    pruned = await retention.prune()

    assert pruned.histories == 1
    kept = await db.fetch("SELECT workflow_id FROM history ORDER BY seq")
    assert [r["workflow_id"] for r in kept] == ["moving", "moving"]

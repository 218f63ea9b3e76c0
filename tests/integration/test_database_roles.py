"""Least privilege at the database: the projector, the relay, the timer service and the console
connect as roles that may do their own job and nothing else (the console only reads), and the
embedded PostgreSQL asks every connection for a password."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest
from nats.js import JetStreamContext

from interlock.config.access import DATABASE_ROLES, with_credentials
from interlock.config.components import database_access
from interlock.config.secrets import Secrets
from interlock.projector.store.roles import (
    CONSOLE_ROLE,
    GATEWAY_ROLE,
    PROJECTOR_ROLE,
    RELAY_ROLE,
    TIMER_ROLE,
    provision_roles,
)
from interlock.relay.gauges import Gauges
from interlock.relay.relay import OutboxRelay
from interlock.relay.timers import TimerService
from interlock.relay.waits import HumanWaits
from tests.support.drive import answer, start
from tests.support.harness import projector_running
from tests.support.payloads import PAYLOADS, envelope
from tests.support.polling import eventually
from tests.support.timer_rows import T0, FakeClock, arm
from tests.support.workflows import REGISTRY

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
async def role_urls(database_url: str, session_secrets: Secrets) -> dict[str, str]:
    """Each component role's URL on the test's database, once `migrate` has set them up."""
    passwords = session_secrets.postgres_passwords(list(DATABASE_ROLES))
    await provision_roles(database_url, passwords, database_access())
    return {role: with_credentials(database_url, role, pw) for role, pw in passwords.items()}


@pytest.fixture
async def as_role(role_urls: dict[str, str]) -> AsyncIterator[dict[str, asyncpg.Connection]]:
    connections = {role: await asyncpg.connect(url) for role, url in role_urls.items()}
    yield connections
    for connection in connections.values():
        await connection.close()


@pytest.mark.parametrize(
    ("role", "statement"),
    [
        (RELAY_ROLE, "UPDATE workflows SET state = 'COMPLETED'"),
        # The relay may copy a row (the open-job sweeper) but never alter a committed one.
        (RELAY_ROLE, "UPDATE outbox SET body = ''"),
        (RELAY_ROLE, "DELETE FROM audit"),
        (RELAY_ROLE, "UPDATE timers SET status = 'published'"),
        (TIMER_ROLE, "SELECT count(*) FROM workflows"),
        (TIMER_ROLE, "INSERT INTO outbox (subject, body) VALUES ('wf.job.x.y', '')"),
        (TIMER_ROLE, "DELETE FROM timers"),
        (PROJECTOR_ROLE, "UPDATE audit SET accepted = true"),
        (PROJECTOR_ROLE, "DELETE FROM audit"),
        (PROJECTOR_ROLE, "DELETE FROM workflows"),
        (PROJECTOR_ROLE, "UPDATE relay_cursor SET last_id = 0"),
        (PROJECTOR_ROLE, "SELECT * FROM outbox"),
        (PROJECTOR_ROLE, "CREATE TABLE sneaky (n int)"),
        (RELAY_ROLE, "CREATE ROLE intruder"),
        (CONSOLE_ROLE, "UPDATE workflows SET state = 'COMPLETED'"),
        (CONSOLE_ROLE, "INSERT INTO audit (workflow_id) VALUES ('x')"),
        (CONSOLE_ROLE, "DELETE FROM workflow_archive"),
        (CONSOLE_ROLE, "SELECT * FROM processed_events"),
        # The gateway reads a workflow's state and an event's outcome through one function.
        (GATEWAY_ROLE, "SELECT data FROM workflows"),
        (GATEWAY_ROLE, "SELECT * FROM audit"),
        (GATEWAY_ROLE, "SELECT * FROM history"),
        (GATEWAY_ROLE, "SELECT * FROM processed_events"),
        (GATEWAY_ROLE, "SELECT interlock_prune_history(now(), 1)"),
    ],
)
async def test_a_component_role_may_not_do_another_components_work(
    as_role: dict[str, asyncpg.Connection], role: str, statement: str
) -> None:
    with pytest.raises(asyncpg.InsufficientPrivilegeError):
        await as_role[role].execute(statement)


async def test_the_projector_decides_refuses_and_counts_as_its_own_role(
    nats_url: str, database_url: str, role_urls: dict[str, str]
) -> None:
    async with projector_running(nats_url, database_url, store_url=role_urls[PROJECTOR_ROLE]) as h:
        start = envelope("START", workflow_id="wf-roles", event_id="start-roles")
        await h.publish(start)
        decision = await h.decided("wf-roles", "start-roles")
        await h.publish(envelope("APPROVED", workflow_id="wf-roles", event_id="too-early"))
        refused = await h.decided("wf-roles", "too-early")
        for n in range(2):
            await h.publish(start.model_copy(update={"event_id": f"again-{n}"}))
        replayed = await h.decided("wf-roles", "again-0")

        async def both_counted() -> Any:
            replays = await h.scalar("SELECT replays FROM workflows WHERE id = 'wf-roles'")
            return replays if replays == {"idempotent_replay": 2} else None

        counted = await eventually(both_counted, what="two counted replays")

    assert decision["accepted"]
    assert (refused["accepted"], refused["reason"]) == (False, "invalid_transition")
    assert replayed["reason"] == "idempotent_replay"
    assert counted == {"idempotent_replay": 2}


async def test_the_relay_publishes_and_prunes_as_its_own_role(
    nats_url: str, js: JetStreamContext, role_urls: dict[str, str], database_url: str
) -> None:
    async with projector_running(nats_url, database_url, store_url=role_urls[PROJECTOR_ROLE]) as h:
        await h.publish(envelope("START", workflow_id="wf-relay", event_id="start-relay"))
        await h.decided("wf-relay", "start-relay")
        # Cancelled, so its job's row is no longer kept for the sweeper: it may be pruned.
        cancel = envelope(
            "CANCEL_REQUESTED",
            workflow_id="wf-relay",
            event_id="cancel-relay",
            payload=PAYLOADS["CANCEL_REQUESTED"],
        )
        await h.publish(cancel)
        await h.decided("wf-relay", "cancel-relay")
    relay = OutboxRelay(role_urls[RELAY_ROLE], js, retention_seconds=0)
    try:
        assert await relay.publish_pending() > 0
        assert await relay.prune() > 0
        assert await relay.lag() == 0
    finally:
        await relay.close()


async def test_the_timer_service_fires_as_its_own_role(
    js: JetStreamContext, db: asyncpg.Connection, role_urls: dict[str, str]
) -> None:
    await arm(db, "t-role", T0)
    service = TimerService(role_urls[TIMER_ROLE], js, clock=FakeClock(T0))

    assert await service.fire_due() == 1
    assert await db.fetchval("SELECT status FROM timers WHERE id = 't-role'") == "published"


async def test_the_console_reads_what_its_pages_and_show_read(
    as_role: dict[str, asyncpg.Connection],
) -> None:
    for table in ("workflows", "workflow_archive", "audit", "timers", "outbox", "relay_cursor"):
        assert await as_role[CONSOLE_ROLE].fetchval(f"SELECT count(*) FROM {table}") == 0, table


async def test_postgres_refuses_a_connection_without_the_password(database_url: str) -> None:
    with pytest.raises(asyncpg.InvalidPasswordError):
        await asyncpg.connect(with_credentials(database_url, "postgres", None))
    with pytest.raises(asyncpg.InvalidPasswordError):
        await asyncpg.connect(with_credentials(database_url, PROJECTOR_ROLE, "guessed"))


async def test_the_relay_reminds_and_samples_waits_and_stuck_workflows_as_its_own_role(
    nats_url: str, database_url: str, role_urls: dict[str, str]
) -> None:
    async with projector_running(nats_url, database_url, store_url=role_urls[PROJECTOR_ROLE]) as h:
        workflow_id = await start(h)
        await answer(h, workflow_id, "ESCALATE")
        await h.at_state(workflow_id, "MANUAL_REVIEW")
    review = {"support": {"review_deadline_seconds": 0}}
    waits = HumanWaits(role_urls[RELAY_ROLE], registry=REGISTRY, parameters=review)

    assert await waits.pass_once() == [("support", "MANUAL_REVIEW")]
    gauges = Gauges(role_urls[RELAY_ROLE], registry=REGISTRY, stuck_after=3600)
    assert (await gauges.sample()).stuck == {}


async def test_the_projector_may_ask_whether_rows_of_its_workflow_are_held(
    as_role: dict[str, asyncpg.Connection],
) -> None:
    """The commit statement asks this for every decision (a paused workflow's rows go out
    before its next); without the grant every decision failed with InsufficientPrivilege."""
    held = await as_role[PROJECTOR_ROLE].fetchval(
        "SELECT EXISTS (SELECT 1 FROM held_outbox WHERE workflow_type = 'support'"
        " AND tenant_id = 'acme' AND workflow_id = 'x')"
    )
    assert held is False


async def test_the_projector_tells_a_reused_event_id_from_a_duplicate_as_its_own_role(
    nats_url: str, database_url: str, role_urls: dict[str, str]
) -> None:
    """A duplicate event id is compared with the event accepted under it (`history`)."""
    async with projector_running(nats_url, database_url, store_url=role_urls[PROJECTOR_ROLE]) as h:
        await h.publish(envelope("START", workflow_id="wf-reused", event_id="start-reused"))
        await h.decided("wf-reused", "start-reused")
        cancel = envelope(
            "CANCEL_REQUESTED", workflow_id="wf-reused", role="operator", event_id="start-reused"
        )
        await h.publish(cancel, msg_id="another-message-reused")

        async def refused() -> Any:
            return await h.scalar(
                "SELECT reason FROM audit WHERE workflow_id = 'wf-reused' AND NOT accepted"
            )

        reason = await eventually(refused, what="the reused id refused")

    assert reason == "event_id_reused"

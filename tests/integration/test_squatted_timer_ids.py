"""A timer firing nobody else can spend: a client that read a workflow's approval task knows
the timer's id inputs (tenant, workflow id, state version, kind) and so the firing's event id.
The inbound stream deduplicates by `Nats-Msg-Id` across every subject, so junk published first
under that id had the approval timeout's firing dropped (the escalation never came). The
firing now travels under its event id sealed with the row's random seal: stored, once."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import asyncpg
import nats
import pytest
from nats.js import JetStreamContext

from interlock.contracts import subjects
from interlock.contracts.envelope import parse_envelope
from interlock.contracts.ids import timer_event_id
from interlock.contracts.partitions import routing_key
from interlock.contracts.urls import nats_inbox
from interlock.relay.timers import TimerService
from tests.support.routing import mapped
from tests.support.timer_rows import T0, FakeClock, arm, stream_messages

pytestmark = pytest.mark.timeout(30)


async def test_a_firing_id_spent_by_a_client_does_not_drop_the_firing(
    database_url: str,
    js: JetStreamContext,
    db: asyncpg.Connection,
    identity_url: Callable[[str], str],
) -> None:
    await arm(db, "t-squat", T0)
    url = identity_url("upstream")
    attacker = await nats.connect(url, inbox_prefix=nats_inbox(url))
    try:
        squat = await attacker.jetstream().publish(
            subjects.request("support", "upstream"),
            b"junk",
            headers={subjects.HEADER_MSG_ID: timer_event_id("t-squat")},
        )
    finally:
        await attacker.close()
    assert not squat.duplicate

    service = TimerService(database_url, js, clock=FakeClock(T0 + timedelta(seconds=1)))
    assert await service.fire_due() == 1

    firing = mapped(subjects.timer("support", routing_key("acme", "wf-t-squat")))
    fired = [m for m in await stream_messages(js) if m.subject == firing]
    assert [parse_envelope(m.data or b"").event_id for m in fired] == [timer_event_id("t-squat")]
    seal = await db.fetchval("SELECT seal FROM timers WHERE id = 't-squat'")
    assert len(seal) == 32
    assert (fired[0].headers or {})[subjects.HEADER_MSG_ID] == f"{timer_event_id('t-squat')}.{seal}"


async def test_every_timer_has_its_own_seal(db: asyncpg.Connection) -> None:
    for n in range(3):
        await arm(db, f"t-seal-{n}", T0)
    seals = await db.fetch("SELECT seal FROM timers WHERE id LIKE 't-seal-%'")
    assert len({r["seal"] for r in seals}) == 3

"""Waits on a person, against the real projector and PostgreSQL: a review older than its
deadline is announced again (durably counted, bounded, never decided on) and measured."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import pytest
from sqlalchemy import text

from interlock.contracts.envelope import parse_envelope
from interlock.projector.store.pauses import Scope, pause, resume
from interlock.relay.waits import HumanWaits, Waiting
from tests.support.drive import answer, signal, start
from tests.support.harness import Harness
from tests.support.polling import eventually
from tests.support.telemetry import recorded
from tests.support.workflows import REGISTRY

pytestmark = pytest.mark.timeout(60)

REVIEW = ("support", "MANUAL_REVIEW")
HOUR = 3600.0


def _waits(
    database_url: str, *, deadline: float, every: float = HOUR, interval: float = 15.0
) -> HumanWaits:
    """A fresh reminder pass (as after a restart) with the review wait's parameters."""
    review = {"review_deadline_seconds": deadline, "review_reminder_seconds": every}
    return HumanWaits(
        database_url, registry=REGISTRY, parameters={"support": review}, interval=interval
    )


async def _in_review(h: Harness) -> str:
    workflow_id = await start(h)
    await answer(h, workflow_id, "ESCALATE")
    await h.at_state(workflow_id, "MANUAL_REVIEW")
    return workflow_id


async def _reminders(h: Harness) -> list[dict[str, Any]]:
    async with h.engine.connect() as conn:
        rows = await conn.execute(
            text("SELECT body FROM outbox WHERE subject = 'wf.out.support.manual_review'")
        )
        bodies = [parse_envelope(bytes(r.body)) for r in rows]
    return [b.payload for b in bodies if "reminder" in b.payload]


async def _audit_rows(h: Harness, workflow_id: str) -> int:
    return int(await h.scalar("SELECT count(*) FROM audit WHERE workflow_id = :w", w=workflow_id))


async def test_an_overdue_review_is_announced_again_and_counted(
    h: Harness, database_url: str
) -> None:
    key = (("state", "MANUAL_REVIEW"), ("workflow_type", "support"))
    before = recorded().counter("interlock.human_waits.reminders").get(key, 0)  # session-wide
    workflow_id = await _in_review(h)
    audited = await _audit_rows(h, workflow_id)

    patient = _waits(database_url, deadline=HOUR)
    assert await patient.pass_once() == []
    assert patient.last[REVIEW].count == 1
    assert patient.last[REVIEW].overdue == 0

    overdue = _waits(database_url, deadline=0.0)
    assert await overdue.pass_once() == [REVIEW]
    (first,) = await _reminders(h)
    assert first["workflow_id"] == workflow_id
    assert first["reminder"] == 1
    assert first["owner_role"] == "support_supervisor"
    assert first["review"]["reason"] == "reconciliation_impossible"
    assert overdue.last[REVIEW].overdue == 1
    assert overdue.last[REVIEW].oldest_s > 0
    counted = await h.scalar(
        "SELECT reminders FROM human_wait_reminders WHERE workflow_id = :w", w=workflow_id
    )
    assert counted == 1
    reminders = recorded().counter("interlock.human_waits.reminders")
    assert reminders[key] == before + 1

    # reminders never decide: no audit row, no new version
    assert await _audit_rows(h, workflow_id) == audited
    assert (await h.view(workflow_id))["state"] == "MANUAL_REVIEW"


async def test_a_restart_sends_only_what_is_due_and_reminders_are_bounded(
    h: Harness, database_url: str
) -> None:
    await _in_review(h)
    assert await _waits(database_url, deadline=0.0).pass_once() == [REVIEW]
    # restarted: the first reminder is counted, the next is a reminder period away
    assert await _waits(database_url, deadline=0.0).pass_once() == []

    eager = _waits(database_url, deadline=0.0, every=0.0)
    assert await eager.pass_once() == [REVIEW]
    assert await eager.pass_once() == [REVIEW]
    assert await eager.pass_once() == []  # at most three (the default `max_reminders`)
    assert [r["reminder"] for r in await _reminders(h)] == [1, 2, 3]


async def test_a_wait_left_is_forgotten_and_a_new_wait_counts_afresh(
    h: Harness, database_url: str
) -> None:
    workflow_id = await _in_review(h)
    assert await _waits(database_url, deadline=0.0).pass_once() == [REVIEW]
    assert (await signal(h, workflow_id, "CANCEL_REQUESTED"))["accepted"]

    waits = _waits(database_url, deadline=0.0)
    assert await waits.pass_once() == []
    assert waits.last[REVIEW] == Waiting()
    left = await h.scalar(
        "SELECT count(*) FROM human_wait_reminders WHERE workflow_id = :w", w=workflow_id
    )
    assert left == 0


async def test_the_running_pass_reports_the_age_gauges_and_reminds(
    h: Harness, database_url: str
) -> None:
    recorded()
    await _in_review(h)
    stop = asyncio.Event()
    running = asyncio.create_task(_waits(database_url, deadline=0.0, interval=0.05).run(stop))
    key = (("state", "MANUAL_REVIEW"), ("workflow_type", "support"))

    async def reported() -> bool:
        gauges = recorded()
        return (
            gauges.gauge("interlock.human_waits.count").get(key) == 1
            and gauges.gauge("interlock.human_waits.overdue").get(key) == 1
            and gauges.gauge("interlock.human_waits.oldest_age").get(key, 0) > 0
        )

    try:
        await eventually(reported, what="the review's wait reported")
        assert [r["reminder"] for r in await _reminders(h)] == [1]
    finally:
        stop.set()
        await running
    assert key not in recorded().gauge("interlock.human_waits.count")


async def test_a_paused_wait_is_not_reminded_before_its_held_announcement(
    h: Harness, database_url: str, db: asyncpg.Connection
) -> None:
    """A paused workflow's announcements are held back (`held_outbox`); its overdue wait is
    reminded only once it is resumed, after the announcement the reminder repeats."""
    workflow_id = await start(h)
    await pause(db, Scope("support", workflow_id=workflow_id), "ops-1", "supplier outage")
    await answer(h, workflow_id, "ESCALATE")
    await h.at_state(workflow_id, "MANUAL_REVIEW")

    overdue = _waits(database_url, deadline=0.0)
    assert await overdue.pass_once() == []
    assert await _reminders(h) == []

    await resume(db, Scope("support", workflow_id=workflow_id), "ops-1")
    assert await overdue.pass_once() == [REVIEW]
    rows = await db.fetch(
        "SELECT body FROM outbox WHERE subject = 'wf.out.support.manual_review' ORDER BY id"
    )
    sent = [parse_envelope(bytes(r["body"])).payload.get("reminder") for r in rows]
    assert sent == [None, 1]  # the announcement first, then its reminder

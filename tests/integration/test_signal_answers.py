"""A signal command answers precisely: a signal the projector dead-letters is reported as
dead-lettered with its reason, and one sent while no projector runs is reported queued
(stored, to be decided when the stack runs) without waiting out the decision timeout."""

from __future__ import annotations

import time
from collections.abc import Callable

import asyncpg
import nats
import pytest

from interlock.commands import DECISION_TIMEOUT, send_and_wait
from interlock.contracts.envelope import Actor
from interlock.messaging.streams import provision
from tests.support.harness import projector_running
from tests.support.workflow_rows import insert_workflow
from tests.support.workflows import STAGES

pytestmark = pytest.mark.timeout(90)
APPROVER = Actor(id="ann", role="support_approver")


async def _workflow(database_url: str, workflow_id: str, state: str) -> None:
    db = await asyncpg.connect(database_url)
    try:
        await insert_workflow(db, workflow_id, state)
    finally:
        await db.close()


async def test_a_dead_lettered_signal_is_reported_with_its_reason(
    nats_url: str, database_url: str, identity_url: Callable[[str], str]
) -> None:
    await _workflow(database_url, "wf-dead", "AWAITING_APPROVAL")
    async with projector_running(nats_url, database_url):
        outcome = await send_and_wait(
            identity_url("operator"),
            database_url,
            "wf-dead",
            "APPROVED",
            payload=lambda view: {"recommendation_version": 1, "amount": "abc"},
            actor=APPROVER,
            admin_url=nats_url,
        )
    assert (outcome["accepted"], outcome["reason"]) == (False, "dead_lettered")
    assert "schema_mismatch" in outcome["detail"]


async def test_a_signal_with_no_projector_running_is_reported_queued(
    nats_url: str, database_url: str, identity_url: Callable[[str], str]
) -> None:
    nc = await nats.connect(nats_url)
    try:
        await provision(nc.jetstream(), STAGES)
    finally:
        await nc.close()
    await _workflow(database_url, "wf-queued", "MANUAL_REVIEW")
    began = time.monotonic()
    outcome = await send_and_wait(
        identity_url("operator"),
        database_url,
        "wf-queued",
        "RETRY_REQUESTED",
        payload=lambda view: {},
        actor=Actor(id="ops", role="operator"),
        admin_url=nats_url,
    )
    assert (outcome["accepted"], outcome["reason"]) == (False, "queued")
    assert "interlock up" in outcome["detail"]
    assert time.monotonic() - began < DECISION_TIMEOUT / 2

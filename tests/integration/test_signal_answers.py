"""A signal command answers precisely: a signal the projector dead-letters is reported as
dead-lettered with its reason, and one sent while no projector runs is reported queued
(stored, to be decided when the stack runs) without waiting out the decision timeout."""

from __future__ import annotations

import time
from collections.abc import Callable

import asyncpg
import nats
import pytest

from interlock.contracts.envelope import Actor
from interlock.messaging.streams import provision
from interlock.ops.commands import DECISION_TIMEOUT, send_and_wait
from interlock.ops.errors import InvalidSignal
from tests.support.harness import projector_running
from tests.support.workflow_rows import insert_workflow
from tests.support.workflows import STAGES

pytestmark = pytest.mark.timeout(90)
APPROVER = Actor(id="ann", role="support_approver")


async def _provisioned(nats_url: str) -> None:
    """The streams, with no projector running."""
    nc = await nats.connect(nats_url)
    try:
        await provision(nc.jetstream(), STAGES)
    finally:
        await nc.close()


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
    await _provisioned(nats_url)
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


async def test_a_dead_letter_is_reported_to_an_identity_that_may_only_read_dead_letters(
    nats_url: str, database_url: str, identity_url: Callable[[str], str]
) -> None:
    """The console watches as itself (it may read the dead letters, not list the projector's
    consumers): its operator is told the signal was dead-lettered and why, not asked whether
    `interlock up` is running."""
    await _workflow(database_url, "wf-dead-console", "AWAITING_APPROVAL")
    began = time.monotonic()
    async with projector_running(nats_url, database_url):
        outcome = await send_and_wait(
            identity_url("operator"),
            database_url,
            "wf-dead-console",
            "APPROVED",
            payload=lambda view: {"recommendation_version": 1, "total": "1.00"},
            actor=APPROVER,
            letters_url=identity_url("console"),
        )
    assert (outcome["accepted"], outcome["reason"]) == (False, "dead_lettered")
    assert "schema_mismatch" in outcome["detail"]
    assert "total" in outcome["detail"]
    assert time.monotonic() - began < DECISION_TIMEOUT


async def test_a_payload_the_model_refuses_is_not_sent(
    nats_url: str, database_url: str, identity_url: Callable[[str], str]
) -> None:
    await _workflow(database_url, "wf-invalid", "AWAITING_APPROVAL")

    def refused(view: dict[str, object]) -> dict[str, object]:
        raise InvalidSignal("APPROVED payload: total: Extra inputs are not permitted")

    outcome = await send_and_wait(
        identity_url("operator"),
        database_url,
        "wf-invalid",
        "APPROVED",
        payload=refused,
        actor=APPROVER,
        admin_url=nats_url,
    )
    assert outcome == {
        "accepted": False,
        "reason": "invalid_signal",
        "detail": "APPROVED payload: total: Extra inputs are not permitted",
    }


async def test_a_signal_the_broker_refuses_is_reported_not_sent(
    nats_url: str, database_url: str, identity_url: Callable[[str], str]
) -> None:
    """`upstream` may send requests, not signals: the broker refuses the publish, and the
    command says so with the broker's words instead of failing with a timeout."""
    await _provisioned(nats_url)
    await _workflow(database_url, "wf-denied", "AWAITING_APPROVAL")
    outcome = await send_and_wait(
        identity_url("upstream"),
        database_url,
        "wf-denied",
        "APPROVED",
        payload=lambda view: {"recommendation_version": 1, "amount": "20.00"},
        actor=APPROVER,
    )
    assert (outcome["accepted"], outcome["reason"]) == (False, "not_sent")
    assert "refused by the broker: permissions violation" in outcome["detail"]

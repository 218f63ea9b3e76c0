"""The projector's door: poison messages, idempotent creation, undefined pairs, races."""

from __future__ import annotations

import contextlib
import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import pytest

from interlock.contracts import subjects
from interlock.contracts.envelope import MAX_MESSAGE_BYTES
from interlock.contracts.ids import workflow_id_for
from interlock.projector.errors import NotDueYet
from interlock.projector.service import Projector
from interlock.projector.store.postgres import open_store
from tests.support.drive import answer, race_cancels, start, start_then_cancel_each
from tests.support.harness import Harness, projector_running
from tests.support.payloads import PAYLOADS, REQUEST, envelope
from tests.support.polling import eventually
from tests.support.timer_rows import firing_payload, retry_waiting_workflow
from tests.support.workflow_rows import insert_workflow
from tests.support.workflows import REGISTRY


async def _dead_letters(h: Harness, count: int) -> list[Any]:
    sub = await h.nc.jetstream().pull_subscribe(
        f"{subjects.DLQ_PREFIX}.>", durable="t", stream=subjects.STREAM_DLQ
    )
    found: list[Any] = []

    async def probe() -> bool:
        with contextlib.suppress(TimeoutError):
            found.extend(await sub.fetch(count - len(found), timeout=0.5))
        return len(found) >= count

    await eventually(probe, what=f"{count} dead letters")
    return found


async def test_poison_messages_are_dead_lettered_and_the_next_good_message_is_processed(
    h: Harness,
) -> None:
    js = h.nc.jetstream()
    good = envelope("START", workflow_id=None, event_id="good-after-poison")
    bad_schema = json.loads(good.to_bytes())
    bad_schema["payload"] = {"customer_id": "c"}
    poison = {
        "bad_json": b"{not json",
        "schema_mismatch": json.dumps(bad_schema).encode(),
        "unknown_type": json.dumps(
            {**json.loads(good.to_bytes()), "type": "TELEPORT", "workflow_id": "wf-x"}
        ).encode(),
        "oversized": b" " * (MAX_MESSAGE_BYTES + 1),
        "unknown_workflow": envelope("CANCEL_REQUESTED", workflow_id="no-such").to_bytes(),
    }
    for name, body in poison.items():
        if name == "schema_mismatch":  # a request whose payload does not fit
            await js.publish(subjects.request("support", "upstream"), body)
        else:
            await js.publish(subjects.signal("support", "approvals"), body)
    await h.publish(good)

    letters = await _dead_letters(h, len(poison))

    reasons = sorted(m.headers[subjects.HEADER_DLQ_REASON] for m in letters)
    assert reasons == sorted(poison)
    assert {m.headers[subjects.HEADER_DLQ_SUBJECT] for m in letters} == {
        subjects.signal("support", "approvals"),
        subjects.request("support", "upstream"),
    }
    assert all(m.headers[subjects.HEADER_DLQ_DETAIL] for m in letters)
    await h.at_state(workflow_id_for("support", "acme", good.event_id), "CLASSIFYING")


async def test_same_request_twice_returns_the_existing_workflow(h: Harness) -> None:
    first = envelope("START", workflow_id="ticket-42", event_id="req-a")
    await h.publish(first)
    await h.at_state("ticket-42", "CLASSIFYING")

    await h.publish(envelope("START", workflow_id="ticket-42", event_id="req-b"))
    replay = await h.decided("ticket-42", "req-b")

    assert (replay["accepted"], replay["reason"]) == (False, "idempotent_replay")
    view = await h.view("ticket-42")
    assert view["version"] == 1
    assert await h.scalar("SELECT count(*) FROM workflows") == 1


async def test_a_changed_request_under_the_same_key_is_a_recorded_conflict(h: Harness) -> None:
    await h.publish(envelope("START", workflow_id="ticket-7", event_id="req-1"))
    await h.at_state("ticket-7", "CLASSIFYING")
    changed = {**REQUEST, "amount": "999.00"}

    await h.publish(envelope("START", workflow_id="ticket-7", event_id="req-2", payload=changed))
    conflict = await h.decided("ticket-7", "req-2")

    assert (conflict["accepted"], conflict["reason"]) == (False, "idempotency_conflict")
    view = await h.view("ticket-7")
    assert view["data"]["request"]["amount"] == REQUEST["amount"]
    assert await h.scalar("SELECT count(*) FROM workflows") == 1


@pytest.mark.parametrize("version", REGISTRY.versions("support"))
async def test_every_undefined_pair_is_rejected_without_mutation_and_audited(
    database_url: str, db: asyncpg.Connection, version: int
) -> None:
    definition = REGISTRY.get("support", version)
    store = await open_store(database_url)
    projector = Projector(store, registry=REGISTRY)
    defined = {(t.source, t.event) for t in definition.transitions}
    expected = 0
    try:
        for state in definition.states:
            workflow_id = f"wf-{state.lower()}"
            await insert_workflow(db, workflow_id, state, version=3, definition_version=version)
            for spec in definition.events:
                if (state, spec.name) in defined or spec.name == "START":
                    continue
                # A result answering a job of its own (not open here), a firing of a timer of
                # its own, each with its derived id.
                unique = str(uuid.uuid4())
                payload = {**PAYLOADS[spec.name]}
                if spec.source == "timer":
                    payload["timer_id"] = unique
                outcome = await projector.handle(
                    envelope(
                        spec.name, workflow_id=workflow_id, causation_id=unique, payload=payload
                    )
                )
                assert not outcome.accepted
                assert outcome.reason in ("invalid_transition", "terminal")
                expected += 1
        unchanged = await db.fetchval(
            "SELECT count(*) FROM workflows WHERE version = 3 AND data = '{}' AND execution = '{}'"
        )
        audited = await db.fetchval(
            "SELECT count(*) FROM audit WHERE NOT accepted AND to_state IS NULL"
        )
    finally:
        await store.close()
    assert unchanged == len(definition.states)
    assert audited == expected > 0


async def test_two_projectors_racing_commit_each_version_exactly_once(
    nats_url: str, database_url: str
) -> None:
    async with projector_running(nats_url, database_url, projectors=2, workers=8) as h:
        workflow_id = await start(h)

        entered, decisions = await race_cancels(h, workflow_id)

        versions = sorted(d["state_version"] for d in decisions)
        assert all(d["accepted"] for d in decisions)
        assert versions == list(range(entered["version"] + 1, entered["version"] + 41))
        final = await h.view(workflow_id)
        assert final["version"] == entered["version"] + 40
        assert final["execution"]["cancel_requested"] is True
        # the executing job is still open: deferred cancellation waits for reconciliation
        assert (await answer(h, workflow_id, "ACTION_EXECUTED"))["to_state"] == "COMPENSATING"


async def test_a_premature_timer_firing_is_decided_again_when_due(database_url: str) -> None:
    """Clock skew between the timer service and the projector never strands a workflow."""
    now = [datetime(2026, 6, 1, tzinfo=UTC)]
    store = await open_store(database_url)
    projector = Projector(store, registry=REGISTRY, clock=lambda: now[0], rand=lambda: 0.5)
    try:
        timer = await retry_waiting_workflow(projector, store, "wf-skew")
        firing = envelope("RETRY_DUE", workflow_id="wf-skew", payload=firing_payload(timer))

        with pytest.raises(NotDueYet):
            await projector.handle(firing)
        now[0] = timer["fire_at"] + timedelta(milliseconds=1)
        outcome = await projector.handle(firing)
    finally:
        await store.close()
    assert (outcome.accepted, outcome.to_state) == (True, "CLASSIFYING")


async def test_one_workflows_events_are_decided_in_stream_order(h: Harness) -> None:
    """Published back to back, a cancellation is never decided before the request it
    cancels (the projector fetches in order and serialises per workflow)."""
    await start_then_cancel_each(h, "ordered", 20)


async def test_two_tenants_may_reuse_an_event_id(h: Harness) -> None:
    for tenant in ("acme", "globex"):
        event = envelope("START", workflow_id=None, event_id="evt-001").model_copy(
            update={"tenant_id": tenant}
        )
        await h.publish(event)
        await h.at_state(workflow_id_for("support", tenant, "evt-001"), "CLASSIFYING")
    assert await h.scalar("SELECT count(*) FROM workflows") == 2


async def test_another_tenants_signal_addresses_no_workflow(h: Harness) -> None:
    await h.publish(envelope("START", workflow_id="ticket-t", event_id="req-t"))
    await h.at_state("ticket-t", "CLASSIFYING")
    intruder = envelope(
        "CANCEL_REQUESTED", workflow_id="ticket-t", role="operator", event_id="intruder"
    ).model_copy(update={"tenant_id": "globex"})

    await h.publish(intruder)
    (letter,) = await _dead_letters(h, 1)

    assert letter.headers[subjects.HEADER_DLQ_REASON] == "unknown_workflow"
    assert (await h.view("ticket-t"))["state"] == "CLASSIFYING"


async def test_a_stale_cached_checkpoint_never_turns_a_valid_event_away(
    database_url: str,
) -> None:
    """Projector A remembers a workflow; projector B moves it on; an event valid only in the
    new state still reaches A: A must decide it on fresh state, not refuse it."""
    store = await open_store(database_url)
    a, b = (
        Projector(store, registry=REGISTRY),
        Projector(store, registry=REGISTRY),
    )
    try:
        await a.handle(envelope("START", workflow_id="wf-stale", event_id="s"))
        stored = await store.load("acme", "wf-stale")
        assert stored is not None
        (job,) = stored.workflow.execution.open_jobs
        moved = await b.handle(
            envelope("CLASSIFICATION_SUCCEEDED", workflow_id="wf-stale", causation_id=job)
        )
        assert moved.to_state == "GATHERING_EVIDENCE"
        stored = await store.load("acme", "wf-stale")
        assert stored is not None
        policy_job = next(
            j for j, o in stored.workflow.execution.open_jobs.items() if o.branch == "policy"
        )

        outcome = await a.handle(
            envelope("POLICY_RETRIEVED", workflow_id="wf-stale", causation_id=policy_job)
        )
    finally:
        await store.close()
    assert (outcome.accepted, outcome.version) == (True, 3)


async def test_with_two_projectors_a_cancel_right_behind_its_request_is_never_lost(
    nats_url: str, database_url: str
) -> None:
    """The second projector may take the CANCEL before the first has committed the START: it
    waits for the workflow instead of dead-lettering the command."""
    async with projector_running(nats_url, database_url, projectors=2, workers=8) as h:
        await start_then_cancel_each(h, "pair", 60)

"""`Projector.handle` on the in-memory store: idempotent creation, lost races, duplicates, the
checkpoint cache and the door. The store fails as PostgreSQL does (the store contract), so
these paths are specified here in milliseconds; tests/integration races real projectors."""

from __future__ import annotations

import asyncio
import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from interlock.contracts import subjects
from interlock.contracts.envelope import Envelope
from interlock.contracts.errors import MalformedMessage, TransientError
from interlock.projector.service import Projector
from interlock.projector.store.memory import InMemoryWorkflowStore
from tests.support.direct import (
    Interleaved,
    accepted,
    answer,
    checkpoint,
    to_awaiting_approval,
    to_executing_action,
    to_gathering_evidence,
)
from tests.support.payloads import REQUEST, envelope
from tests.support.workflows import REGISTRY

NOW = datetime(2026, 5, 4, 9, 30, tzinfo=UTC)


@pytest.fixture
def store() -> InMemoryWorkflowStore:
    return InMemoryWorkflowStore(clock=lambda: NOW)


def projector(store: Any, **options: Any) -> Projector:
    """A projector at `NOW` that does not pause between lost races."""
    return Projector(
        store, registry=REGISTRY, **{"clock": lambda: NOW, "rand": lambda: 0.0, **options}
    )


def audited(store: InMemoryWorkflowStore, workflow_id: str = "wf-1") -> list[tuple[str, Any]]:
    return [(a.event_id, a.reason) for a in store.audit(workflow_id)]


# --- creation ----------------------------------------------------------------------------


async def test_a_request_creates_its_workflow_and_the_first_job(
    store: InMemoryWorkflowStore,
) -> None:
    outcome = await projector(store).handle(envelope("START", workflow_id="wf-1"))

    assert (outcome.accepted, outcome.to_state, outcome.version) == (True, "CLASSIFYING", 1)
    assert store.outbox("wf-1")[-1].subject == subjects.job("support", "classify")


async def test_the_same_request_again_is_a_replay_audited_once_then_counted(
    store: InMemoryWorkflowStore,
) -> None:
    p = projector(store)
    await accepted(p.handle(envelope("START", workflow_id="wf-1", event_id="req-1")))
    outbox = store.outbox()

    replays = [
        await p.handle(envelope("START", workflow_id="wf-1", event_id="req-2")) for _ in range(2)
    ]

    assert [(r.accepted, r.reason, r.version) for r in replays] == [
        (False, "idempotent_replay", 1)
    ] * 2
    assert audited(store) == [("req-1", None), ("req-2", "idempotent_replay")]
    assert store.replays("wf-1", "acme") == {"idempotent_replay": 2}
    assert store.outbox() == outbox


async def test_a_changed_request_under_the_same_key_is_a_conflict_and_creates_nothing(
    store: InMemoryWorkflowStore,
) -> None:
    p = projector(store)
    await accepted(p.handle(envelope("START", workflow_id="wf-1", event_id="req-1")))
    changed = {**REQUEST, "amount": "999.00"}

    outcome = await p.handle(
        envelope("START", workflow_id="wf-1", event_id="req-2", payload=changed)
    )

    assert (outcome.accepted, outcome.reason) == (False, "idempotency_conflict")
    assert (await checkpoint(store, "wf-1")).data["request"]["amount"] == REQUEST["amount"]
    assert audited(store) == [("req-1", None), ("req-2", "idempotency_conflict")]


@pytest.mark.parametrize(
    ("amount", "loser"), [("20.00", "idempotent_replay"), ("999.00", "idempotency_conflict")]
)
async def test_of_two_projectors_creating_one_workflow_at_once_exactly_one_creates(
    store: InMemoryWorkflowStore, amount: str, loser: str
) -> None:
    spy = Interleaved(store)
    requests = [
        envelope("START", workflow_id="wf-1", event_id="req-a"),
        envelope(
            "START", workflow_id="wf-1", event_id="req-b", payload={**REQUEST, "amount": amount}
        ),
    ]

    outcomes = await asyncio.gather(*(projector(spy).handle(r) for r in requests))

    assert sorted(spy.creations) == [False, True]  # both saw no workflow and tried
    assert [(o.accepted, o.reason) for o in outcomes] == [(True, None), (False, loser)]
    assert audited(store) == [("req-a", None), ("req-b", loser)]


# --- lost races and duplicates -------------------------------------------------------------


async def test_a_lost_race_is_decided_again_on_the_winners_state(
    store: InMemoryWorkflowStore,
) -> None:
    spy = Interleaved(store)
    a = projector(spy)
    await to_gathering_evidence(a, store, "wf-1")  # a's cached checkpoint: version 2
    await accepted(answer(projector(store), store, "wf-1", "POLICY_RETRIEVED"))

    outcome = await answer(a, store, "wf-1", "ACCOUNT_INSPECTED")

    assert spy.conflicts == 1
    assert (outcome.accepted, outcome.to_state, outcome.version) == (
        True,
        "GENERATING_RECOMMENDATION",
        4,
    )
    assert [a.state_version for a in store.audit("wf-1")] == [1, 2, 3, 4]


async def test_a_projector_losing_every_race_gives_up_with_a_transient_error(
    store: InMemoryWorkflowStore,
) -> None:
    await to_executing_action(projector(store), store, "wf-1")
    before = (await checkpoint(store, "wf-1")).version
    rival = projector(store)
    cancels = (envelope("CANCEL_REQUESTED", workflow_id="wf-1") for _ in itertools.count())
    spy = Interleaved(store, lambda: accepted(rival.handle(next(cancels))), times=3)
    mine = envelope("CANCEL_REQUESTED", workflow_id="wf-1")

    with pytest.raises(TransientError, match="lost 3 races"):
        await projector(spy, max_conflicts=3).handle(mine)

    assert spy.conflicts == 3
    assert (await checkpoint(store, "wf-1")).version == before + 3
    assert mine.event_id not in {a.event_id for a in store.audit("wf-1")}
    redelivered = await projector(spy, max_conflicts=3).handle(mine)
    assert (redelivered.accepted, redelivered.version) == (True, before + 4)


async def test_one_event_decided_by_two_projectors_at_once_takes_effect_once(
    store: InMemoryWorkflowStore,
) -> None:
    await to_gathering_evidence(projector(store), store, "wf-1")
    spy = Interleaved(store)
    result = envelope("CANCEL_REQUESTED", workflow_id="wf-1")

    outcomes = await asyncio.gather(projector(spy).handle(result), projector(spy).handle(result))

    assert spy.conflicts == 1
    assert sorted((o.accepted, o.reason) for o in outcomes) == [(False, "duplicate"), (True, None)]
    assert [e for e, _ in audited(store)].count(result.event_id) == 1


async def test_an_event_refused_elsewhere_while_being_decided_may_still_be_accepted(
    store: InMemoryWorkflowStore,
) -> None:
    await to_awaiting_approval(projector(store), store, "wf-1")
    approval = envelope("APPROVED", workflow_id="wf-1")
    # A projector whose clock is past the approval's expiry refuses what this one accepts.
    skewed = projector(store, clock=lambda: NOW + timedelta(days=30))
    spy = Interleaved(store, lambda: skewed.handle(approval))

    outcome = await projector(spy).handle(approval)

    # A refusal reserves no event id (else a forger could spend ids before they exist).
    assert (outcome.accepted, outcome.to_state) == (True, "EXECUTING_ACTION")
    assert [r for e, r in audited(store) if e == approval.event_id] == ["guard_rejected", None]


# --- the checkpoint cache -----------------------------------------------------------------


async def test_a_stale_cached_checkpoint_never_turns_a_valid_event_away(
    store: InMemoryWorkflowStore,
) -> None:
    a = projector(store)
    await to_gathering_evidence(a, store, "wf-1")  # a caches the evidence-gathering state
    for result in ("POLICY_RETRIEVED", "ACCOUNT_INSPECTED"):
        await accepted(answer(projector(store), store, "wf-1", result))

    outcome = await answer(a, store, "wf-1", "RECOMMENDATION_GENERATED")

    assert (outcome.accepted, outcome.to_state) == (True, "VALIDATING_POLICY")
    assert all(a.accepted for a in store.audit("wf-1"))


async def test_a_refusal_on_fresh_state_is_audited_once_however_often_it_is_redelivered(
    store: InMemoryWorkflowStore,
) -> None:
    p = projector(store)
    await accepted(p.handle(envelope("START", workflow_id="wf-1")))
    early = envelope("APPROVED", workflow_id="wf-1")

    first, again = await p.handle(early), await p.handle(early)

    assert (first.accepted, first.reason) == (False, "invalid_transition")
    assert (again.accepted, again.reason) == (False, "invalid_transition")
    assert [r for e, r in audited(store) if e == early.event_id] == ["invalid_transition"]


# --- the door -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "foreign",
    [
        envelope("CANCEL_REQUESTED", workflow_id="wf-1").model_copy(update={"tenant_id": "globex"}),
        envelope("RESUME", workflow_type="request", workflow_id="wf-1"),
    ],
    ids=["another_tenant", "another_type"],
)
async def test_a_signal_for_another_tenant_or_type_addresses_no_workflow(
    store: InMemoryWorkflowStore, foreign: Envelope
) -> None:
    p = projector(store)
    await accepted(p.handle(envelope("START", workflow_id="wf-1")))

    with pytest.raises(MalformedMessage) as refused:
        await p.handle(foreign)

    assert refused.value.reason == "unknown_workflow"
    assert len(store.audit("wf-1")) == 1


@pytest.mark.parametrize(
    ("reason", "message"),
    [
        ("unknown_type", envelope("TELEPORT", workflow_id="wf-1", payload={})),
        ("schema_mismatch", envelope("CANCEL_REQUESTED", workflow_id=None)),
        ("schema_mismatch", envelope("START", workflow_id="wf-1", payload={"customer_id": "c"})),
        ("unknown_workflow", envelope("CANCEL_REQUESTED", workflow_id="no-such")),
        (
            "unknown_workflow_type",
            envelope("START", workflow_id="wf-1").model_copy(update={"workflow_type": "billing"}),
        ),
    ],
)
async def test_a_malformed_message_is_refused_at_the_door_and_writes_nothing(
    store: InMemoryWorkflowStore, reason: str, message: Envelope
) -> None:
    with pytest.raises(MalformedMessage) as refused:
        await projector(store).handle(message)

    assert refused.value.reason == reason
    assert (store.audit(), store.outbox()) == ([], [])

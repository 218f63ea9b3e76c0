"""Results a stage asks the projector to decide at once (`contracts.result_requests`): answered
`decided` only once committed (or refused and recorded), `not_taken` with nothing written or
dead-lettered otherwise, and the stream untouched either way."""

from __future__ import annotations

import asyncio

from nats.aio.client import Client

from interlock.contracts import result_requests, subjects
from interlock.contracts.partitions import key_of, slot_of
from interlock.services.runtime.asking import Asking
from tests.support.drive import start
from tests.support.harness import Harness, projector_running
from tests.support.payloads import envelope, result_event


def _asked_subject(workflow_id: str, stage: str, tenant: str = "acme") -> str:
    key = key_of(envelope("CANCEL_REQUESTED", workflow_id=workflow_id, tenant_id=tenant))
    assert key is not None
    return result_requests.result_request(slot_of(key), "support", key, stage)


async def _ask(nc: Client, subject: str, body: bytes) -> bytes:
    answer = await nc.request(subject, body, timeout=10)
    return answer.data


async def _stored(h: Harness, stream: str = subjects.STREAM_IN) -> int:
    info = await h.nc.jetstream().stream_info(stream)
    return info.state.messages + info.state.first_seq - 1 if info.state.messages else 0


async def test_a_result_asked_for_is_committed_before_it_is_answered(h: Harness) -> None:
    workflow_id = await start(h)
    view = await h.view(workflow_id)
    jobs = {j: spec.get("branch") for j, spec in view["execution"]["open_jobs"].items()}
    result = result_event(workflow_id, jobs, "CLASSIFICATION_SUCCEEDED")
    in_stream = await _stored(h)

    answer = await _ask(h.nc, _asked_subject(workflow_id, "classify"), result.to_bytes())

    assert answer == result_requests.DECIDED
    # Answered after the commit: the decision is there the moment the answer is.
    decided = await h.scalar(
        "SELECT accepted FROM audit WHERE workflow_id = :w AND event_id = :e",
        w=workflow_id,
        e=result.event_id,
    )
    assert decided is True
    assert (await h.view(workflow_id))["version"] == view["version"] + 1
    assert await _stored(h) == in_stream  # nothing went through the inbound stream

    # The same result again (a lost answer, sent again): decided, once.
    again = await _ask(h.nc, _asked_subject(workflow_id, "classify"), result.to_bytes())
    assert again == result_requests.DECIDED
    assert (await h.view(workflow_id))["version"] == view["version"] + 1


async def test_a_job_run_again_answering_otherwise_is_decided_once_and_writes_nothing(
    h: Harness,
) -> None:
    """The sweeper re-dispatched a slow job; its second run measured another latency and the
    model said otherwise: the same job's answer, a duplicate, not a reused id."""
    workflow_id = await start(h)
    view = await h.view(workflow_id)
    jobs = {j: spec.get("branch") for j, spec in view["execution"]["open_jobs"].items()}
    first = result_event(workflow_id, jobs, "CLASSIFICATION_SUCCEEDED")
    assert await _ask(h.nc, _asked_subject(workflow_id, "classify"), first.to_bytes()) == (
        result_requests.DECIDED
    )
    audit = (await h.view(workflow_id))["audit"]
    call = {**first.payload["call"], "latency_ms": 912.0}
    rerun = first.model_copy(update={"payload": {**first.payload, "confidence": 0.5, "call": call}})

    answer = await _ask(h.nc, _asked_subject(workflow_id, "classify"), rerun.to_bytes())

    assert answer == result_requests.DECIDED
    assert (await h.view(workflow_id))["audit"] == audit


async def test_a_result_refused_at_the_door_is_recorded_and_answered_decided(h: Harness) -> None:
    workflow_id = await start(h)
    view = await h.view(workflow_id)
    jobs = {j: spec.get("branch") for j, spec in view["execution"]["open_jobs"].items()}
    result = result_event(workflow_id, jobs, "CLASSIFICATION_SUCCEEDED")

    # The classify job's result sent by another stage: refused, and the refusal recorded.
    answer = await _ask(h.nc, _asked_subject(workflow_id, "notify_customer"), result.to_bytes())

    assert answer == result_requests.DECIDED
    refused = await h.decided(workflow_id, result.event_id)
    assert refused["accepted"] is False
    assert (await h.view(workflow_id))["version"] == view["version"]


async def test_what_the_projector_cannot_decide_now_is_not_taken_and_left_untouched(
    h: Harness,
) -> None:
    letters = await _stored(h, subjects.STREAM_DLQ)
    unknown = result_event("no-such-workflow", {"job-x": None}, "CLASSIFICATION_SUCCEEDED")

    answers = [
        await _ask(h.nc, _asked_subject("no-such-workflow", "classify"), unknown.to_bytes()),
        await _ask(h.nc, _asked_subject("no-such-workflow", "classify"), b"{not json"),
    ]

    assert answers == [result_requests.NOT_TAKEN] * 2
    # Neither dead-lettered nor parked: its stage sends it the durable way, which does that.
    assert await _stored(h, subjects.STREAM_DLQ) == letters
    assert await h.scalar("SELECT count(*) FROM audit") == 0


async def test_a_request_subject_that_is_not_a_result_requests_is_not_taken(h: Harness) -> None:
    workflow_id = await start(h)
    key = key_of(envelope("CANCEL_REQUESTED", workflow_id=workflow_id))
    lying = f"{result_requests.RQ_PREFIX}.999.result.support.{key}.classify"
    answer = await h.nc.request(lying, b"{}", timeout=2)
    assert answer.data == result_requests.NOT_TAKEN


async def test_with_no_projector_listening_a_stage_is_told_at_once(
    nats_url: str, database_url: str
) -> None:
    async with projector_running(nats_url, database_url) as h:
        asking = Asking(wait=5.0)
        loop = asyncio.get_running_loop()
        began = loop.time()
        subject = f"{result_requests.RQ_PREFIX}.0.result.nobody.0123456789abcdef.classify"
        decided = await asking.decided(h.nc, subject, b"{}", {})
        assert decided is False
        assert loop.time() - began < 2.0  # the broker says no one listens: no wait


async def test_partitions_answer_only_their_own_slots(nats_url: str, database_url: str) -> None:
    async with projector_running(nats_url, database_url, partitions=2) as h:
        workflow_id = await start(h)
        view = await h.view(workflow_id)
        jobs = {j: spec.get("branch") for j, spec in view["execution"]["open_jobs"].items()}
        result = result_event(workflow_id, jobs, "CLASSIFICATION_SUCCEEDED")
        key = key_of(result)
        assert key is not None
        right = result_requests.result_request(slot_of(key), "support", key, "classify")
        # Another partition's slot: that partition holds the workflow not, so it takes none.
        other = (slot_of(key) + 1) % 64
        wrong = result_requests.result_request(other, "support", key, "classify")

        assert await _ask(h.nc, wrong, result.to_bytes()) == result_requests.NOT_TAKEN
        assert await _ask(h.nc, right, result.to_bytes()) == result_requests.DECIDED
        assert (await h.view(workflow_id))["version"] == view["version"] + 1

"""A stage asks the projector partition that owns a workflow whether it still waits for a job,
over the real broker, and the answer is the committed state: a job revoked by a committed
decision is `stale` at once, with nothing published in between (no outbox row, no record),
so an effect never acts on a job a committed cancellation revoked."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import nats
import pytest
from nats.aio.client import Client
from nats.js.errors import NotFoundError

from interlock.contracts.job_questions import JobQuestion, job_question
from interlock.contracts.partitions import SLOTS, Partition, routing_key, slot_of
from interlock.messaging.streams import LEGACY_BUCKET_STREAM, provision
from interlock.projector.job_questions import answer_questions
from interlock.projector.service import Projector
from interlock.projector.store.memory import InMemoryWorkflowStore
from interlock.services.runtime.openjobs import OpenJobsReader
from tests.support.direct import accepted, checkpoint
from tests.support.payloads import PAYLOADS, envelope
from tests.support.workflows import REGISTRY, STAGES

pytestmark = pytest.mark.timeout(60)
NOW = datetime(2026, 5, 4, 9, 30, tzinfo=UTC)


@pytest.fixture
async def nc(nats_url: str) -> AsyncIterator[Client]:
    client = await nats.connect(nats_url)
    try:
        yield client
    finally:
        await client.close()


@pytest.fixture
def store() -> InMemoryWorkflowStore:
    return InMemoryWorkflowStore(clock=lambda: NOW)


@pytest.fixture
async def answering(nc: Client, store: InMemoryWorkflowStore) -> AsyncIterator[Projector]:
    """A projector of one partition answering job questions."""
    projector = Projector(store, registry=REGISTRY, clock=lambda: NOW, rand=lambda: 0.0)
    stop = asyncio.Event()
    task = asyncio.create_task(answer_questions(nc, projector.job_stage, stop, Partition()))
    await nc.flush()
    try:
        yield projector
    finally:
        stop.set()
        await task


@pytest.fixture
async def started(
    nc: Client, store: InMemoryWorkflowStore, answering: Projector
) -> tuple[OpenJobsReader, str]:
    """A reader the partition answers, and the open job of workflow wf-1, just started."""
    reader = OpenJobsReader(nc, wait=1.0)
    await _subscribed(reader, nc)
    await accepted(answering.handle(envelope("START", workflow_id="wf-1")))
    [job_id] = (await checkpoint(store, "wf-1")).execution.open_jobs
    return reader, job_id


async def _subscribed(reader: OpenJobsReader, nc: Client) -> None:
    """Wait (polling, with a deadline) until the partition answers at all."""
    deadline = asyncio.get_running_loop().time() + 10
    while await reader.status("support", "classify", "acme", "nobody", "j") == "unknown":
        assert asyncio.get_running_loop().time() < deadline, "no partition answered"
        await nc.flush()


async def test_a_job_is_open_until_a_committed_decision_revokes_it(
    answering: Projector, started: tuple[OpenJobsReader, str]
) -> None:
    reader, job_id = started

    assert await reader.status("support", "classify", "acme", "wf-1", job_id) == "open"
    cancel = envelope("CANCEL_REQUESTED", workflow_id="wf-1", payload=PAYLOADS["CANCEL_REQUESTED"])
    await accepted(answering.handle(cancel))

    # Stale as soon as the cancellation is committed: nothing of it need be published first.
    assert await reader.status("support", "classify", "acme", "wf-1", job_id) == "stale"


async def test_a_question_is_answered_for_its_own_stage_tenant_and_type_only(
    started: tuple[OpenJobsReader, str],
) -> None:
    reader, job_id = started

    assert await reader.status("support", "execute_action", "acme", "wf-1", job_id) == "stale"
    assert await reader.status("support", "classify", "globex", "wf-1", job_id) == "stale"
    assert await reader.status("request", "classify", "acme", "wf-1", job_id) == "stale"


async def test_a_question_whose_subject_lies_about_its_workflow_is_not_answered(
    nc: Client, started: tuple[OpenJobsReader, str]
) -> None:
    _reader, job_id = started
    question = JobQuestion(tenant_id="acme", workflow_id="wf-1", job_id=job_id)
    other = routing_key("acme", "wf-2")
    lying = f"wf.rq.{slot_of(other)}.job.support.{other}.classify"
    wrong_slot = job_question("support", "classify", question).replace(
        f"wf.rq.{slot_of(routing_key('acme', 'wf-1'))}.",
        f"wf.rq.{(slot_of(routing_key('acme', 'wf-1')) + 1) % SLOTS}.",
    )

    for subject in (lying, wrong_slot):
        with pytest.raises(nats.errors.TimeoutError):
            await nc.request(subject, question.model_dump_json().encode(), timeout=0.5)
    right = await nc.request(
        job_question("support", "classify", question), question.model_dump_json().encode()
    )
    assert right.data == b"open"


async def test_nobody_answering_is_unknown(nc: Client) -> None:
    reader = OpenJobsReader(nc, wait=0.5)

    assert await reader.status("support", "classify", "acme", "wf-1", "job-1") == "unknown"


async def test_provisioning_deletes_the_open_jobs_bucket_of_an_earlier_release(nc: Client) -> None:
    js = nc.jetstream()
    bucket = await js.create_key_value(bucket="wf_open_jobs", history=1)
    await bucket.put("acme.wf-1", b'{"version": 1, "state": "S", "jobs": ["job-1"]}')

    await provision(js, STAGES)

    with pytest.raises(NotFoundError):
        await js.stream_info(LEGACY_BUCKET_STREAM)
    await provision(js, STAGES)  # and again, with nothing to delete

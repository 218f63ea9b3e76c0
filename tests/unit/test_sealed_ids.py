"""Ids nobody else can spend: results go under a message id the projector seals into the
signed job (an HMAC of the job id keyed from its private key), and a request or signal under
the message id of a result or timer firing is refused at the door with its sender named."""

from __future__ import annotations

import pytest

from interlock.contracts.ids import job_id_for, result_event_id, timer_event_id
from interlock.contracts.jobs import JobPayload
from interlock.contracts.subjects import parse_inbound
from interlock.projector.door import squatted_message_id
from interlock.projector.signing import JobSigner
from tests.unit.test_job_signatures import OTHER_PRIVATE, PRIVATE, dispatched_jobs

JOB = job_id_for("acme", "wf-1", 7, "execute_action")


def test_a_reply_id_is_the_result_id_sealed_with_a_secret_of_the_projector() -> None:
    signer = JobSigner(PRIVATE)
    reply = signer.reply_id(JOB)

    assert reply.startswith(f"{result_event_id(JOB)}.")
    assert reply == JobSigner(PRIVATE).reply_id(JOB)  # every run of the job: one message id
    assert reply != JobSigner(OTHER_PRIVATE).reply_id(JOB)
    assert reply != signer.reply_id(job_id_for("acme", "wf-1", 8, "execute_action"))


async def test_every_signed_job_carries_its_sealed_reply_id() -> None:
    signer = JobSigner(PRIVATE)
    jobs = [JobPayload.model_validate(j.payload) for j in await dispatched_jobs(signer)]

    assert jobs
    assert all(job.reply_id == signer.reply_id(job.job_id) for job in jobs)


@pytest.mark.parametrize(
    ("subject", "message_id", "spent"),
    [
        ("wf.in.request.support.upstream", result_event_id(JOB), "a stage result"),
        ("wf.in.signal.support.approvals", timer_event_id("t-1"), "a timer firing"),
        ("wf.in.signal.support.approvals", f"{result_event_id(JOB)}.forged", "a stage result"),
    ],
)
def test_a_client_message_under_a_result_or_firing_id_is_refused_naming_its_sender(
    subject: str, message_id: str, spent: str
) -> None:
    inbound = parse_inbound(subject)

    refused = squatted_message_id(inbound, message_id)

    assert refused is not None
    assert refused.startswith(f"{inbound.sender} sent a {inbound.kind} under the message id")
    assert spent in refused


@pytest.mark.parametrize(
    ("subject", "message_id"),
    [
        ("wf.in.signal.support.approvals", "evt-1"),
        ("wf.in.request.support.upstream", None),
        ("wf.in.result.support.execute_action", result_event_id(JOB)),
        ("wf.in.timer.support", timer_event_id("t-1")),
    ],
)
def test_other_message_ids_pass_the_door(subject: str, message_id: str | None) -> None:
    assert squatted_message_id(parse_inbound(subject), message_id) is None

"""A job nobody decided moves no money: the execute_action stage, running against the real
broker and the simulated refund provider, refuses every job the projector did not sign (or
that was altered after signing), and an effect without a version to check against —
dead-lettered with the reason, never acted on; a signed job of a workflow the projector does
not (or no longer) know is skipped, never acted on either. The jobs are
published as `admin`, as an attacker with a compromised broker account could."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import uuid
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from nats.aio.client import Client
from nats.js import JetStreamContext

from interlock.app.runners import components
from interlock.app.runtime import Runtime
from interlock.config.secrets import Secrets
from interlock.config.settings import Settings
from interlock.contracts import subjects
from interlock.contracts.envelope import Actor, Envelope, utcnow
from interlock.contracts.ids import canonical_json, fingerprint
from interlock.contracts.jobs import JOB_EVENT_TYPE, SIGNATURE_SCHEME, JobPayload, signed_claims
from interlock.simulators import action_count, ensure_schema, seed_customer
from tests.support.payloads import PAYLOADS
from tests.support.polling import eventually

pytestmark = pytest.mark.timeout(90)
STAGE = subjects.job("support", "execute_action")
DLQ = subjects.dlq(subjects.stage_consumer("support", "execute_action"))


@pytest.fixture
async def execute_stage(
    js: JetStreamContext, database_url: str, nats_url: str, session_secrets: Secrets
) -> AsyncIterator[None]:
    """The refund provider (simulator), the execute_action stage and the projector it asks
    about its jobs, running in-process."""
    await ensure_schema(database_url)
    await seed_customer(database_url, "cust-1")
    settings = Settings(secrets_dir=session_secrets.directory)
    runtime = Runtime(settings, nats_url, database_url)
    stop = asyncio.Event()
    tasks = [
        asyncio.ensure_future(components()[name](runtime, stop))
        for name in ("sim", "projector", "support.execute_action")
    ]
    try:
        yield
    finally:
        stop.set()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait_for(task, 15)


def refund_job(
    customer: str = "cust-1",
    amount: str = "99999.00",
    stage: str = "execute_action",
    **envelope: Any,
) -> Envelope:
    job = JobPayload(
        job_id=f"job-{uuid.uuid4()}",
        stage=stage,
        state="EXECUTING_ACTION",
        definition_version=2,
        inputs={
            "request": {**PAYLOADS["START"], "customer_id": customer},
            "recommendation": {**PAYLOADS["RECOMMENDATION_GENERATED"], "amount": amount},
            "recommendation_version": 1,
        },
    )
    fields: dict[str, Any] = {
        "event_id": job.job_id,
        "type": JOB_EVENT_TYPE,
        "workflow_type": "support",
        "workflow_id": f"wf-{uuid.uuid4()}",
        "tenant_id": "acme",
        "actor": Actor(id="projector", role="system"),
        "occurred_at": utcnow(),
        "expected_version": 7,
        "payload": job.model_dump(mode="json"),
    }
    return Envelope(**{**fields, **envelope})


def signed(job: Envelope, private_key_pem: str, *, old_way: bool = False) -> Envelope:
    key = serialization.load_pem_private_key(private_key_pem.encode(), password=None)
    assert isinstance(key, Ed25519PrivateKey)
    payload = JobPayload.model_validate(job.payload)
    if old_way:  # as a release before signature scheme v2 signed
        claims = {
            "workflow_id": job.workflow_id,
            "tenant_id": job.tenant_id,
            "job_id": payload.job_id,
            "stage": payload.stage,
            "expected_version": job.expected_version,
            "inputs_sha256": fingerprint(payload.inputs),
        }
        encoded = base64.urlsafe_b64encode(key.sign(canonical_json(claims).encode())).decode()
        return job.model_copy(update={"payload": {**job.payload, "signature": encoded}})
    encoded = base64.urlsafe_b64encode(key.sign(signed_claims(job, payload))).decode()
    signature = f"{SIGNATURE_SCHEME}.{encoded}"
    return job.model_copy(update={"payload": {**job.payload, "signature": signature}})


def altered(job: Envelope, **fields: Any) -> Envelope:
    """`job` with envelope fields or (`payload_*`) job fields changed after signing."""
    payload = {k[len("payload_") :]: v for k, v in fields.items() if k.startswith("payload_")}
    envelope = {k: v for k, v in fields.items() if not k.startswith("payload_")}
    return job.model_copy(update={**envelope, "payload": {**job.payload, **payload}})


def another_key() -> str:
    return (
        Ed25519PrivateKey.generate()
        .private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        .decode()
    )


async def dead_letter_reasons(nc: Client, count: int) -> dict[str, str]:
    """The reason of each of the first `count` dead letters of the stage, by job id."""
    js = nc.jetstream()
    found: dict[str, str] = {}

    async def probe() -> dict[str, str] | None:
        info = await js.stream_info(subjects.STREAM_DLQ, subjects_filter=DLQ)
        if info.state.messages < count:
            return None
        for seq in range(info.state.first_seq, info.state.last_seq + 1):
            with contextlib.suppress(Exception):
                letter = await js.get_msg(subjects.STREAM_DLQ, seq)
                job = Envelope.model_validate_json(letter.data or b"")
                found[job.event_id] = (letter.headers or {})[subjects.HEADER_DLQ_REASON]
        return found if len(found) >= count else None

    return await eventually(probe, within=30, what=f"{count} dead letters")


@pytest.mark.usefixtures("execute_stage")
async def test_jobs_the_projector_did_not_sign_as_they_are_never_acted_on(
    nc: Client, database_url: str, session_secrets: Secrets
) -> None:
    real_key = session_secrets.job_signing_key()
    tampered = signed(refund_job(amount="25.00"), real_key)
    tampered = tampered.model_copy(
        update={"payload": {**tampered.payload, "inputs": refund_job().payload["inputs"]}}
    )
    forged = {
        "bad_signature": [
            refund_job(customer="made-up"),  # no workflow at all, unsigned
            signed(refund_job(), another_key()),
            tampered,  # signed for 25.00, sent for 99,999.00
            signed(refund_job(), real_key, old_way=True),  # a release before scheme v2
            altered(signed(refund_job(), real_key), payload_attempt=3),
            altered(signed(refund_job(), real_key), payload_definition_version=1),
            altered(signed(refund_job(), real_key), payload_state="COMPENSATING"),
            altered(signed(refund_job(), real_key), payload_branch="policy"),
            altered(signed(refund_job(), real_key), payload_cancel_requested=True),
            altered(signed(refund_job(), real_key), type="APPROVED"),
            altered(
                signed(refund_job(), real_key), actor=Actor(id="mallory", role="support_approver")
            ),
            signed(refund_job(stage="notify_customer"), real_key),  # another stage's job
        ],
        "no_expected_version": [signed(refund_job(expected_version=None), real_key)],
    }
    js = nc.jetstream()
    await js.publish(STAGE, signed(refund_job(), real_key).to_bytes())  # no such workflow
    for jobs in forged.values():
        for job in jobs:
            await js.publish(STAGE, job.to_bytes())

    reasons = await dead_letter_reasons(nc, sum(len(jobs) for jobs in forged.values()))

    assert reasons == {job.event_id: reason for reason, jobs in forged.items() for job in jobs}
    await eventually(partial(_all_settled, js), what="every job settled")
    assert await action_count(database_url) == 0
    assert len(await dead_letter_reasons(nc, len(reasons))) == len(reasons)  # the skip made none


async def _all_settled(js: JetStreamContext) -> bool:
    consumer = subjects.stage_consumer("support", "execute_action")
    info = await js.consumer_info(subjects.STREAM_JOBS, consumer)
    return bool(info.num_pending == 0 and info.num_ack_pending == 0)


CARD = "4111 1111 1111 1111"


@pytest.mark.usefixtures("execute_stage")
async def test_a_refused_job_is_recorded_by_field_and_error_kind_never_by_value(
    nc: Client, caplog: pytest.LogCaptureFixture
) -> None:
    job = refund_job()
    malformed = job.model_copy(update={"payload": {**job.payload, "attempt": CARD}})

    await nc.jetstream().publish(STAGE, malformed.to_bytes())

    reasons = await dead_letter_reasons(nc, 1)
    assert reasons == {job.event_id: "schema_mismatch"}
    letter = await nc.jetstream().get_last_msg(subjects.STREAM_DLQ, DLQ)
    detail = (letter.headers or {})[subjects.HEADER_DLQ_DETAIL]
    assert "attempt" in detail
    assert CARD not in detail
    assert CARD not in caplog.text

"""The interlock travels with the job: the projector signs every job it dispatches (Ed25519)
over the whole envelope (type, actor, workflow, tenant, expected version, ...) and every field
of the job (a digest of the inputs), and a stage acts only on a job whose signature verifies
with the projector's public key, signed for that stage."""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from interlock.contracts.envelope import SCHEMA_VERSION, Actor, Envelope
from interlock.contracts.errors import MalformedMessage
from interlock.contracts.ids import canonical_json, fingerprint
from interlock.contracts.jobs import JOB_EVENT_TYPE, JobPayload
from interlock.projector.service import Projector
from interlock.projector.signing import JobSigner
from interlock.projector.store.memory import InMemoryWorkflowStore
from interlock.services.runtime.admission import JobAdmission
from interlock.services.runtime.openjobs import Known
from interlock.services.runtime.signatures import JobVerifier
from tests.support.direct import accepted, answer
from tests.support.payloads import envelope
from tests.support.workflows import REGISTRY

NOW = datetime(2026, 5, 4, 9, 30, tzinfo=UTC)


def _pem_pair() -> tuple[str, str]:
    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return private.decode(), public.decode()


PRIVATE, PUBLIC = _pem_pair()
OTHER_PRIVATE, _ = _pem_pair()


async def dispatched_jobs(signer: JobSigner | None = None) -> list[Envelope]:
    """Every job the projector dispatched while a support workflow gathered its evidence."""
    store = InMemoryWorkflowStore(clock=lambda: NOW)
    projector = Projector(
        store, registry=REGISTRY, clock=lambda: NOW, rand=lambda: 0.0, signer=signer
    )
    await accepted(projector.handle(envelope("START", workflow_id="wf-1")))
    await accepted(answer(projector, store, "wf-1", "CLASSIFICATION_SUCCEEDED"))
    jobs = [Envelope.model_validate_json(o.body) for o in store.outbox()]
    return [j for j in jobs if j.type == JOB_EVENT_TYPE]


def verified(job: Envelope, public: str = PUBLIC) -> bool:
    return JobVerifier(public).verify(job, JobPayload.model_validate(job.payload))


async def test_every_dispatched_job_carries_a_signature_that_verifies() -> None:
    jobs = await dispatched_jobs(JobSigner(PRIVATE))

    assert len(jobs) == 3  # classify, then the policy and account branches
    assert all(verified(job) for job in jobs)


FORGERIES: list[dict[str, Any]] = [
    {"workflow_id": "wf-other"},
    {"tenant_id": "globex"},
    {"expected_version": 99},
    {"payload": {"inputs": {"request": {"amount": "99999.00"}}}},
    {"payload": {"job_id": "job-made-up"}},
    {"payload": {"stage": "execute_action"}},
    {"payload": {"state": "EXECUTING_ACTION"}},
    {"payload": {"branch": "account"}},
    {"payload": {"attempt": 2}},
    {"payload": {"repair": True}},
    {"payload": {"cancel_requested": True}},
    {"payload": {"definition_version": 1}},
    {"payload": {"reply_id": "result:made-up"}},
    {"type": "APPROVED"},
    {"actor": Actor(id="mallory", role="support_approver")},
    {"workflow_type": "request"},
    {"event_id": "job-other"},
    {"causation_id": "evt-other"},
    {"correlation_id": "corr-other"},
    {"occurred_at": NOW + timedelta(seconds=1)},
    {"schema_version": SCHEMA_VERSION + 1},
    {"payload": {"signature": None}},
    {"payload": {"signature": "bm90IGEgc2lnbmF0dXJl"}},
    {"payload": {"signature": "*not base64*"}},
]


@pytest.mark.parametrize(
    "forgery",
    FORGERIES,
    ids=lambda forgery: "-".join(
        f"{k}.{'.'.join(v)}" if isinstance(v, dict) else k for k, v in forgery.items()
    ),
)
async def test_a_job_altered_in_any_signed_field_does_not_verify(forgery: dict[str, Any]) -> None:
    [job, *_] = await dispatched_jobs(JobSigner(PRIVATE))
    envelope_fields = {k: v for k, v in forgery.items() if k != "payload"}
    payload = {**job.payload, **forgery.get("payload", {})}
    altered = job.model_copy(update={**envelope_fields, "payload": payload})

    assert not verified(altered)


def test_every_field_a_stage_acts_on_is_among_the_forgeries() -> None:
    """A field added to the envelope or the job is signed (`signed_claims` takes them all)
    and must be tried here too: altering it must fail verification."""
    altered = {k for f in FORGERIES for k in f if k != "payload"}
    altered_job = {k for f in FORGERIES for k in f.get("payload", {})}

    assert set(Envelope.model_fields) - {"payload"} <= altered
    assert set(JobPayload.model_fields) <= altered_job


async def test_a_job_signed_with_another_key_or_not_at_all_does_not_verify() -> None:
    [foreign, *_] = await dispatched_jobs(JobSigner(OTHER_PRIVATE))
    [unsigned, *_] = await dispatched_jobs()

    assert not verified(foreign)
    assert not verified(unsigned)


def _claims_v1(job: Envelope) -> bytes:
    """What a release before signature v2 signed."""
    payload = JobPayload.model_validate(job.payload)
    claims = {
        "workflow_id": job.workflow_id,
        "tenant_id": job.tenant_id,
        "job_id": payload.job_id,
        "stage": payload.stage,
        "expected_version": job.expected_version,
        "inputs_sha256": fingerprint(payload.inputs),
    }
    return canonical_json(claims).encode()


async def test_a_job_signed_the_old_way_over_fewer_fields_is_refused() -> None:
    [job, *_] = await dispatched_jobs()
    key = serialization.load_pem_private_key(PRIVATE.encode(), password=None)
    assert isinstance(key, Ed25519PrivateKey)
    old = key.sign(_claims_v1(job))
    v1 = job.model_copy(
        update={"payload": {**job.payload, "signature": base64.urlsafe_b64encode(old).decode()}}
    )

    assert not verified(v1)


class _StillOpen:
    async def status(self, *_: str) -> Known:
        return "open"


@pytest.mark.parametrize(
    ("workflow_type", "stage"), [("support", "execute_action"), ("request", "classify")]
)
async def test_a_signed_job_is_refused_by_a_stage_it_was_not_dispatched_to(
    workflow_type: str, stage: str
) -> None:
    [classify, *_] = await dispatched_jobs(JobSigner(PRIVATE))
    job = JobPayload.model_validate(classify.payload)
    admission = JobAdmission(JobVerifier(PUBLIC), _StillOpen())  # type: ignore[arg-type]

    assert job.stage == "classify"
    assert not await admission.is_stale(
        classify, job, workflow_type="support", stage="classify", effects=True, redelivered=False
    )
    with pytest.raises(MalformedMessage) as refused:
        await admission.is_stale(
            classify, job, workflow_type=workflow_type, stage=stage, effects=True,
            redelivered=False,
        )  # fmt: skip
    assert refused.value.reason == "bad_signature"

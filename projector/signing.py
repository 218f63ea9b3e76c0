"""Signing the jobs the projector dispatches (Ed25519), before they are committed with the
outbox rows: a stage acts only on a job whose signature verifies with the projector's public
key, so a job published by anyone else can at most be refused. Each job also carries the
message id its result goes under (`JobPayload.reply_id`), sealed with an HMAC keyed from the
same private key: a client that read the workflow's announcements can derive the result's
event id, never that message id, so it cannot have the result dropped as a duplicate."""

from __future__ import annotations

import base64
import hashlib
import hmac
from dataclasses import replace

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from interlock.contracts.ids import result_event_id, sealed_message_id
from interlock.contracts.jobs import JOB_EVENT_TYPE, SIGNATURE_SCHEME, JobPayload, signed_claims
from interlock.projector.engine import Accepted
from interlock.projector.engine.model import OutMessage


class JobSigner:
    def __init__(self, private_key_pem: str) -> None:
        """Raise `ValueError` if the PEM is not an Ed25519 private key."""
        key = serialization.load_pem_private_key(private_key_pem.encode(), password=None)
        if not isinstance(key, Ed25519PrivateKey):
            raise ValueError("the job-signing key is not an Ed25519 private key")
        self._key = key
        raw = key.private_bytes(
            serialization.Encoding.Raw,
            serialization.PrivateFormat.Raw,
            serialization.NoEncryption(),
        )
        self._reply_key = hashlib.sha256(b"interlock reply ids\x00" + raw).digest()

    def reply_id(self, job_id: str) -> str:
        """The sealed message id of job `job_id`'s result (the same for every run of it)."""
        seal = hmac.new(self._reply_key, job_id.encode(), hashlib.sha256).hexdigest()[:32]
        return sealed_message_id(result_event_id(job_id), seal)

    def sign(self, decision: Accepted) -> Accepted:
        """`decision` with every job it dispatches signed."""
        messages = tuple(self._signed(m) for m in decision.messages)
        return replace(decision, messages=messages)

    def _signed(self, message: OutMessage) -> OutMessage:
        envelope = message.envelope
        if envelope.type != JOB_EVENT_TYPE:
            return message
        reply_id = self.reply_id(str(envelope.payload.get("job_id", "")))
        unsigned = {**envelope.payload, "reply_id": reply_id}
        job = JobPayload.model_validate(unsigned)
        signature = self._key.sign(signed_claims(envelope, job))
        encoded = base64.urlsafe_b64encode(signature).decode()
        payload = {**unsigned, "signature": f"{SIGNATURE_SCHEME}.{encoded}"}
        return replace(message, envelope=envelope.model_copy(update={"payload": payload}))

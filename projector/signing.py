"""Signing the jobs the projector dispatches (Ed25519), before they are committed with the
outbox rows: a stage acts only on a job whose signature verifies with the projector's public
key, so a job published by anyone else can at most be refused."""

from __future__ import annotations

import base64
from dataclasses import replace

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

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

    def sign(self, decision: Accepted) -> Accepted:
        """`decision` with every job it dispatches signed."""
        messages = tuple(self._signed(m) for m in decision.messages)
        return replace(decision, messages=messages)

    def _signed(self, message: OutMessage) -> OutMessage:
        envelope = message.envelope
        if envelope.type != JOB_EVENT_TYPE:
            return message
        job = JobPayload.model_validate(envelope.payload)
        signature = self._key.sign(signed_claims(envelope, job))
        encoded = base64.urlsafe_b64encode(signature).decode()
        payload = {**envelope.payload, "signature": f"{SIGNATURE_SCHEME}.{encoded}"}
        return replace(message, envelope=envelope.model_copy(update={"payload": payload}))

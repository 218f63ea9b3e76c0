"""Verifying a job's signature before a stage acts on it: only the projector holds the
private key, so a job anyone else published (or altered) does not verify."""

from __future__ import annotations

import base64
import binascii

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from interlock.contracts.envelope import Envelope
from interlock.contracts.jobs import SIGNATURE_SCHEME, JobPayload, signed_claims


class JobVerifier:
    def __init__(self, public_key_pem: str) -> None:
        """Raise `ValueError` if the PEM is not an Ed25519 public key."""
        key = serialization.load_pem_public_key(public_key_pem.encode())
        if not isinstance(key, Ed25519PublicKey):
            raise ValueError("the job public key is not an Ed25519 public key")
        self._key = key

    def verify(self, job_envelope: Envelope, job: JobPayload) -> bool:
        """Whether the projector signed exactly this job (unsigned or signed the old way: no)."""
        scheme, _, encoded = (job.signature or "").partition(".")
        if scheme != SIGNATURE_SCHEME:
            return False
        try:
            signature = base64.urlsafe_b64decode(encoded.encode())
            self._key.verify(signature, signed_claims(job_envelope, job))
        except (InvalidSignature, binascii.Error, ValueError):
            return False
        return True

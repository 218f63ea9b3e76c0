"""Verifying the gateway's sender claims (`contracts.sender_claims`) before the door."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import replace

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from interlock.contracts.sender_claims import HEADER_SENDER_CLAIM, claimed_bytes, parse_claim
from interlock.contracts.subjects import Inbound


class ClaimVerifier:
    def __init__(self, public_key_pem: str) -> None:
        """Raise `ValueError` if the PEM is not an Ed25519 public key."""
        key = serialization.load_pem_public_key(public_key_pem.encode())
        if not isinstance(key, Ed25519PublicKey):
            raise ValueError("the gateway's public key is not an Ed25519 public key")
        self._key = key

    def sender(self, body: bytes, headers: Mapping[str, str]) -> str | None:
        """The sender a valid claim on `body` names; None without one."""
        parsed = parse_claim(headers.get(HEADER_SENDER_CLAIM))
        if parsed is None:
            return None
        sender, encoded = parsed
        try:
            self._key.verify(base64.urlsafe_b64decode(encoded), claimed_bytes(sender, body))
        except (InvalidSignature, binascii.Error, ValueError):
            return None
        return sender

    def checked(self, inbound: Inbound, body: bytes, headers: Mapping[str, str]) -> Inbound:
        """`inbound` with the verified claim (or its absence) recorded for the door."""
        return replace(inbound, claim_checked=True, claimed=self.sender(body, headers))

"""The gateway's signature on the sender each message speaks for (`contracts.sender_claims`)."""

from __future__ import annotations

import base64

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from interlock.contracts.sender_claims import claim_header, claimed_bytes


class ClaimSigner:
    def __init__(self, private_key_pem: str) -> None:
        """Raise `ValueError` if the PEM is not an Ed25519 private key."""
        key = serialization.load_pem_private_key(private_key_pem.encode(), password=None)
        if not isinstance(key, Ed25519PrivateKey):
            raise ValueError("the gateway's claim-signing key is not an Ed25519 private key")
        self._key = key

    def header(self, sender: str, body: bytes) -> str:
        """The `Interlock-Sender-Claim` value for `body`, published for `sender`."""
        signature = self._key.sign(claimed_bytes(sender, body))
        return claim_header(sender, base64.urlsafe_b64encode(signature).decode())

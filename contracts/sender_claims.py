"""The sender claim a relaying client (the gateway) signs onto each message it publishes.

The broker vouches only for the publishing identity (`gateway`), not for which of the
gateway's webhook senders a message speaks for. So the gateway signs that too: the header
`Interlock-Sender-Claim: v1.<sender>.<signature>` carries an Ed25519 signature, with the
gateway's own key, over the sender's name and the SHA-256 of the message body exactly as
published. The projector verifies it with the gateway's public key and checks the message
against that sender's grant; a message without a valid claim, or whose event id names another
sender, is refused (`sender_unsigned`, `sender_mismatch`) and dead-lettered with the reason.
The claim binds the whole body, so it cannot be moved onto another message.
"""

from __future__ import annotations

import hashlib
import re

HEADER_SENDER_CLAIM = "Interlock-Sender-Claim"
CLAIM_SCHEME = "v1"
_CLAIM = re.compile(rf"{CLAIM_SCHEME}\.([A-Za-z0-9_]{{1,64}})\.([A-Za-z0-9_=-]{{1,200}})")


def claimed_bytes(sender: str, body: bytes) -> bytes:
    """What the signature of a claim covers: the scheme, the sender and the body's digest."""
    digest = hashlib.sha256(body).digest()
    return f"interlock-sender-claim/{CLAIM_SCHEME}\n{sender}\n".encode() + digest


def claim_header(sender: str, signature_b64: str) -> str:
    return f"{CLAIM_SCHEME}.{sender}.{signature_b64}"


def parse_claim(value: str | None) -> tuple[str, str] | None:
    """(sender, urlsafe-base64 signature) of a claim header; None if it is not one."""
    found = _CLAIM.fullmatch(value or "")
    return None if found is None else (found.group(1), found.group(2))

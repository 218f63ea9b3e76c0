"""Who may post to the gateway: configured senders, their Standard Webhooks secrets and the
tenants, workflow types, actor roles and actor ids each may claim.

A request names its sender in `interlock-sender` and is signed as the Standard Webhooks spec
says (`webhook-id`, `webhook-timestamp` within five minutes, `webhook-signature` HMAC-SHA256
over id, timestamp and body). Verification is the `standardwebhooks` package's; this module
only chooses the secret and maps failures to refusals. Secrets stay in `SecretStr` until a
`Webhook` verifier is built from them and appear in no message, log or exception.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Protocol

from pydantic import SecretStr
from standardwebhooks.webhooks import (
    EmptyWebhookSecretError,
    Webhook,
    WebhookVerificationError,
)

from interlock.contracts.clients import SENDER_PATTERN
from interlock.services.errors import Refusal

HEADER_SENDER = "interlock-sender"
SIGNATURE_HEADERS = ("webhook-id", "webhook-timestamp", "webhook-signature")


class SenderConfig(Protocol):
    """A sender as configured (e.g. `INTERLOCK_GATEWAY_SENDERS`)."""

    @property
    def secret(self) -> SecretStr: ...

    @property
    def roles(self) -> Collection[str]: ...

    @property
    def tenants(self) -> Collection[str]: ...

    @property
    def actors(self) -> Collection[str]: ...

    @property
    def types(self) -> Collection[str]: ...


ANY = "*"


@dataclass(frozen=True)
class _Sender:
    verifier: Webhook
    roles: frozenset[str]
    tenants: frozenset[str]
    actors: frozenset[str]
    types: frozenset[str]

    def __repr__(self) -> str:
        return f"_Sender(roles={sorted(self.roles)}, tenants={sorted(self.tenants)})"


class SenderRegistry:
    """The senders the gateway accepts; built once at start-up."""

    def __init__(self, senders: Mapping[str, SenderConfig]) -> None:
        """Raise `ValueError` naming the sender (never the secret) if a secret is not a
        Standard Webhooks key (`whsec_` + base64 of at least one byte), or a name is not
        `SENDER_PATTERN` (it is part of every event id the sender's webhooks become)."""
        self._senders: dict[str, _Sender] = {}
        for name, config in senders.items():
            if not re.fullmatch(SENDER_PATTERN, name):
                raise ValueError(f"gateway sender {name[:64]!r}: name is not {SENDER_PATTERN}")
            try:
                verifier = Webhook(config.secret.get_secret_value())
            except (ValueError, EmptyWebhookSecretError):
                raise ValueError(f"gateway sender {name!r}: secret is not whsec_<base64>") from None
            self._senders[name] = _Sender(
                verifier,
                frozenset(config.roles),
                frozenset(config.tenants),
                frozenset(config.actors),
                frozenset(config.types),
            )

    def __len__(self) -> int:
        return len(self._senders)

    def authenticate(self, sender: str | None, body: bytes, headers: Mapping[str, str]) -> str:
        """The sender's name if `body` is signed with its secret, within the tolerance.

        Raises `Refusal` 401: `unknown_sender` (header missing or not configured) or
        `bad_signature` (headers missing or malformed, timestamp outside five minutes, or no
        matching signature).
        """
        known = self._senders.get(sender or "")
        if sender is None or known is None:
            raise Refusal(401, "unknown_sender", f"no such sender; name it in {HEADER_SENDER}")
        signed = {name: headers[name] for name in SIGNATURE_HEADERS if name in headers}
        try:
            known.verifier.verify(body, signed, json_parse=False)
        except WebhookVerificationError as exc:
            raise Refusal(401, "bad_signature", str(exc)) from None
        except ValueError:
            # A signature header that is not `v1,<base64>` or a body that is not UTF-8.
            raise Refusal(401, "bad_signature", "malformed signature or body") from None
        return sender

    def knows(self, sender: str | None) -> bool:
        return sender in self._senders

    def authorize(self, sender: str, actor_id: str, role: str) -> None:
        """Raise `Refusal` 403 `forged_actor` unless `sender` may speak for the actor (its id
        and its role)."""
        known = self._senders[sender]
        if role not in known.roles or not (ANY in known.actors or actor_id in known.actors):
            raise Refusal(403, "forged_actor", f"sender {sender!r} may not sign as that actor")

    def admits_type(self, sender: str, workflow_type: str) -> bool:
        """Whether `sender` may start, signal and read workflows of `workflow_type`."""
        types = self._senders[sender].types
        return ANY in types or workflow_type in types

    def admit_type(self, sender: str, workflow_type: str) -> None:
        """Raise `Refusal` 403 `forged_type` unless `sender` may address `workflow_type`."""
        if not self.admits_type(sender, workflow_type):
            detail = f"sender {sender!r} may not address {workflow_type!r}"
            raise Refusal(403, "forged_type", detail)

    def tenant(self, sender: str, claimed: str | None) -> str:
        """The tenant a signal of `sender` is for: `claimed` if the sender acts for it, the
        sender's one tenant if none is claimed. Raises `Refusal` 403 `forged_tenant`, or 400
        `tenant_required` when a sender of several tenants names none."""
        tenants = self._senders[sender].tenants
        if claimed is None:
            if len(tenants) != 1 or ANY in tenants:
                raise Refusal(400, "tenant_required", f"sender {sender!r} must name the tenant")
            return next(iter(tenants))
        if ANY not in tenants and claimed not in tenants:
            raise Refusal(403, "forged_tenant", f"sender {sender!r} may not act for that tenant")
        return claimed

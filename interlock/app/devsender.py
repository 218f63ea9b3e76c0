"""The embedded stack's development sender: with no `INTERLOCK_GATEWAY_SENDERS`, `interlock
up` on the embedded stack lets the gateway accept webhooks from the sender `dev`, signed with
a secret kept beside the installation's other secrets (`<secrets>/gateway.json`). A
deployment on its own NATS configures its senders itself: none is made up there."""

from __future__ import annotations

from pydantic import SecretStr

from interlock.config import access
from interlock.config.secrets import GATEWAY_FILE
from interlock.config.settings import GatewaySender, Settings

DEV_SENDER = "dev"
ANY = "*"


def with_dev_sender(settings: Settings) -> tuple[Settings, str]:
    """`settings` with the development sender when it has none (and runs the embedded
    broker), and a line saying so for the console ('' when nothing was added)."""
    if settings.gateway_senders or settings.nats_url is not None:
        return settings, ""
    secrets = access.secrets_of(settings)
    sender = GatewaySender(
        secret=SecretStr(secrets.webhook_secret(DEV_SENDER)),
        roles=frozenset(access.signing_roles_of(settings)),
        tenants=frozenset({ANY}),
        actors=frozenset({ANY}),
    )
    line = (
        f"gateway: development sender `{DEV_SENDER}` (any tenant, role and actor), its secret "
        f"in {secrets.directory / GATEWAY_FILE}; set INTERLOCK_GATEWAY_SENDERS for real ones"
    )
    return settings.model_copy(update={"gateway_senders": {DEV_SENDER: sender}}), line

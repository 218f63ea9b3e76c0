"""The outside systems the support workflow's stages call: an account API, a policy store, a
payment provider and a notifier, as the protocols its ports are typed by and the values they
exchange. Each says what it guarantees and how it fails, with Interlock's own errors
(`interlock.errors`): `ExternalTimeout` (no answer in time — a write may or may not have taken
effect), `ExternalUnavailable` (refused before doing anything), `ExternalRejected` (a
definitive "no"). Their default adapters call the simulators `interlock up` starts (`sim`).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict


class _Value(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class AccountSnapshot(_Value):
    account_ref: str
    customer_id: str
    status: Literal["active", "suspended", "closed"]
    currency: str
    refunds_last_90d: Decimal = Decimal(0)


class AccountApi(Protocol):
    async def inspect(self, customer_id: str) -> AccountSnapshot:
        """Read-only. `ExternalRejected(error_class="account_not_found")` if unknown."""
        ...


class PolicyDocument(_Value):
    policy_id: str
    policy_version: int
    category: str
    max_amount: Decimal
    allowed_actions: list[str]
    requires_active_account: bool = True


class PolicyStore(Protocol):
    async def current(self, category: str) -> PolicyDocument:
        """The current version of the policy for `category` (read-only)."""
        ...

    async def version(self, policy_id: str, version: int) -> PolicyDocument:
        """A specific, immutable version (what a recommendation was based on)."""
        ...


class ActionRequest(_Value):
    idempotency_key: str
    action_type: str
    customer_id: str
    amount: Decimal
    currency: str


class ActionReceipt(_Value):
    idempotency_key: str
    operation_id: str
    status: Literal["succeeded"]
    amount: Decimal
    currency: str


class ActionProvider(Protocol):
    async def execute(self, request: ActionRequest) -> ActionReceipt:
        """Perform the action at most once per idempotency key: a repeated key returns the
        original receipt. `ExternalTimeout` means the outcome is unknown."""
        ...

    async def lookup(self, idempotency_key: str) -> ActionReceipt | None:
        """The receipt of a past `execute` with this key, or None if none took effect."""
        ...

    async def reverse(self, idempotency_key: str, operation_id: str) -> str:
        """Reverse an executed action, idempotently per key; returns the reversal id."""
        ...


class Delivery(_Value):
    delivery_key: str
    notification_id: str
    channel: Literal["email", "sms"]


class Notifier(Protocol):
    async def send(
        self, delivery_key: str, customer_id: str, template: str, fields: dict[str, str]
    ) -> Delivery:
        """Deliver at most once per delivery key (a repeat returns the first delivery)."""
        ...

"""Instant adapters: the support workflow's outside systems answered in process, at once.

`interlock bench --work none` binds them (``{"adapter": "instant"}``) so that the figures
measure orchestration alone, as the peers' benchmarks do with steps that do nothing: no
simulator process, no round trip, no ledger. They answer as the simulator does on its
default data (every customer an active EUR account, the current policy of each category),
and remember nothing: a repeated action or notification gets a receipt derived from its
key, which is all the idempotency a stage can observe. Never for production.
"""

from __future__ import annotations

import hashlib
from decimal import Decimal

from interlock.errors import ExternalRejected
from interlock.workflows.support.systems import (
    AccountSnapshot,
    ActionReceipt,
    ActionRequest,
    Delivery,
    PolicyDocument,
)

# The simulator's current default policies (`simulators.schema.DEFAULT_POLICIES`).
_POLICIES = {
    "billing": ("refunds", 2, Decimal("250.00"), ["refund", "account_credit"]),
    "access": ("access-credits", 1, Decimal("50.00"), ["account_credit"]),
    "technical": ("tech-goodwill", 1, Decimal("30.00"), ["account_credit"]),
}


def _ref(prefix: str, key: str) -> str:
    return f"{prefix}-{hashlib.sha256(key.encode()).hexdigest()[:12]}"


class InstantAccounts:
    async def inspect(self, customer_id: str) -> AccountSnapshot:
        ref = _ref("acct", customer_id)
        return AccountSnapshot(
            account_ref=ref, customer_id=customer_id, status="active", currency="EUR"
        )


class InstantPolicies:
    async def current(self, category: str) -> PolicyDocument:
        found = _POLICIES.get(category)
        if found is None:
            raise ExternalRejected(f"no policy for {category}", error_class="policy_not_found")
        policy_id, version, max_amount, actions = found
        return PolicyDocument(
            policy_id=policy_id,
            policy_version=version,
            category=category,
            max_amount=max_amount,
            allowed_actions=actions,
        )

    async def version(self, policy_id: str, version: int) -> PolicyDocument:
        for category, (known, current, _, _) in _POLICIES.items():
            if known == policy_id and current == version:
                return await self.current(category)
        raise ExternalRejected(f"no policy {policy_id} v{version}", error_class="policy_not_found")


class InstantActions:
    async def execute(self, request: ActionRequest) -> ActionReceipt:
        return ActionReceipt(
            idempotency_key=request.idempotency_key,
            operation_id=_ref("op", request.idempotency_key),
            status="succeeded",
            amount=request.amount,
            currency=request.currency,
        )

    async def lookup(self, idempotency_key: str) -> ActionReceipt | None:
        return None

    async def reverse(self, idempotency_key: str, operation_id: str) -> str:
        return _ref("rev", idempotency_key)


class InstantNotifier:
    async def send(
        self, delivery_key: str, customer_id: str, template: str, fields: dict[str, str]
    ) -> Delivery:
        return Delivery(
            delivery_key=delivery_key, notification_id=_ref("ntf", delivery_key), channel="email"
        )

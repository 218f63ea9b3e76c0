"""The support systems' default adapters: clients of the simulators `interlock up` starts,
over NATS request/reply (the wire protocol and its error translation are
`interlock.simulated`'s `SimAdapter`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar

from interlock.simulated import (
    ACCOUNT_INSPECT,
    ACTION_EXECUTE,
    ACTION_LOOKUP,
    ACTION_REVERSE,
    NOTIFY_SEND,
    POLICY_CURRENT,
    POLICY_VERSION,
    SimAdapter,
    reversal_id,
)
from interlock.workflows.support.systems import (
    AccountSnapshot,
    ActionReceipt,
    ActionRequest,
    Delivery,
    PolicyDocument,
)

_on_behalf_of: ContextVar[str | None] = ContextVar("interlock_sim_on_behalf_of", default=None)


@contextmanager
def acting_for(customer_id: str) -> Iterator[None]:
    """Policy reads made in this context carry `customer_id`.

    `PolicyStore` calls name no customer, yet the simulator injects policy faults per
    customer; a caller that wants those faults to apply wraps its policy calls in this.
    """
    token = _on_behalf_of.set(customer_id)
    try:
        yield
    finally:
        _on_behalf_of.reset(token)


class SimAccountApi(SimAdapter):
    """`AccountApi` over `sim.account.inspect`."""

    async def inspect(self, customer_id: str) -> AccountSnapshot:
        request = {"customer_id": customer_id}
        return await self._call(ACCOUNT_INSPECT, request, AccountSnapshot.model_validate)


class SimPolicyStore(SimAdapter):
    """`PolicyStore` over `sim.policy.*`; sends the customer named by `acting_for`, if any."""

    async def current(self, category: str) -> PolicyDocument:
        request = {"category": category, "customer_id": _on_behalf_of.get()}
        return await self._call(POLICY_CURRENT, request, PolicyDocument.model_validate)

    async def version(self, policy_id: str, version: int) -> PolicyDocument:
        request = {"policy_id": policy_id, "version": version, "customer_id": _on_behalf_of.get()}
        return await self._call(POLICY_VERSION, request, PolicyDocument.model_validate)


class SimActionProvider(SimAdapter):
    """`ActionProvider` over `sim.action.*`; the simulator deduplicates by idempotency key."""

    async def execute(self, request: ActionRequest) -> ActionReceipt:
        body = request.model_dump(mode="json")
        return await self._call(ACTION_EXECUTE, body, ActionReceipt.model_validate)

    async def lookup(self, idempotency_key: str) -> ActionReceipt | None:
        request = {"idempotency_key": idempotency_key}
        return await self._call(ACTION_LOOKUP, request, _receipt_or_none)

    async def reverse(self, idempotency_key: str, operation_id: str) -> str:
        request = {"idempotency_key": idempotency_key, "operation_id": operation_id}
        return await self._call(ACTION_REVERSE, request, reversal_id)


class SimNotifier(SimAdapter):
    """`Notifier` over `sim.notify.send`; the simulator deduplicates by delivery key."""

    async def send(
        self, delivery_key: str, customer_id: str, template: str, fields: dict[str, str]
    ) -> Delivery:
        request = {
            "delivery_key": delivery_key,
            "customer_id": customer_id,
            "template": template,
            "fields": fields,
        }
        return await self._call(NOTIFY_SEND, request, Delivery.model_validate)


def _receipt_or_none(result: Mapping[str, object]) -> ActionReceipt | None:
    receipt = result.get("receipt")
    return None if receipt is None else ActionReceipt.model_validate(receipt)

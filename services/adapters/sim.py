"""Adapters for the simulated external systems, reached over core NATS request/reply.

This module is also the single definition of the wire protocol: the simulator
(`interlock.simulators`) serves these subjects in the queue group `QUEUE_GROUP`. Requests are
JSON objects; every reply is one of

    {"ok": true, "result": {...}}
    {"ok": false, "error": "unavailable" | "rejected", "error_class": "...", "detail": "..."}

Amounts travel as decimal strings ("12.50"). The adapters translate failures alike:

- no reply in time → `ExternalTimeout` (for a write the outcome is unknown: reconcile);
- no responders, or a connection that cannot send → `ExternalUnavailable` (nothing sent);
- error `unavailable` → `ExternalUnavailable`; `rejected` → `ExternalRejected(error_class)`;
- a reply that cannot be read → `ExternalTimeout`: an answer we cannot interpret tells us
  no more than silence, so the caller must reconcile exactly as after a timeout.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

from nats.aio.client import Client
from nats.errors import (
    ConnectionClosedError,
    ConnectionDrainingError,
    ConnectionReconnectingError,
    NoRespondersError,
    OutboundBufferLimitError,
)
from nats.errors import Error as NatsError
from opentelemetry import trace

from interlock.otel.messaging import client_span
from interlock.otel.propagation import inject
from interlock.services.errors import ExternalRejected, ExternalTimeout, ExternalUnavailable
from interlock.services.ports import (
    AccountSnapshot,
    ActionReceipt,
    ActionRequest,
    Delivery,
    EffectReceipt,
    EffectRequest,
    PolicyDocument,
)

tracer = trace.get_tracer("interlock.adapters")

QUEUE_GROUP = "sim"
ACCOUNT_INSPECT = "sim.account.inspect"
"""{customer_id} → AccountSnapshot fields."""
POLICY_CURRENT = "sim.policy.current"
"""{category, customer_id?} → PolicyDocument fields."""
POLICY_VERSION = "sim.policy.version"
"""{policy_id, version, customer_id?} → PolicyDocument fields."""
ACTION_EXECUTE = "sim.action.execute"
"""ActionRequest fields → ActionReceipt fields."""
ACTION_LOOKUP = "sim.action.lookup"
"""{idempotency_key} → {receipt: ActionReceipt fields | null}."""
ACTION_REVERSE = "sim.action.reverse"
"""{idempotency_key, operation_id} → {reversal_id}."""
NOTIFY_SEND = "sim.notify.send"
"""{delivery_key, customer_id, template, fields} → Delivery fields."""
EFFECT_EXECUTE = "sim.effect.execute"
"""EffectRequest fields → EffectReceipt fields."""
EFFECT_LOOKUP = "sim.effect.lookup"
"""{idempotency_key} → {receipt: EffectReceipt fields | null}."""
EFFECT_REVERSE = "sim.effect.reverse"
"""{idempotency_key, operation_id} → {reversal_id}."""
ERROR_UNAVAILABLE = "unavailable"
ERROR_REJECTED = "rejected"
DEFAULT_TIMEOUT = 2.0

# Raised before the request left this process, so nothing can have been done.
_NOT_SENT = (
    NoRespondersError,
    ConnectionClosedError,
    ConnectionDrainingError,
    ConnectionReconnectingError,
    OutboundBufferLimitError,
)
_on_behalf_of: ContextVar[str | None] = ContextVar("interlock_sim_on_behalf_of", default=None)
T = TypeVar("T")


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


class _SimAdapter:
    """The request/reply helper the adapters share: one place for error translation."""

    def __init__(self, nc: Client, timeout: float = DEFAULT_TIMEOUT) -> None:
        if timeout <= 0:
            raise ValueError(f"timeout must be positive seconds, got {timeout}")
        self._nc = nc
        self._timeout = timeout

    async def _call(
        self, subject: str, request: dict[str, Any], parse: Callable[[dict[str, Any]], T]
    ) -> T:
        """Send one request and return its parsed `result`, or raise the port's error."""
        with client_span(tracer, subject):
            return await self._exchange(subject, request, parse)

    async def _exchange(
        self, subject: str, request: dict[str, Any], parse: Callable[[dict[str, Any]], T]
    ) -> T:
        try:
            msg = await self._nc.request(
                subject, json.dumps(request).encode(), timeout=self._timeout, headers=inject()
            )
        except _NOT_SENT as exc:
            raise ExternalUnavailable(
                f"{subject}: not sent ({type(exc).__name__})",
                hint="is the simulator running and NATS reachable?",
            ) from exc
        except NatsError as exc:  # TimeoutError, or any failure after the request left
            raise ExternalTimeout(
                f"{subject}: no answer within {self._timeout}s",
                hint="the outcome is unknown; reconcile by key before retrying a write",
            ) from exc
        result = _result(subject, msg.data)
        try:
            return parse(result)
        except ValueError as exc:  # pydantic's ValidationError is a ValueError too
            raise _unreadable(subject) from exc


class SimAccountApi(_SimAdapter):
    """`AccountApi` over `sim.account.inspect`."""

    async def inspect(self, customer_id: str) -> AccountSnapshot:
        request = {"customer_id": customer_id}
        return await self._call(ACCOUNT_INSPECT, request, AccountSnapshot.model_validate)


class SimPolicyStore(_SimAdapter):
    """`PolicyStore` over `sim.policy.*`; sends the customer named by `acting_for`, if any."""

    async def current(self, category: str) -> PolicyDocument:
        request = {"category": category, "customer_id": _on_behalf_of.get()}
        return await self._call(POLICY_CURRENT, request, PolicyDocument.model_validate)

    async def version(self, policy_id: str, version: int) -> PolicyDocument:
        request = {"policy_id": policy_id, "version": version, "customer_id": _on_behalf_of.get()}
        return await self._call(POLICY_VERSION, request, PolicyDocument.model_validate)


class SimActionProvider(_SimAdapter):
    """`ActionProvider` over `sim.action.*`; the simulator deduplicates by idempotency key."""

    async def execute(self, request: ActionRequest) -> ActionReceipt:
        body = request.model_dump(mode="json")
        return await self._call(ACTION_EXECUTE, body, ActionReceipt.model_validate)

    async def lookup(self, idempotency_key: str) -> ActionReceipt | None:
        request = {"idempotency_key": idempotency_key}
        return await self._call(ACTION_LOOKUP, request, _receipt_or_none)

    async def reverse(self, idempotency_key: str, operation_id: str) -> str:
        request = {"idempotency_key": idempotency_key, "operation_id": operation_id}
        return await self._call(ACTION_REVERSE, request, _reversal_id)


class SimNotifier(_SimAdapter):
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


class SimEffectProvider(_SimAdapter):
    """`EffectProvider` over `sim.effect.*`; the simulator deduplicates by idempotency key."""

    async def execute(self, request: EffectRequest) -> EffectReceipt:
        body = request.model_dump(mode="json")
        return await self._call(EFFECT_EXECUTE, body, EffectReceipt.model_validate)

    async def lookup(self, idempotency_key: str) -> EffectReceipt | None:
        request = {"idempotency_key": idempotency_key}
        return await self._call(EFFECT_LOOKUP, request, _effect_or_none)

    async def reverse(self, idempotency_key: str, operation_id: str) -> str:
        request = {"idempotency_key": idempotency_key, "operation_id": operation_id}
        return await self._call(EFFECT_REVERSE, request, _reversal_id)


def _result(subject: str, data: bytes) -> dict[str, Any]:
    try:
        reply = json.loads(data)
    except ValueError:
        reply = None
    if not isinstance(reply, dict):
        raise _unreadable(subject)
    result = reply.get("result")
    if reply.get("ok") is True and isinstance(result, dict):
        return result
    error_class, detail = str(reply.get("error_class", "")), str(reply.get("detail", ""))
    if reply.get("error") == ERROR_UNAVAILABLE:
        raise ExternalUnavailable(f"{subject}: {error_class}: {detail}", hint="retry later")
    if reply.get("error") == ERROR_REJECTED:
        raise ExternalRejected(f"{subject} rejected: {detail}", error_class=error_class)
    raise _unreadable(subject)


def _receipt_or_none(result: dict[str, Any]) -> ActionReceipt | None:
    receipt = result.get("receipt")
    return None if receipt is None else ActionReceipt.model_validate(receipt)


def _effect_or_none(result: dict[str, Any]) -> EffectReceipt | None:
    receipt = result.get("receipt")
    return None if receipt is None else EffectReceipt.model_validate(receipt)


def _reversal_id(result: dict[str, Any]) -> str:
    reversal_id = result.get("reversal_id")
    if not isinstance(reversal_id, str) or not reversal_id:
        raise ValueError("no reversal id in the result")
    return reversal_id


def _unreadable(subject: str) -> ExternalTimeout:
    return ExternalTimeout(
        f"{subject}: unreadable reply",
        hint="the outcome is unknown; reconcile by key before retrying a write",
    )

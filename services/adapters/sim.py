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
from collections.abc import Callable, Mapping
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
from interlock.services.ports import EffectReceipt, EffectRequest

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
T = TypeVar("T")


class SimAdapter:
    """The request/reply helper a simulated system's adapter derives from: one place for the
    error translation (see the module docstring). A subclass calls `_call(subject, request,
    parse)` per method."""

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


class SimEffectProvider(SimAdapter):
    """`EffectProvider` over `sim.effect.*`; the simulator deduplicates by idempotency key."""

    async def execute(self, request: EffectRequest) -> EffectReceipt:
        body = request.model_dump(mode="json")
        return await self._call(EFFECT_EXECUTE, body, EffectReceipt.model_validate)

    async def lookup(self, idempotency_key: str) -> EffectReceipt | None:
        request = {"idempotency_key": idempotency_key}
        return await self._call(EFFECT_LOOKUP, request, _effect_or_none)

    async def reverse(self, idempotency_key: str, operation_id: str) -> str:
        request = {"idempotency_key": idempotency_key, "operation_id": operation_id}
        return await self._call(EFFECT_REVERSE, request, reversal_id)


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


def _effect_or_none(result: dict[str, Any]) -> EffectReceipt | None:
    receipt = result.get("receipt")
    return None if receipt is None else EffectReceipt.model_validate(receipt)


def reversal_id(result: Mapping[str, object]) -> str:
    """The reversal id a `reverse` call answers (a reply without one cannot be read)."""
    reversal_id = result.get("reversal_id")
    if not isinstance(reversal_id, str) or not reversal_id:
        raise ValueError("no reversal id in the result")
    return reversal_id


def _unreadable(subject: str) -> ExternalTimeout:
    return ExternalTimeout(
        f"{subject}: unreadable reply",
        hint="the outcome is unknown; reconcile by key before retrying a write",
    )

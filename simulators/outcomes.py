"""What one simulator call comes to: a reply (or deliberate silence) and a logged outcome,
plus the server side of request parsing.

Replies follow the protocol in `services.adapters.sim`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from interlock.services.adapters.sim import ERROR_REJECTED, ERROR_UNAVAILABLE
from interlock.simulators.db import Connection
from interlock.simulators.faults import Step, take_step

# Error classes of `rejected` replies; callers match on these strings.
ACCOUNT_NOT_FOUND = "account_not_found"
ACCOUNT_INACTIVE = "account_inactive"
CURRENCY_MISMATCH = "currency_mismatch"
INVALID_AMOUNT = "invalid_amount"
UNSUPPORTED_ACTION = "unsupported_action"
POLICY_NOT_FOUND = "policy_not_found"
ACTION_NOT_FOUND = "action_not_found"
OPERATION_MISMATCH = "operation_mismatch"
REVERSAL_REFUSED = "reversal_refused"
ACTION_REFUSED = "action_refused"
UNDELIVERABLE = "undeliverable"
BAD_REQUEST = "bad_request"
INJECTED_OUTAGE = "injected_outage"
"""The error class of an `unavailable` reply caused by a fault plan."""


class BadRequest(ValueError):
    """The request is not a valid message of its subject; answered `rejected/bad_request`."""


@dataclass(frozen=True)
class Call:
    """One call as the `sim.calls` log records it."""

    operation: str
    customer_id: str | None
    key: str | None

    def ok(self, result: dict[str, Any], outcome: str = "ok") -> Outcome:
        return Outcome(self, {"ok": True, "result": result}, outcome)

    def rejected(self, error_class: str, detail: str) -> Outcome:
        reply = error_reply(ERROR_REJECTED, error_class, detail)
        return Outcome(self, reply, f"rejected:{error_class}")

    def unavailable(self, detail: str) -> Outcome:
        reply = error_reply(ERROR_UNAVAILABLE, INJECTED_OUTAGE, detail)
        return Outcome(self, reply, "unavailable")

    def silent(self, outcome: str) -> Outcome:
        return Outcome(self, None, outcome)


@dataclass(frozen=True)
class Outcome:
    call: Call
    reply: dict[str, Any] | None
    """None: send nothing, so the caller times out."""
    outcome: str


def error_reply(error: str, error_class: str, detail: str) -> dict[str, Any]:
    return {"ok": False, "error": error, "error_class": error_class, "detail": detail}


async def gate(conn: Connection, call: Call) -> tuple[Step, Outcome | None]:
    """Take the call's next fault step. Returns the step and, when the step ends the call
    before any effect (`timeout`, `unavailable`), its outcome; `latency` sleeps here."""
    step = await take_step(conn, call.customer_id, call.operation)
    if step.kind == "timeout":
        return step, call.silent("timeout")
    if step.kind == "unavailable":
        return step, call.unavailable("injected outage; nothing was done")
    if step.kind == "latency":
        await asyncio.sleep(step.delay_ms / 1000)
    return step, None


def text(body: dict[str, Any], field: str) -> str:
    """The non-empty string `body[field]`, or `BadRequest`."""
    value = body.get(field)
    if not isinstance(value, str) or not value:
        raise BadRequest(f"{field} must be a non-empty string")
    return value


def optional_text(body: dict[str, Any], field: str) -> str | None:
    return None if body.get(field) is None else text(body, field)


def integer(body: dict[str, Any], field: str) -> int:
    value = body.get(field)
    if not isinstance(value, int) or isinstance(value, bool):
        raise BadRequest(f"{field} must be an integer")
    return value

"""Fault plans: per customer and operation, a list of steps consumed one per call.

A step decides how the simulator misbehaves on that call; once the list is exhausted the
simulator behaves normally. The cursor advances inside the call's own transaction, so a
step is consumed exactly when the call's effect (if any) commits.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from interlock.simulators.db import Connection

log = logging.getLogger("interlock.sim")

OPERATIONS = ("inspect", "execute", "reverse", "notify", "policy", "effect", "effect_reverse")
"""`effect`/`effect_reverse`: the internal-effects provider's, planned per workflow id."""
_COMMON = frozenset({"ok", "timeout", "unavailable"})
_SPECIFIC: dict[str, frozenset[str]] = {
    "execute": frozenset({"lose_response", "mismatch", "refuse"}),
    "reverse": frozenset({"fail"}),
    "notify": frozenset({"fail"}),
    "effect_reverse": frozenset({"fail"}),
}

_TAKE = """
UPDATE sim.fault_plans SET cursor = cursor + 1
WHERE customer_id = $1 AND operation = $2 AND cursor < jsonb_array_length(steps)
RETURNING steps ->> (cursor - 1)
"""
_SET = """
INSERT INTO sim.fault_plans (customer_id, operation, steps, cursor) VALUES ($1, $2, $3, 0)
ON CONFLICT (customer_id, operation) DO UPDATE SET steps = excluded.steps, cursor = 0
"""


@dataclass(frozen=True)
class Step:
    """One planned behaviour: `ok`, `timeout`, `unavailable`, `latency` (with `delay_ms`),
    or an operation's own kind (`lose_response`, `mismatch`, `refuse`, `fail`)."""

    kind: str
    delay_ms: float = 0.0


NORMAL = Step("ok")


def parse_step(operation: str, text: str) -> Step:
    """Parse `text` as a step of `operation`; raise `ValueError` naming what is allowed."""
    kind, _, argument = text.partition(":")
    if kind == "latency":
        try:
            delay_ms = float(argument)
        except ValueError:
            delay_ms = math.nan
        if not math.isfinite(delay_ms) or delay_ms < 0:
            raise ValueError(f"{text!r} is not a latency; use latency:<ms>, e.g. latency:250")
        return Step("latency", delay_ms)
    allowed = _COMMON | _SPECIFIC.get(operation, frozenset())
    if argument or kind not in allowed:
        raise ValueError(
            f"{text!r} is not a step of {operation!r}; use latency:<ms> or one of {sorted(allowed)}"
        )
    return Step(kind)


def check_plans(faults: Mapping[str, Sequence[str]]) -> None:
    """Raise `ValueError` unless every operation and step in `faults` is known."""
    for operation, steps in faults.items():
        if operation not in OPERATIONS:
            raise ValueError(f"unknown operation {operation!r}; use one of {OPERATIONS}")
        for text in steps:
            parse_step(operation, text)


async def take_step(conn: Connection, customer_id: str | None, operation: str) -> Step:
    """Consume and return the next step for this customer and operation (in the caller's
    transaction, whose commit or rollback it shares); `NORMAL` when none is planned."""
    if customer_id is None:
        return NORMAL
    text = await conn.fetchval(_TAKE, customer_id, operation)
    if text is None:
        return NORMAL
    try:
        return parse_step(operation, str(text))
    except ValueError:
        # Plans written around `set_plans` are not validated; misbehaving is worse than
        # ignoring the step, so the call proceeds normally.
        log.warning("ignoring invalid %s fault step for customer %s", operation, customer_id)
        return NORMAL


async def set_plans(
    conn: Connection, customer_id: str, faults: Mapping[str, Sequence[str]]
) -> None:
    """Replace the plans named in `faults` (cursor back to the start); others stay."""
    check_plans(faults)
    for operation, steps in faults.items():
        await conn.execute(_SET, customer_id, operation, json.dumps(list(steps)))

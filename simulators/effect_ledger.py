"""The internal-effects provider: follow-ups, account review queue entries and internal
notifications, one ledger row per idempotency key in `sim.effects`.

Each row records the workflow it belongs to and the authority it was executed under
(`authorized_by`), so the ledger alone can be audited against the workflow store: every
effect should point at the transition that authorised it. Guarantee: one effect per key,
whatever the number or overlap of calls (a repeat returns the first receipt, outcome
`duplicate`), and one reversal per key. Effects name no customer: their fault plans
(`effect`, `effect_reverse`: `timeout`, `unavailable`, and `fail` for a reversal) are planned
per workflow id (`plan_effect_faults`), which the call log records in place of a customer.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from interlock.services.ports import EffectReceipt, EffectRequest
from interlock.simulators.db import Connection, Target, connection
from interlock.simulators.ledger import new_id
from interlock.simulators.outcomes import (
    ACTION_NOT_FOUND,
    OPERATION_MISMATCH,
    REVERSAL_REFUSED,
    BadRequest,
    Call,
    Outcome,
    gate,
    text,
)
from interlock.simulators.schema import ensure_schema
from interlock.workflows.request.payloads import EFFECTS

UNSUPPORTED_EFFECT = "unsupported_effect"
_INSERT = """
INSERT INTO sim.effects (idempotency_key, operation_id, workflow_id, effect, authorized_by)
VALUES ($1, $2, $3, $4, $5::jsonb)
ON CONFLICT (idempotency_key) DO NOTHING
RETURNING *
"""
_FIND = "SELECT * FROM sim.effects WHERE idempotency_key = $1"
_FIND_FOR_UPDATE = _FIND + " FOR UPDATE"
_REVERSE = """
UPDATE sim.effects SET reversal_id = $2, reversed_at = now() WHERE idempotency_key = $1
"""


async def execute(conn: Connection, body: dict[str, Any]) -> Outcome:
    """`sim.effect.execute`: perform the effect once per key; a repeat gets the original
    receipt. A concurrent insert of the same key waits for the other transaction, then
    returns its row."""
    try:
        request = EffectRequest.model_validate(body)
    except ValidationError as exc:
        raise BadRequest(f"not an effect request: {exc.error_count()} errors") from exc
    call = Call("effect", request.workflow_id, request.idempotency_key)
    if request.effect not in EFFECTS:
        return call.rejected(UNSUPPORTED_EFFECT, f"effect must be one of {list(EFFECTS)}")
    _, early = await gate(conn, call)
    if early is not None:
        return early
    row = await conn.fetchrow(
        _INSERT,
        request.idempotency_key,
        new_id("eff"),
        request.workflow_id,
        request.effect,
        json.dumps(request.authorized_by),
    )
    outcome = "ok" if row is not None else "duplicate"
    row = row if row is not None else await conn.fetchrow(_FIND, request.idempotency_key)
    return call.ok(_receipt(row).model_dump(mode="json"), outcome)


async def lookup(conn: Connection, body: dict[str, Any]) -> Outcome:
    """`sim.effect.lookup`: `{"receipt": …}` of the effect under this key, or null."""
    key = text(body, "idempotency_key")
    row = await conn.fetchrow(_FIND, key)
    call = Call("effect_lookup", None, key)
    if row is None:
        return call.ok({"receipt": None}, "not_found")
    return call.ok({"receipt": _receipt(row).model_dump(mode="json")})


async def reverse(conn: Connection, body: dict[str, Any]) -> Outcome:
    """`sim.effect.reverse`: undo the effect under this key once; a repeat returns the same
    reversal id (outcome `duplicate`)."""
    key, operation_id = text(body, "idempotency_key"), text(body, "operation_id")
    row = await conn.fetchrow(_FIND_FOR_UPDATE, key)
    if row is None:
        return Call("effect_reverse", None, key).rejected(
            ACTION_NOT_FOUND, "no effect under this key"
        )
    call = Call("effect_reverse", row["workflow_id"], key)
    step, early = await gate(conn, call)
    if early is not None:
        return early
    if step.kind == "fail":
        return call.rejected(REVERSAL_REFUSED, "the provider refused the reversal")
    if row["operation_id"] != operation_id:
        return call.rejected(OPERATION_MISMATCH, "operation id does not match the key")
    if row["reversal_id"] is not None:
        return call.ok({"reversal_id": row["reversal_id"]}, "duplicate")
    reversal_id = new_id("rev")
    await conn.execute(_REVERSE, key, reversal_id)
    return call.ok({"reversal_id": reversal_id})


async def effect_rows(target: Target, workflow_ids: Sequence[str]) -> list[dict[str, Any]]:
    """The ledger rows of these workflows, oldest first: `{idempotency_key, operation_id,
    workflow_id, effect, authorized_by, created_at}` (read directly, not over NATS)."""
    async with connection(target) as conn:
        await ensure_schema(conn)
        rows = await conn.fetch(
            "SELECT * FROM sim.effects WHERE workflow_id = ANY($1::text[])"
            " ORDER BY created_at, idempotency_key",
            list(workflow_ids),
        )
    return [{**dict(row), "authorized_by": json.loads(row["authorized_by"])} for row in rows]


def _receipt(row: Any) -> EffectReceipt:
    return EffectReceipt(
        idempotency_key=row["idempotency_key"],
        operation_id=row["operation_id"],
        workflow_id=row["workflow_id"],
        effect=row["effect"],
    )

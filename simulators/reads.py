"""Handlers of the read-only subjects: account inspection, policies, action lookup.

Each handler runs inside the call's transaction and returns its `Outcome`; faults apply
per customer (`inspect`, `policy`); `lookup` is never faulted, so reconciliation works
while the provider misbehaves.
"""

from __future__ import annotations

from typing import Any

from interlock.simulators import ledger
from interlock.simulators.db import Connection
from interlock.simulators.outcomes import (
    ACCOUNT_NOT_FOUND,
    POLICY_NOT_FOUND,
    Call,
    Outcome,
    gate,
    integer,
    optional_text,
    text,
)
from interlock.workflows.support.systems import PolicyDocument


async def inspect(conn: Connection, body: dict[str, Any]) -> Outcome:
    """`sim.account.inspect`: the account, auto-provisioned unless `missing-…`."""
    customer_id = text(body, "customer_id")
    call = Call("inspect", customer_id, customer_id)
    _, early = await gate(conn, call)
    if early is not None:
        return early
    account = await ledger.account(conn, customer_id)
    if account is None:
        return call.rejected(ACCOUNT_NOT_FOUND, f"no account for customer {customer_id}")
    return call.ok(account.model_dump(mode="json"))


async def policy_current(conn: Connection, body: dict[str, Any]) -> Outcome:
    """`sim.policy.current`: the current version of the category's policy."""
    category = text(body, "category")
    call = Call("policy", optional_text(body, "customer_id"), category)
    _, early = await gate(conn, call)
    if early is not None:
        return early
    return _policy_outcome(call, await ledger.current_policy(conn, category))


async def policy_version(conn: Connection, body: dict[str, Any]) -> Outcome:
    """`sim.policy.version`: one immutable version of a policy."""
    policy_id, version = text(body, "policy_id"), integer(body, "version")
    call = Call("policy", optional_text(body, "customer_id"), f"{policy_id}@v{version}")
    _, early = await gate(conn, call)
    if early is not None:
        return early
    return _policy_outcome(call, await ledger.policy_version(conn, policy_id, version))


async def lookup(conn: Connection, body: dict[str, Any]) -> Outcome:
    """`sim.action.lookup`: `{"receipt": …}` of the action under this key, or null."""
    key = text(body, "idempotency_key")
    stored = await ledger.find_action(conn, key)
    if stored is None:
        return Call("lookup", None, key).ok({"receipt": None}, "not_found")
    receipt = stored.receipt.model_dump(mode="json")
    return Call("lookup", stored.customer_id, key).ok({"receipt": receipt})


def _policy_outcome(call: Call, policy: PolicyDocument | None) -> Outcome:
    if policy is None:
        return call.rejected(POLICY_NOT_FOUND, f"no policy {call.key}")
    return call.ok(policy.model_dump(mode="json"))

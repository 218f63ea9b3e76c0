"""Reconcile-first execution of an effect under an idempotency key, shared by every workflow.

The key is a function of the workflow and the operation, never minted per attempt, so the
first call, a retry after a timeout and a redelivery after a crash all name the same
effect. Each attempt looks the key up before acting and again after an ambiguous call;
only when the provider shows nothing does it act. The provider guarantees at most one
effect per key; this module guarantees we never ask it for a second key.
"""

from __future__ import annotations

from typing import Protocol, TypeVar

from interlock.services.errors import ExternalTimeout, OutcomeUnknown

RequestT_contra = TypeVar("RequestT_contra", contravariant=True)
ReceiptT_co = TypeVar("ReceiptT_co", covariant=True)
Req = TypeVar("Req")
Rec = TypeVar("Rec")


class KeyedEffects(Protocol[RequestT_contra, ReceiptT_co]):
    """A provider that deduplicates by idempotency key (`EffectProvider`, or the support
    workflow's `ActionProvider`)."""

    async def execute(self, request: RequestT_contra) -> ReceiptT_co: ...

    async def lookup(self, idempotency_key: str) -> ReceiptT_co | None: ...


async def execute_once(
    provider: KeyedEffects[Req, Rec], key: str, request: Req
) -> tuple[Rec, bool]:
    """`(receipt, reconciled)`: the effect under `key`, performed now or found on record.

    Raises `OutcomeUnknown` when the call timed out and the key shows nothing yet (the caller
    must retry later with the same key, never a fresh one); `ExternalUnavailable` and
    `ExternalRejected` from the provider pass through (nothing was done).
    """
    found = await provider.lookup(key)
    if found is not None:
        return found, True
    try:
        return await provider.execute(request), False
    except ExternalTimeout:
        found = await provider.lookup(key)
        if found is None:
            raise OutcomeUnknown(
                f"no answer and no receipt for {key}", idempotency_key=key
            ) from None
        return found, True

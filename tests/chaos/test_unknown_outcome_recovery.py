"""An effect whose outcome stays unknown, through the whole stack and the CLI: the action
stage gives up after its last delivery (`effect_outcome_unknown`, with the key), the workflow
waits in review showing the key, and `interlock effect` confirms the receipt found at the
provider, runs the refund again under the same key, or compensates it.

The stack's open-job sweeper is given a bound longer than the test, so the job's deliveries
are the stage's own (a re-dispatched job would restart their count and the stage would never
give up)."""

from __future__ import annotations

import asyncio
import json

import pytest

from interlock.simulators import seed_customer
from interlock.tools.demo.runner import Run
from tests.support.chaos_stack import Stack
from tests.support.effect_cli import in_review, interlock

pytestmark = pytest.mark.timeout(300)
UNANSWERED = ["timeout"] * 40
"""Every execution times out with nothing under its key, longer than the stage tries."""


async def _three_unknown(stack: Stack) -> list[Run]:
    runs = await asyncio.gather(*(in_review(stack, {"execute": UNANSWERED}) for _ in range(3)))
    for run in runs:  # the provider answers from now on
        await seed_customer(stack.dsn, run.customer_id, faults={"execute": []})
    return list(runs)


async def test_an_unknown_refund_is_shown_confirmed_rerun_or_compensated(
    quiet_sweeper_stack: Stack,
) -> None:
    stack = quiet_sweeper_stack
    confirmed, rerun, compensated = await _three_unknown(stack)
    _, shown = await interlock(stack, "show", rerun.workflow_id)
    (refund,) = [e for e in shown["effects"] if e["state"] == "EXECUTING_ACTION"]
    assert refund["status"] == "unknown"
    assert refund["idempotency_key"].startswith("support-action:")
    receipt = json.dumps(
        {
            "idempotency_key": refund["idempotency_key"],
            "provider_operation_id": "op-found-by-hand",
            "status": "succeeded",
            "amount": "20.00",
            "currency": "EUR",
            "reconciled": True,
        }
    )

    decisions = await asyncio.gather(
        interlock(stack, "effect", confirmed.workflow_id, "confirm", "--receipt", receipt),
        interlock(stack, "effect", rerun.workflow_id, "rerun"),
        interlock(stack, "effect", compensated.workflow_id, "compensate"),
    )

    assert [(code, d.get("to_state")) for code, d in decisions] == [
        (0, "NOTIFYING_CUSTOMER"),
        (0, "EXECUTING_ACTION"),
        (0, "COMPENSATING"),
    ]
    done = await asyncio.gather(
        asyncio.wait_for(confirmed.wait_state("COMPLETED"), 60),
        asyncio.wait_for(rerun.wait_state("COMPLETED"), 60),
        asyncio.wait_for(compensated.wait_state("FAILED_COMPENSATED"), 60),
    )
    assert done[0]["data"]["action"]["provider_operation_id"] == "op-found-by-hand"
    assert await stack.effects(confirmed) == 0  # confirming records; it refunds nothing
    assert await stack.effects(rerun) == 1
    assert done[2]["execution"]["effects"]["EXECUTING_ACTION"]["status"] == "compensated"

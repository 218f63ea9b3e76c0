"""Every path after the refund tells the truth, through the whole stack and the CLI: a refund
whose notification failed is compensated when cancelled, never `CANCELLED` with the refund
standing, and a reviewer cannot reject it."""

from __future__ import annotations

import asyncio
import json

import pytest

from interlock.simulators import reversal_count
from tests.support.chaos_stack import Stack
from tests.support.effect_cli import in_review, interlock

pytestmark = pytest.mark.timeout(240)


async def test_a_cancel_after_the_refund_compensates_it(stack: Stack) -> None:
    run = await in_review(stack, {"notify": ["fail"]})

    code, decided = await interlock(stack, "cancel", run.workflow_id)

    assert (code, decided.get("to_state")) == (0, "COMPENSATING"), json.dumps(decided)
    done = await asyncio.wait_for(run.wait_state("FAILED_COMPENSATED", "CANCELLED"), 60)
    assert done["state"] == "FAILED_COMPENSATED"
    assert await reversal_count(stack.dsn, customer_id=run.customer_id) == 1


async def test_a_reviewers_reject_after_the_refund_is_refused(stack: Stack) -> None:
    run = await in_review(stack, {"notify": ["fail"]})

    code, decided = await interlock(stack, "reject", run.workflow_id, "--role", "operator")

    assert (code, decided["reason"]) == (3, "guard_rejected")
    view = await run.view()
    assert view is not None
    assert view["state"] == "MANUAL_REVIEW"

"""Every path after the refund tells the truth, through the whole stack and the CLI: a refund
whose notification failed is compensated when cancelled, never `CANCELLED` with the refund
standing, and a reviewer cannot reject it; a refund whose outcome is unknown is confirmed,
run again under the same key, or compensated by `interlock effect`."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from interlock.simulators import reversal_count
from interlock.tools.demo.runner import Run, approve
from tests.support.chaos_stack import Stack
from tests.support.cli import cli, cli_env

pytestmark = pytest.mark.timeout(240)
UNANSWERED = ["timeout"] * 6
"""Every delivery of the action job times out and finds nothing under its key: the stage
gives up on an unknown outcome."""


def _env(stack: Stack) -> dict[str, str]:
    return cli_env(
        stack.home,
        INTERLOCK_NATS_URL=stack.nats_url,
        INTERLOCK_DATABASE_URL=stack.dsn,
    )


async def _interlock(stack: Stack, *args: str) -> tuple[int, dict[str, Any]]:
    code, out = await cli(_env(stack), *args, "--json")
    return code, json.loads(out)


async def _in_review(stack: Stack, faults: dict[str, list[str]]) -> Run:
    run = await stack.workflow(faults=faults)
    await approve(run, await asyncio.wait_for(run.next_task(), 60))
    await asyncio.wait_for(run.wait_state("MANUAL_REVIEW"), 120)
    return run


async def test_a_cancel_after_the_refund_compensates_it(stack: Stack) -> None:
    run = await _in_review(stack, {"notify": ["fail"]})

    code, decided = await _interlock(stack, "cancel", run.workflow_id)

    assert (code, decided["to_state"]) == (0, "COMPENSATING")
    done = await asyncio.wait_for(run.wait_state("FAILED_COMPENSATED", "CANCELLED"), 60)
    assert done["state"] == "FAILED_COMPENSATED"
    assert await reversal_count(stack.dsn, customer_id=run.customer_id) == 1


async def test_a_reviewers_reject_after_the_refund_is_refused(stack: Stack) -> None:
    run = await _in_review(stack, {"notify": ["fail"]})

    code, decided = await _interlock(stack, "reject", run.workflow_id, "--role", "operator")

    assert (code, decided["reason"]) == (3, "guard_rejected")
    view = await run.view()
    assert view is not None
    assert view["state"] == "MANUAL_REVIEW"


async def test_an_unknown_refund_is_shown_with_its_key_and_run_again_under_it(
    stack: Stack,
) -> None:
    run = await _in_review(stack, {"execute": UNANSWERED})
    code, shown = await _interlock(stack, "show", run.workflow_id)
    (refund,) = [e for e in shown["effects"] if e["state"] == "EXECUTING_ACTION"]
    assert (refund["status"], refund["idempotency_key"].startswith("support-action:")) == (
        "unknown",
        True,
    )

    code, decided = await _interlock(stack, "effect", "rerun", run.workflow_id)

    assert (code, decided["to_state"]) == (0, "EXECUTING_ACTION")
    await asyncio.wait_for(run.wait_state("COMPLETED"), 60)
    assert await stack.effects(run) == 1


async def test_an_unknown_refund_is_confirmed_with_the_receipt_found(stack: Stack) -> None:
    run = await _in_review(stack, {"execute": UNANSWERED})
    view = await run.view()
    assert view is not None
    receipt = {
        "idempotency_key": view["execution"]["review"]["idempotency_key"],
        "provider_operation_id": "op-found-by-hand",
        "status": "succeeded",
        "amount": "20.00",
        "currency": "EUR",
        "reconciled": True,
    }

    code, decided = await _interlock(
        stack, "effect", "confirm", run.workflow_id, "--receipt", json.dumps(receipt)
    )

    assert (code, decided["to_state"]) == (0, "NOTIFYING_CUSTOMER")
    done = await asyncio.wait_for(run.wait_state("COMPLETED"), 60)
    assert done["data"]["action"]["provider_operation_id"] == "op-found-by-hand"


async def test_an_unknown_refund_is_compensated_by_its_key(stack: Stack) -> None:
    run = await _in_review(stack, {"execute": UNANSWERED})

    code, decided = await _interlock(stack, "effect", "compensate", run.workflow_id)

    assert (code, decided["to_state"]) == (0, "COMPENSATING")
    done = await asyncio.wait_for(run.wait_state("FAILED_COMPENSATED"), 60)
    assert done["execution"]["effects"]["EXECUTING_ACTION"]["status"] == "compensated"

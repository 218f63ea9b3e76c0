"""Every path after the refund tells the truth, through the whole stack and the CLI: a refund
whose notification failed is compensated when cancelled, never `CANCELLED` with the refund
standing, and a reviewer cannot reject it."""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import urlsplit

import pytest

from interlock.simulators import reversal_count
from interlock.tools.demo.runner import Run, approve
from tests.support.chaos_stack import Stack
from tests.support.cli import cli, cli_env

pytestmark = pytest.mark.timeout(240)


def _env(stack: Stack) -> dict[str, str]:
    """The CLI on this stack's broker and database, signing as the operator client whose
    credentials the session's secrets hold (the URL carries none of its own)."""
    broker = urlsplit(stack.nats_url)
    return cli_env(
        stack.home,
        INTERLOCK_NATS_URL=f"nats://{broker.hostname}:{broker.port}",
        INTERLOCK_DATABASE_URL=stack.dsn,
    )


async def _interlock(stack: Stack, *args: str) -> tuple[int, dict[str, Any]]:
    code, out = await cli(_env(stack), *args, "--json")
    return code, json.loads(out)


async def _in_review(stack: Stack, faults: dict[str, list[str]]) -> Run:
    run = await stack.workflow(faults=faults)
    await approve(run, await asyncio.wait_for(run.next_task(), 60))
    try:
        await asyncio.wait_for(run.wait_state("MANUAL_REVIEW"), 150)
    except TimeoutError:
        view = await run.view() or {}
        steps = [(a["event_type"], a["to_state"], a["reason"]) for a in view.get("audit", [])]
        raise AssertionError(f"not in review: {view.get('state')} after {steps}") from None
    return run


async def test_a_cancel_after_the_refund_compensates_it(stack: Stack) -> None:
    run = await _in_review(stack, {"notify": ["fail"]})

    code, decided = await _interlock(stack, "cancel", run.workflow_id)

    assert (code, decided.get("to_state")) == (0, "COMPENSATING"), json.dumps(decided)
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

"""A `request` effect whose outcome stays unknown, through the whole stack and the CLI: the
effect provider never answers, `execute_effect` gives up after its last delivery
(`effect_outcome_unknown`), the run waits in `review` holding the key, and `interlock effect
ID confirm|rerun|compensate` records the receipt found at the provider, runs the effect again
under the same key, or compensates it (looked up by its key first: nothing under it, nothing
to reverse). One stack, three workflows."""

from __future__ import annotations

import asyncio
import json
import uuid

import pytest

from interlock.simulators import effect_rows
from interlock.tools.demo import casedrive as drive
from interlock.tools.demo.casefile import SHIPPED, load
from tests.support.chaos_stack import Stack
from tests.support.effect_cli import NORMAL_CASE, interlock, request_in_review, request_settled

pytestmark = pytest.mark.timeout(300)


async def test_an_unknown_request_effect_is_confirmed_rerun_or_compensated(
    quiet_hosted_stack: Stack,
) -> None:
    stack = quiet_hosted_stack
    runs = await asyncio.gather(*(request_in_review(stack) for _ in range(3)))
    confirmed, rerun, compensated = (workflow_id for _, workflow_id in runs)
    _, shown = await interlock(stack, "show", confirmed)
    (effect,) = [e for e in shown["effects"] if e["state"] == "executing"]
    assert effect["status"] == "unknown"
    assert effect["idempotency_key"].startswith("request-effect:")
    receipt = {"operation_id": "eff-found-by-hand", "effect": "create_follow_up"}
    found = json.dumps({**receipt, "idempotency_key": effect["idempotency_key"]})

    decisions = await asyncio.gather(
        interlock(stack, "effect", confirmed, "confirm", "--receipt", found),
        interlock(stack, "effect", rerun, "rerun"),
        interlock(stack, "effect", compensated, "compensate", "--reason", "not wanted"),
    )

    assert [(code, d.get("to_state")) for code, d in decisions] == [
        (0, "completed"),
        (0, "executing"),
        (0, "compensating"),
    ]
    done = await asyncio.gather(
        *(request_settled(stack, w) for w in (confirmed, rerun, compensated))
    )
    assert [v["state"] for v in done] == ["completed", "completed", "compensated"]
    assert done[0]["data"]["effect"]["operation_id"] == "eff-found-by-hand"
    assert done[2]["data"]["compensation"]["reversal_id"] == "none-found-by-key"
    assert done[2]["execution"]["effects"]["executing"]["status"] == "compensated"
    ledger = await effect_rows(stack.dsn, [confirmed, rerun, compensated])
    assert [row["workflow_id"] for row in ledger] == [rerun]  # confirming records; it acts not


async def test_a_refused_command_is_one_line_exit_3(quiet_hosted_stack: Stack) -> None:
    """Nothing to recover: a run that completed refuses a compensation (exit 3, the reason)."""
    stack = quiet_hosted_stack
    (case,) = [c for c in load(SHIPPED).cases if c.id == NORMAL_CASE]
    run_id = uuid.uuid4().hex[:10]
    sub = drive.submission(case, f"fixture-{run_id}", run_id)
    assert sub.workflow_id is not None
    await drive.publish(stack.bus, sub, run_id)
    assert (await request_settled(stack, sub.workflow_id))["state"] == "completed"

    code, refused = await interlock(stack, "effect", sub.workflow_id, "compensate")

    assert (code, refused["accepted"], refused["reason"]) == (3, False, "terminal")

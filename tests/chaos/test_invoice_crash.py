"""Kill -9 of the invoice posting stage at each boundary — above all after the finance system
posted and before the result was submitted: the restarted stage asks the finance system
first, so the invoice is posted exactly once and the workflow ends `POSTED`, its audit
gapless."""

from __future__ import annotations

import asyncio

import pytest

from interlock.messaging.crashpoints import arm, armed
from interlock.tools.demo.plugins import PluginRun
from tests.support.chaos_stack import Stack
from tests.support.polling import eventually

pytest.importorskip("interlock_invoice")
from interlock_invoice.scenarios import document
from interlock_invoice.simulator import Ledger, ledger_path

pytestmark = pytest.mark.timeout(150)


@pytest.mark.parametrize("boundary", ["before_call", "after_effect", "after_result"])
async def test_the_posting_stage_killed_at_a_boundary_posts_once(
    stack: Stack, boundary: str
) -> None:
    point = f"invoice.post.{boundary}"
    arm(stack.crash_dir, point)
    run = PluginRun("crash", "invoice", "chaos", stack.home.resolve(), stack.bus, stack.engine)
    run.workflow_id = await run.start(document(run.token))

    done = await asyncio.wait_for(run.wait_state("POSTED", "MANUAL_REVIEW"), 90)

    async def fired() -> bool:
        return not armed(stack.crash_dir, point)

    await eventually(fired, what=f"a crash at {point}", within=60)
    ledger = Ledger(ledger_path(stack.home.resolve()), ())
    assert done["state"] == "POSTED"
    assert await ledger.count("postings", run.workflow_id) == 1
    assert await ledger.count("notifications", run.workflow_id) == 1
    versions = [a["state_version"] for a in done["audit"] if a["accepted"]]
    assert versions == list(range(1, len(versions) + 1))
    if boundary == "after_effect":  # the second attempt found the first one's posting
        assert done["data"]["posting_reconciled"] is True

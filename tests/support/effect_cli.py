"""The `interlock` CLI run against a chaos-tier stack as its operator, and a support or a
request workflow brought to review with its effect's outcome unknown by the simulators'
faults."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any
from urllib.parse import urlsplit

from interlock.simulators import plan_effect_faults
from interlock.tools.demo import casedrive as drive
from interlock.tools.demo.casefile import SHIPPED, load
from interlock.tools.demo.runner import Run, approve
from tests.support.chaos_stack import Stack
from tests.support.cli import cli, cli_env


def cli_env_for(stack: Stack) -> dict[str, str]:
    """The CLI on this stack's broker and database, signing as the operator client whose
    credentials the session's secrets hold (the URL carries none of its own)."""
    broker = urlsplit(stack.nats_url)
    return cli_env(
        stack.home,
        INTERLOCK_NATS_URL=f"nats://{broker.hostname}:{broker.port}",
        INTERLOCK_DATABASE_URL=stack.dsn,
    )


async def interlock(stack: Stack, *args: str) -> tuple[int, dict[str, Any]]:
    code, out = await cli(cli_env_for(stack), *args, "--json")
    return code, json.loads(out)


async def in_review(stack: Stack, faults: dict[str, list[str]]) -> Run:
    run = await stack.workflow(faults=faults)
    await approve(run, await asyncio.wait_for(run.next_task(), 60))
    try:
        await asyncio.wait_for(run.wait_state("MANUAL_REVIEW"), 150)
    except TimeoutError:
        view = await run.view() or {}
        steps = [(a["event_type"], a["to_state"], a["reason"]) for a in view.get("audit", [])]
        raise AssertionError(f"not in review: {view.get('state')} after {steps}") from None
    return run


REQUEST_UNANSWERED = {"effect": ["timeout"] * 40}
"""Every request effect times out with nothing done, longer than the stage tries."""
NORMAL_CASE = "case-01"
"""A request follow-up the recorded classifier authorises with no approval."""


async def request_in_review(stack: Stack) -> tuple[str, str]:
    """A fresh request run whose effect's outcome is unknown, waiting in `review` (its tenant
    and workflow id); the effect provider answers it from then on."""
    (case,) = [c for c in load(SHIPPED).cases if c.id == NORMAL_CASE]
    run_id = uuid.uuid4().hex[:10]
    sub = drive.submission(case, f"fixture-{run_id}", run_id)
    assert sub.workflow_id is not None
    await plan_effect_faults(stack.dsn, sub.workflow_id, REQUEST_UNANSWERED)
    await drive.publish(stack.bus, sub, run_id)
    waiting = ("review", *drive.TERMINAL)
    view = await asyncio.wait_for(drive.state_in(stack.engine, sub.workflow_id, waiting), 150)
    assert view["state"] == "review", [(a["event_type"], a["to_state"]) for a in view["audit"]]
    await plan_effect_faults(stack.dsn, sub.workflow_id, {"effect": []})
    return sub.tenant_id, sub.workflow_id


async def request_settled(stack: Stack, workflow_id: str) -> dict[str, Any]:
    """The request run's view once it is terminal."""
    return await asyncio.wait_for(drive.state_in(stack.engine, workflow_id, drive.TERMINAL), 60)

"""The `interlock` CLI run against a chaos-tier stack as its operator, and a support workflow
brought to manual review with the simulator's faults."""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import urlsplit

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

"""The expense plugin (examples/expense, its own distribution) under `interlock up` against real
NATS and PostgreSQL, its payments and notices over HTTP to the simulated bank: claims approved
and rejected with the CLI, one cancelled while it waits, one whose first payment call is
answered 503 — retried, and paid exactly once."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import nats
import pytest
from interlock_expense.bank import Bank, serve

from tests.support.cli import cli, cli_env, interlock_up
from tests.support.polling import eventually

pytestmark = pytest.mark.timeout(300)
STAGES = ["expense.categorise", "expense.pay", "expense.notify"]


@dataclass
class Stack:
    env: dict[str, str]
    bank: Bank

    async def claim(self, description: str, amount: str) -> str:
        workflow_id = f"claim-{uuid.uuid4().hex[:12]}"
        request = {
            "event_id": str(uuid.uuid4()),
            "type": "START",
            "workflow_type": "expense",
            "workflow_id": workflow_id,
            "tenant_id": "acme",
            "actor": {"id": "expenses-app", "role": "upstream"},
            "occurred_at": datetime.now(UTC).isoformat(),
            "payload": {"employee": "ada", "description": description, "amount": amount},
        }
        _, upstream = await cli(self.env, "client-url", "upstream")
        nc = await nats.connect(upstream.strip(), inbox_prefix="_INBOX_upstream")
        try:
            await nc.jetstream().publish(
                "wf.in.request.expense.upstream", json.dumps(request).encode()
            )
        finally:
            await nc.drain()
        return workflow_id

    async def reaches(self, workflow_id: str, state: str) -> dict[str, Any]:
        async def shown() -> dict[str, Any] | None:
            code, out = await cli(self.env, "show", workflow_id, "--json")
            view = json.loads(out) if code == 0 else None
            return view if view and view["state"] == state else None

        return await eventually(shown, within=90, every=0.5, what=f"{workflow_id} in {state}")

    def payments_of(self, workflow_id: str) -> list[dict[str, Any]]:
        return [p for k, p in self.bank.made["payments"].items() if workflow_id in k]


@asynccontextmanager
async def banked() -> AsyncIterator[tuple[Bank, str]]:
    """The simulated bank, served in this process, and the `INTERLOCK_ADAPTERS` that send the
    expense stages' payments and notices to it."""
    bank = Bank()
    runner, url = await serve(bank)
    adapters = {"expense": {"payments": {"base_url": url}, "notices": {"base_url": url}}}
    try:
        yield bank, json.dumps(adapters)
    finally:
        await runner.cleanup()


@pytest.fixture
async def stack(tmp_path: Path) -> AsyncIterator[Stack]:
    home = tmp_path / "home"
    async with banked() as (bank, adapters):
        with interlock_up(
            home, "projector", "relay", "timer", *STAGES, INTERLOCK_ADAPTERS=adapters
        ):
            yield Stack(cli_env(home), bank)


async def test_expense_claims_approved_rejected_cancelled_and_a_503_retried(stack: Stack) -> None:
    approved = await stack.claim("Train to Berlin", "800.00")
    rejected = await stack.claim("Hotel in Paris", "900.00")
    cancelled = await stack.claim("Taxi to the airport", "120.00")
    for workflow_id in (approved, rejected, cancelled):
        await stack.reaches(workflow_id, "AWAITING_APPROVAL")

    # an approval of another amount than the one shown is refused, with its guard
    code, out = await cli(stack.env, "approve", approved, "--amount", "8.00", "--json")
    assert code == 3, out
    assert "amount_matches_shown" in json.loads(out)["failed_guards"]
    code, out = await cli(stack.env, "approve", approved, "--json")  # binds the amount shown
    assert code == 0, out
    assert json.loads(out)["to_state"] == "PAYING"
    paid = await stack.reaches(approved, "PAID")
    approval = next(a for a in paid["audit"] if a["event_type"] == "APPROVED")
    assert approval["actor"]["role"] == "manager"  # the least-privileged approver
    assert len(stack.payments_of(approved)) == 1

    code, out = await cli(stack.env, "reject", rejected, "--reason", "not budgeted")
    assert code == 0, out
    await stack.reaches(rejected, "REJECTED")

    code, out = await cli(
        stack.env, "signal", cancelled, "CANCEL_REQUESTED", "--field", "reason=claimed twice"
    )
    assert code == 0, out
    await stack.reaches(cancelled, "CANCELLED")
    assert stack.payments_of(rejected) == stack.payments_of(cancelled) == []

    stack.bank.unavailable = 1  # the next payment call is answered 503
    retried = await stack.claim("Team lunch", "42.50")
    shown = await stack.reaches(retried, "PAID")
    assert stack.bank.refused_503 == 1
    assert len(stack.payments_of(retried)) == 1
    effect = next(e for e in shown["effects"] if e["state"] == "PAYING")
    assert effect["status"] == "committed"
    assert effect["idempotency_key"] == stack.payments_of(retried)[0]["idempotency_key"]

"""An invoice that needs approval, published as the upstream client would, and the workflow
read back through `interlock show`: for the tests that approve a plugin's workflow; and an
invoice whose posting's outcome stayed unknown, on a chaos-tier stack."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import UTC, datetime
from typing import Any

import nats
from interlock_invoice.scenarios import LARGE, document, number
from interlock_invoice.simulator import Ledger, ledger_path

from interlock.config.plugins import installed
from interlock.contracts.envelope import parse_envelope
from interlock.tools.demo.plugins import PluginRun
from tests.support.chaos_stack import Stack
from tests.support.cli import cli
from tests.support.polling import eventually


def envelope_of(payload: dict[str, Any], *, event_id: str = "") -> dict[str, Any]:
    """An invoice request, as the upstream client publishes it (a fresh event id unless one
    is given)."""
    return {
        "event_id": event_id or f"upload-{uuid.uuid4()}",
        "type": "START",
        "workflow_type": "invoice",
        "tenant_id": "acme",
        "actor": {"id": "scanner", "role": "upstream"},
        "occurred_at": datetime.now(UTC).isoformat(),
        "payload": payload,
    }


async def start_invoice(
    env: dict[str, str], token: str, *, fault: str = "", amounts: dict[str, Any] = LARGE
) -> str:
    """Publish, as the upstream client, an invoice (by default one whose total, 1799.28,
    needs approval; `fault`: what the finance simulator does with it, `simulator.fault_of`)."""
    request = envelope_of(document(token, amounts=amounts, fault=fault))
    workflow_id = installed().registry.workflow_id(parse_envelope(json.dumps(request).encode()))
    _, upstream = await cli(env, "client-url", "upstream")
    nc = await nats.connect(upstream.strip(), inbox_prefix="_INBOX_upstream")
    try:
        await nc.jetstream().publish("wf.in.request.invoice.upstream", json.dumps(request).encode())
    finally:
        await nc.drain()
    return workflow_id


async def invoice_awaiting_approval(env: dict[str, str], token: str) -> str:
    """The id of an invoice that needs approval (`start_invoice`), once it waits for it."""
    workflow_id = await start_invoice(env, token)
    await eventually(
        lambda: invoice_in(env, workflow_id, "AWAITING_APPROVAL"),
        within=90,
        every=0.5,
        what="awaiting approval",
    )
    return workflow_id


async def invoice_in(env: dict[str, str], workflow_id: str, state: str) -> dict[str, Any] | None:
    """The workflow as `interlock show` gives it, once it is in `state`."""
    code, out = await cli(env, "show", workflow_id, "--json")
    shown = json.loads(out) if code == 0 else None
    return shown if shown and shown["state"] == state else None


INVOICE_STAGES = ("invoice.extract", "invoice.validate", "invoice.post", "invoice.notify")


def ledger_of(stack: Stack) -> Ledger:
    """The finance simulator's ledger of the stack's installation."""
    return Ledger(ledger_path(stack.home.resolve()), ())


async def posting_unknown(stack: Stack, fault: str) -> PluginRun:
    """An invoice whose every posting goes unanswered (`fault`: `unanswered`, nothing posted;
    `answers-lost`, posted), waiting in review; the finance system answers from then on."""
    run = PluginRun("unknown", "invoice", "chaos", stack.home.resolve(), stack.bus, stack.engine)
    run.workflow_id = await run.start(document(run.token, fault=fault))
    view = await asyncio.wait_for(run.wait_state("MANUAL_REVIEW", "POSTED"), 120)
    assert view["state"] == "MANUAL_REVIEW", view["audit"]
    await ledger_of(stack).heal(number(run.token, fault), fault)
    return run

"""An invoice posting whose outcome stays unknown, through the whole stack and the CLI: the
posting stage gives up after its last attempt (`posting_unconfirmed`, with the key), the
invoice waits in review showing the key, and `interlock effect` confirms the number found in
the ledger, posts again under the same key (one posting) or compensates it (one reversal, the
posting found by its key first)."""

from __future__ import annotations

import asyncio
import json

import pytest

from interlock.tools.demo.plugins import PluginRun
from tests.support.chaos_stack import Stack
from tests.support.effect_cli import interlock

pytest.importorskip("interlock_invoice")
from interlock_invoice.scenarios import document, number
from interlock_invoice.simulator import Ledger, ledger_path

pytestmark = pytest.mark.timeout(240)


async def _unknown(stack: Stack, fault: str) -> PluginRun:
    """An invoice whose every posting goes unanswered (`fault`), waiting in review."""
    run = PluginRun("unknown", "invoice", "chaos", stack.home.resolve(), stack.bus, stack.engine)
    run.workflow_id = await run.start(document(run.token, fault=fault))
    view = await asyncio.wait_for(run.wait_state("MANUAL_REVIEW", "POSTED"), 120)
    assert view["state"] == "MANUAL_REVIEW", view["audit"]
    await _ledger(stack).heal(number(run.token, fault), fault)  # the finance system answers
    return run


def _ledger(stack: Stack) -> Ledger:
    return Ledger(ledger_path(stack.home.resolve()), ())


async def test_an_unknown_posting_is_shown_confirmed_posted_again_or_reversed(
    hosted_stack: Stack,
) -> None:
    stack = hosted_stack  # the stages in one process: the lighter stack is enough here
    confirmed, rerun, reversed_ = await asyncio.gather(
        _unknown(stack, "unanswered"),
        _unknown(stack, "unanswered"),
        _unknown(stack, "answers-lost"),
    )
    ledger = _ledger(stack)
    assert await ledger.count("postings", reversed_.workflow_id) == 1  # it did post
    _, shown = await interlock(stack, "show", rerun.workflow_id)
    (posting,) = [e for e in shown["effects"] if e["state"] == "POSTING"]
    assert posting == {
        "state": "POSTING",
        "status": "unknown",
        "idempotency_key": rerun.workflow_id,
    }
    receipt = json.dumps(
        {
            "invoice_id": confirmed.workflow_id,
            "posting_number": "FIN-FOUND-BY-HAND",
            "posting_reconciled": True,
        }
    )

    decisions = await asyncio.gather(
        interlock(stack, "effect", "confirm", confirmed.workflow_id, "--receipt", receipt),
        interlock(stack, "effect", "rerun", rerun.workflow_id),
        interlock(stack, "effect", "compensate", reversed_.workflow_id, "--reason", "void"),
    )

    assert [(code, d.get("to_state")) for code, d in decisions] == [
        (0, "NOTIFYING"),
        (0, "POSTING"),
        (0, "REVERSING"),
    ]
    done = await asyncio.gather(
        asyncio.wait_for(confirmed.wait_state("POSTED"), 60),
        asyncio.wait_for(rerun.wait_state("POSTED"), 60),
        asyncio.wait_for(reversed_.wait_state("REVERSED"), 60),
    )
    assert done[0]["data"]["posting_number"] == "FIN-FOUND-BY-HAND"
    assert await ledger.count("postings", confirmed.workflow_id) == 0  # confirming posts nothing
    assert await ledger.count("postings", rerun.workflow_id) == 1
    assert await ledger.count("postings", reversed_.workflow_id) == 1
    assert await ledger.count("reversals", reversed_.workflow_id) == 1
    assert await ledger.count("notifications", reversed_.workflow_id) == 0
    assert done[2]["execution"]["effects"]["POSTING"]["status"] == "compensated"
    assert done[2]["data"]["reversal_number"].startswith("REV-")

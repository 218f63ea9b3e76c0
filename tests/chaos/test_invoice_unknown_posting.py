"""An invoice posting whose outcome stays unknown, through the whole stack and the CLI: the
posting stage gives up after its last attempt (`posting_unconfirmed`, with the key), the
invoice waits in review showing the key, and `interlock effect` confirms the number found in
the ledger, posts again under the same key (one posting) or compensates it (one reversal, the
posting found by its key first)."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.support.chaos_stack import Stack
from tests.support.effect_cli import interlock

pytest.importorskip("interlock_invoice")
from tests.support.invoices import ledger_of, posting_unknown

pytestmark = pytest.mark.timeout(240)


async def test_an_unknown_posting_is_shown_confirmed_posted_again_or_reversed(
    hosted_stack: Stack,
) -> None:
    stack = hosted_stack  # the stages in one process: the lighter stack is enough here
    confirmed, rerun, reversed_ = await asyncio.gather(
        posting_unknown(stack, "unanswered"),
        posting_unknown(stack, "unanswered"),
        posting_unknown(stack, "answers-lost"),
    )
    ledger = ledger_of(stack)
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

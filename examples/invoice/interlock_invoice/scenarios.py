"""The invoice pipeline's demo scenarios (`Plugin.scenarios`), one per behaviour of the
issue's list, each with checks on the audit trail and the simulators' ledger.

Every document carries the run's token in its invoice number, so each demo run uploads new
files; faults are asked for by the invoice number (`simulator.fault_of`), so they hold in
whichever stage process serves the call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from interlock import Scenario, ScenarioRun
from interlock_invoice.document import render, request_for
from interlock_invoice.simulator import Ledger, ledger_path

APPROVER = "invoice_approver"
OPERATOR = "operator"
SMALL = {"items": [("Copy paper A4", "10", "4.50")], "net": "45.00", "tax": "8.55"}
LARGE = {"items": [("Office chairs", "8", "189.00")], "net": "1512.00", "tax": "287.28"}
PARAMETERS = {"approval_sla_seconds": 6, "retry_delay_scale": 0.02}
"""The demo's overrides: an SLA it can wait out, retries in fractions of a second."""


def number(token: str, fault: str = "") -> str:
    return f"DEMO-{token}" + (f"~{fault}" if fault else "")


def document(
    token: str,
    *,
    fault: str = "",
    amounts: dict[str, Any] = SMALL,
    supplier: str = "Acme Paper GmbH",
    total: str | None = None,
    day: int = 2,
) -> dict[str, Any]:
    net, tax = amounts["net"], amounts["tax"]
    invoice = {
        "supplier": supplier,
        "invoice_number": number(token, fault),
        "invoice_date": f"2026-11-{day:02d}",
        "currency": "EUR",
        "items": [
            {"description": d, "quantity": q, "unit_price": p} for d, q, p in amounts["items"]
        ],
        "net": net,
        "tax": tax,
        "total": total or f"{float(net) + float(tax):.2f}",
    }
    return request_for(render(invoice), filename=f"{invoice['invoice_number']}.txt")


def ledger(run: ScenarioRun) -> Ledger:
    return Ledger(ledger_path(Path(run.home)), ())


def accepted(view: dict[str, Any]) -> list[str]:
    return [a["event_type"] for a in view["audit"] if a["accepted"]]


def replay_seen(view: dict[str, Any]) -> bool:
    return any(a["reason"] == "idempotent_replay" for a in view["audit"])


def repaired(run: ScenarioRun, view: dict[str, Any]) -> bool:
    return bool(view["data"]["extraction"]["verdict"] == "repaired")


def reason(view: dict[str, Any]) -> str | None:
    review = view["execution"].get("review") or {}
    return review.get("reason")


async def postings(run: ScenarioRun, view: dict[str, Any]) -> int:
    return await ledger(run).count("postings", run.workflow_id)


async def one_posting(run: ScenarioRun, view: dict[str, Any]) -> bool:
    return await postings(run, view) == 1


async def no_posting(run: ScenarioRun, view: dict[str, Any]) -> bool:
    return await postings(run, view) == 0 and "posting_number" not in view["data"]


async def one_notice(run: ScenarioRun, view: dict[str, Any]) -> bool:
    return await ledger(run).count("notifications", run.workflow_id) == 1


def reviewed_for(code: str) -> tuple[str, Any]:
    return (f"paused with {code}", lambda run, view: reason(view) == code)


# --- scripts -----------------------------------------------------------------------------


async def settle(run: ScenarioRun) -> None:
    await run.wait_state("POSTED", "MANUAL_REVIEW", "REJECTED", "CANCELLED")


async def upload_twice(run: ScenarioRun) -> None:
    await run.wait_state("POSTED")
    again = await run.start(document(run.token))
    if again != run.workflow_id:
        raise AssertionError("the same file addressed another workflow")
    await run.wait_for(replay_seen)


async def post_a_second_with_the_same_number(run: ScenarioRun) -> None:
    await run.wait_state("POSTED")
    run.workflow_id = await run.start(document(run.token, day=3))
    await run.wait_state("MANUAL_REVIEW", "POSTED")


async def approve(run: ScenarioRun) -> None:
    task = await run.announcement("approval_requested")
    await run.signal("APPROVED", {"total": task["total"]}, role=APPROVER)
    await settle(run)


async def reject(run: ScenarioRun) -> None:
    await run.announcement("approval_requested")
    await run.signal("REJECTED_BY_REVIEWER", {"reason": "not ordered"}, role=APPROVER)
    await settle(run)


async def let_the_sla_pass(run: ScenarioRun) -> None:
    await run.announcement("approval_requested")
    await run.wait_state("APPROVAL_ESCALATED")


async def cancel(run: ScenarioRun) -> None:
    await run.announcement("approval_requested")
    await run.signal("CANCEL_REQUESTED", {"reason": "sent in error"}, role=OPERATOR)
    await settle(run)


# --- the scenarios -----------------------------------------------------------------------


async def replayed(run: ScenarioRun, view: dict[str, Any]) -> bool:
    replays = [a for a in view["audit"] if a["reason"] == "idempotent_replay"]
    return len(replays) == 1 and accepted(view).count("START") == 1


async def only_the_first_posted(run: ScenarioRun, view: dict[str, Any]) -> bool:
    def by_number(c: Any) -> int:
        sql = "SELECT count(*) FROM postings WHERE invoice_number = ?"
        return int(c.execute(sql, (number(run.token),)).fetchone()[0])

    return await ledger(run).run(by_number) == 1 and await postings(run, view) == 0


async def post_calls(run: ScenarioRun) -> int:
    return await ledger(run).count("calls", run.workflow_id, "post")


async def reconciled(run: ScenarioRun, view: dict[str, Any]) -> bool:
    return view["data"]["posting_reconciled"] is True and await post_calls(run) == 1


async def retried_once(run: ScenarioRun, view: dict[str, Any]) -> bool:
    return accepted(view).count("RETRYABLE_ERROR") == 1 and await post_calls(run) == 2


async def posting_kept(run: ScenarioRun, view: dict[str, Any]) -> bool:
    sent = await ledger(run).count("notifications", run.workflow_id)
    return bool(view["data"]["posting_number"]) and sent == 0 and await postings(run, view) == 1


def approved_by_role(run: ScenarioRun, view: dict[str, Any]) -> bool:
    return any(
        a["event_type"] == "APPROVED" and a["accepted"] and a["actor"]["role"] == APPROVER
        for a in view["audit"]
    )


HAPPY_AUDIT = ["START", "INVOICE_EXTRACTED", "INVOICE_VALID", "INVOICE_POSTED", "NOTIFIED"]

SCENARIOS = (
    Scenario(
        "happy_path",
        "POSTED",
        document,
        checks=(
            ("one posting, one notification", lambda r, v: _both(one_posting, one_notice, r, v)),
            ("extract, validate, post, notify", lambda r, v: accepted(v) == HAPPY_AUDIT),
        ),
    ),
    Scenario(
        "same_file_twice",
        "POSTED",
        document,
        script=upload_twice,
        checks=(("an audited idempotent replay", replayed), ("one posting", one_posting)),
    ),
    Scenario(
        "extraction_repaired",
        "POSTED",
        lambda t: document(t, fault="invalid-output"),
        checks=(
            ("one repair", repaired),
            ("one posting", one_posting),
        ),
    ),
    Scenario(
        "extraction_failed",
        "MANUAL_REVIEW",
        lambda t: document(t, fault="invalid-output-always"),
        checks=(reviewed_for("extraction_failed"), ("nothing posted", no_posting)),
    ),
    Scenario(
        "totals_mismatch",
        "MANUAL_REVIEW",
        lambda t: document(t, total="60.00"),
        checks=(reviewed_for("totals_mismatch"), ("nothing posted", no_posting)),
    ),
    Scenario(
        "unknown_supplier",
        "MANUAL_REVIEW",
        lambda t: document(t, supplier="Umbrella Holdings"),
        checks=(reviewed_for("unknown_supplier"), ("nothing posted", no_posting)),
    ),
    Scenario(
        "duplicate_invoice_number",
        "MANUAL_REVIEW",
        document,
        script=post_a_second_with_the_same_number,
        checks=(
            reviewed_for("duplicate_invoice"),
            ("the number posted once, by the first", only_the_first_posted),
        ),
    ),
    Scenario(
        "high_amount_approved",
        "POSTED",
        lambda t: document(t, amounts=LARGE),
        script=approve,
        checks=(
            ("approved by an invoice approver", approved_by_role),
            ("one posting", one_posting),
        ),
    ),
    Scenario(
        "high_amount_rejected",
        "REJECTED",
        lambda t: document(t, amounts=LARGE),
        script=reject,
        checks=(("nothing posted", no_posting),),
    ),
    Scenario(
        "approval_sla_expiry",
        "APPROVAL_ESCALATED",
        lambda t: document(t, amounts=LARGE),
        script=let_the_sla_pass,
        checks=(
            (
                "escalated, never approved",
                lambda r, v: (
                    "APPROVAL_SLA_EXPIRED" in accepted(v) and "APPROVED" not in accepted(v)
                ),
            ),
            ("nothing posted", no_posting),
        ),
    ),
    Scenario(
        "posting_response_lost",
        "POSTED",
        lambda t: document(t, fault="lose-response"),
        checks=(("reconciled by lookup", reconciled), ("one posting", one_posting)),
    ),
    Scenario(
        "posting_timeout_retried",
        "POSTED",
        lambda t: document(t, fault="timeout-once"),
        checks=(("not posted, retried once", retried_once), ("one posting", one_posting)),
    ),
    Scenario(
        "notification_failure_keeps_posting",
        "MANUAL_REVIEW",
        lambda t: document(t, fault="notify-fails"),
        checks=(reviewed_for("notification_failed"), ("the posting stands", posting_kept)),
    ),
    Scenario(
        "cancel_while_awaiting_approval",
        "CANCELLED",
        lambda t: document(t, amounts=LARGE),
        script=cancel,
        checks=(("nothing posted", no_posting),),
    ),
)


async def _both(a: Any, b: Any, run: ScenarioRun, view: dict[str, Any]) -> bool:
    return bool(await a(run, view)) and bool(await b(run, view))

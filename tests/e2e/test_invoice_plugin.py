"""The invoice plugin (examples/invoice, its own distribution, installed into the environment)
run by `interlock up` against real NATS and PostgreSQL: a plain-text invoice published by the
upstream client is extracted, validated, posted and notified; the same file again, under
another event id, is the same workflow and an audited `idempotent_replay`."""

from __future__ import annotations

import base64
import hashlib
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nats
import pytest

from interlock.config.plugins import installed
from interlock.contracts.envelope import parse_envelope
from tests.support.cli import cli, cli_env, interlock_up
from tests.support.invoices import envelope_of, invoice_awaiting_approval, invoice_in
from tests.support.polling import eventually

pytestmark = pytest.mark.timeout(240)
STAGES = ["invoice.extract", "invoice.validate", "invoice.post", "invoice.notify"]
DOCUMENT = """INVOICE
Supplier: Acme Paper GmbH
Invoice number: AP-2026-0042
Invoice date: 2026-11-02
Currency: EUR
Item: Copy paper A4 | 10 | 4.50
Item: Toner cartridge | 2 | 39.90
Net: 124.80
Tax: 23.71
Total: 148.51
"""


@pytest.fixture(scope="module")
def running_up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """One stack for the module: each test looks only at invoices of its own."""
    home = tmp_path_factory.mktemp("invoice-up") / "home"
    with interlock_up(home, "projector", "relay", "timer", *STAGES):
        yield cli_env(home)


def start(event_id: str, filename: str) -> dict[str, Any]:
    content = base64.b64encode(DOCUMENT.encode()).decode()
    document = {"filename": filename, "media_type": "text/plain", "content_b64": content}
    return envelope_of({"document": document}, event_id=event_id)


async def test_the_invoice_plugin_is_listed_with_its_distribution(tmp_path: Path) -> None:
    code, out = await cli(cli_env(tmp_path), "workflows", "--json")

    assert code == 0, out
    listed = {w["type"]: w for w in json.loads(out)["workflows"]}
    assert listed["invoice"]["distribution"] == "interlock-invoice 0.1.0"
    assert [s["name"] for s in listed["invoice"]["stages"]] == [
        "extract",
        "validate",
        "post",
        "notify",
        "reverse",
    ]


async def test_an_invoice_is_posted_end_to_end_and_a_second_upload_is_a_replay(
    running_up: dict[str, str],
) -> None:
    env = running_up
    first = start(f"upload-{uuid.uuid4()}", "scan.txt")
    again = start(f"upload-{uuid.uuid4()}", "scan-again.txt")
    registry = installed().registry
    workflow_id = registry.workflow_id(parse_envelope(json.dumps(first).encode()))
    assert registry.workflow_id(parse_envelope(json.dumps(again).encode())) == workflow_id

    _, upstream = await cli(env, "client-url", "upstream")
    nc = await nats.connect(upstream.strip(), inbox_prefix="_INBOX_upstream")
    try:
        js = nc.jetstream()
        await js.publish("wf.in.request.invoice.upstream", json.dumps(first).encode())

        async def view() -> dict[str, Any] | None:
            code, out = await cli(env, "show", workflow_id, "--json")
            return json.loads(out) if code == 0 else None

        async def posted() -> dict[str, Any] | None:
            shown = await view()
            return shown if shown and shown["state"] == "POSTED" else None

        shown = await eventually(posted, within=90, every=0.5, what="invoice POSTED")
        await js.publish("wf.in.request.invoice.upstream", json.dumps(again).encode())

        async def replayed() -> dict[str, Any] | None:
            shown = await view()
            reasons = [a["reason"] for a in shown["audit"]] if shown else []
            return shown if "idempotent_replay" in reasons else None

        replay = await eventually(replayed, within=60, every=0.5, what="an idempotent replay")
    finally:
        await nc.drain()

    data = shown["data"]
    assert data["posting_number"].startswith("FIN-")
    assert data["document_sha256"] == hashlib.sha256(DOCUMENT.encode()).hexdigest()
    assert [a["event_type"] for a in shown["audit"]] == [
        "START",
        "INVOICE_EXTRACTED",
        "INVOICE_VALID",
        "INVOICE_POSTED",
        "NOTIFIED",
    ]
    assert replay["state"] == "POSTED"
    assert replay["version"] == shown["version"]  # nothing new was created or moved


async def test_an_invoice_awaiting_approval_is_approved_from_the_cli_with_its_total(
    running_up: dict[str, str],
) -> None:
    """`interlock approve` fills the invoice's own approval payload (its `total`, as the
    approval task showed it) and signs as the type's approver; a field the payload model does
    not have is refused in one line before anything is sent."""
    env = running_up
    workflow_id = await invoice_awaiting_approval(env, f"cli-{uuid.uuid4().hex[:8]}")
    code, out = await cli(env, "signal", workflow_id, "APPROVED", "--field", "amount=1799.28")
    assert code == 2, out
    assert out.strip().splitlines() == [
        "invalid signal: APPROVED payload: amount: Extra inputs are not permitted"
    ]

    code, out = await cli(env, "approve", workflow_id, "--json")
    assert code == 0, out
    decision = json.loads(out)
    assert (decision["from_state"], decision["to_state"]) == ("AWAITING_APPROVAL", "POSTING")
    posted = await eventually(
        lambda: invoice_in(env, workflow_id, "POSTED"), within=90, every=0.5, what="invoice POSTED"
    )
    approval = next(a for a in posted["audit"] if a["event_type"] == "APPROVED")
    assert approval["actor"]["role"] == "invoice_approver"
    assert posted["data"]["approval"]["total"] == posted["data"]["invoice"]["total"] == "1799.28"

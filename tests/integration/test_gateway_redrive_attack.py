"""A refused webhook cannot be turned into an accepted one by a redrive (the issue "Hostile
input, round two", finding 1): a sender allowed one tenant, one actor and the approver role
posts a whole envelope (an approval for another tenant's workflow, as another actor with the
supervisor role) as its body. It is refused and recorded with the sender's name; redriving
that record is refused in one line, and the workflow is untouched: no approval, no effect.
Against real NATS JetStream, PostgreSQL and the projector."""

from __future__ import annotations

import asyncio
import base64
import os
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer

from interlock.config.settings import GatewaySender, Settings
from interlock.console import deadletters
from interlock.contracts import subjects
from interlock.messaging import letters
from interlock.services.gateway import Limits, SenderRegistry, create_app, jetstream_publisher
from interlock.services.gateway.refusal import HEADER_SENDER
from tests.support.cli import cli_env, cli_streams
from tests.support.drive import start, to_awaiting_approval
from tests.support.gateway_webhooks import installation_claims, signed
from tests.support.harness import Harness, projector_running
from tests.support.payloads import envelope
from tests.support.polling import eventually
from tests.support.workflows import REGISTRY

pytestmark = pytest.mark.timeout(120)


def _secret() -> str:
    return "whsec_" + base64.b64encode(os.urandom(32)).decode()


TICKETS_SECRET = _secret()
SENDERS = {
    # Allowed only tenant initech, actor alice, role support_approver.
    "tickets": GatewaySender.model_validate(
        {
            "secret": TICKETS_SECRET,
            "roles": ["support_approver"],
            "tenants": ["initech"],
            "actors": ["alice"],
        }
    ),
    # Makes the union of all senders cover every tenant, actor and the supervisor role.
    "ops": GatewaySender.model_validate(
        {"secret": _secret(), "roles": ["support_supervisor"], "tenants": ["*"], "actors": ["*"]}
    ),
}


async def test_a_refused_webhook_redriven_stays_refused_and_names_its_sender(
    nats_url: str, database_url: str, tmp_path: Path
) -> None:
    env = cli_env(tmp_path, INTERLOCK_NATS_URL=nats_url, INTERLOCK_DATABASE_URL=database_url)
    settings = Settings(gateway_senders=SENDERS)
    async with projector_running(nats_url, database_url, settings=settings) as h:
        workflow_id = await start(h)  # tenant acme
        await to_awaiting_approval(h, workflow_id)
        app = create_app(
            jetstream_publisher(h.nc.jetstream()),
            SenderRegistry(SENDERS),
            workflows=REGISTRY,
            connected=lambda: h.nc.is_connected,
            limits=Limits(per_sender=1000.0, unauthenticated=1000.0),
            claims=installation_claims(),
        )
        forged = envelope(
            "APPROVED", workflow_id=workflow_id, tenant_id="acme", event_id="gw-ops-forged"
        ).model_dump(mode="json")
        forged["actor"] = {"id": "mallory", "role": "support_supervisor"}
        data, headers = signed(forged, sender="tickets", secret=TICKETS_SECRET)
        async with TestClient(TestServer(app)) as client:
            response = await client.post(
                f"/v1/workflows/support/{workflow_id}/signals", data=data, headers=headers
            )
            assert response.status == 400
        js = h.nc.jetstream()

        async def recorded() -> letters.Letter | None:
            found = [d async for d in letters.letters(js, source="gateway")]
            return found[-1] if found else None

        letter = await eventually(recorded, what="the refusal recorded on wf.dlq.gateway")
        assert letter.headers[HEADER_SENDER] == "tickets"

        code, _, err = await cli_streams(env, "dlq", "redrive", str(letter.id))
        all_code, all_out, all_err = await cli_streams(env, "dlq", "redrive", "--all")
        from_console = await deadletters.redrive(nats_url, letter.id, "victor")

        assert code == 1
        assert err.strip().splitlines() == [
            f"dead letter {letter.id} is a webhook the gateway refused (sender tickets): "
            "not redrivable; its sender delivers a corrected webhook"
        ]
        assert from_console == err.strip()
        assert all_code == 0, all_err
        assert "left 1 not redrivable" in all_out
        assert await letters.letter(js, letter.id) is not None  # still recorded
        await asyncio.wait_for(_drained(h), 30)
        view = await h.view(workflow_id)
        assert view["state"] == "AWAITING_APPROVAL"
        approvals = await h.scalar(
            "SELECT count(*) FROM audit WHERE workflow_id = :wf AND event_type = 'APPROVED'",
            wf=workflow_id,
        )
        assert approvals == 0


async def _drained(h: Harness) -> None:
    async def nothing_pending() -> bool:
        info = await h.nc.jetstream().consumer_info(subjects.STREAM_IN, subjects.CONSUMER_PROJECTOR)
        return bool(info.num_pending == 0 and info.num_ack_pending == 0)

    await eventually(nothing_pending, what="the projector idle")

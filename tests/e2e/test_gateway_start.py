"""A workflow started over HTTP on the embedded stack: the gateway, as its own NATS identity,
publishes the request, and the projector, holding it to the development sender's grant,
starts the workflow; the sender reads the decision back with the event id it was given."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from interlock.config import access
from interlock.config.settings import Settings
from interlock.services.gateway.reads import signed_content
from tests.support.cli import free_port, interlock_up
from tests.support.gateway_webhooks import signed
from tests.support.polling import eventually

pytestmark = pytest.mark.timeout(180)
REQUEST = {
    "customer_id": "c-77",
    "subject": "Refund for a double charge",
    "body": "Charged twice.",
    "amount": "20.00",
    "currency": "EUR",
}


async def test_a_workflow_started_over_http_is_accepted_by_the_projector(tmp_path: Path) -> None:
    home, port = tmp_path / "home", free_port()
    base = f"http://127.0.0.1:{port}"
    with interlock_up(home, "projector", "relay", "gateway", INTERLOCK_GATEWAY_PORT=str(port)):
        secrets = access.secrets_of(Settings(home=home)).directory
        secret = json.loads((secrets / "gateway.json").read_text())["dev"]
        body, headers = signed(
            {"payload": REQUEST, "tenant_id": "acme"}, sender="dev", secret=secret
        )
        async with httpx.AsyncClient() as http:

            async def started() -> httpx.Response | None:
                try:  # `up` is ready once the consumers fetch; the gateway may still be binding.
                    return await http.post(
                        f"{base}/v1/workflows/support", content=body, headers=headers
                    )
                except httpx.ConnectError:
                    return None

            answer = await eventually(started, within=30, every=0.2, what="the gateway's answer")
            assert answer.status_code == 202, answer.text
            workflow_id, event_id = answer.json()["workflow_id"], answer.json()["event_id"]
            target = f"/v1/workflows/support/{workflow_id}?event_id={event_id}&tenant_id=acme"

            async def decided() -> dict[str, Any] | None:
                _, read_headers = signed(signed_content("GET", target), sender="dev", secret=secret)
                read = await http.get(base + target, headers=read_headers)
                if read.status_code != 200:
                    return None
                found: dict[str, Any] = read.json()
                return found if found["event"]["decision"] != "pending" else None

            read = await eventually(decided, within=60, every=0.2, what="the start's decision")
    assert read["event"]["decision"] == "accepted", read
    assert (read["workflow_id"], read["tenant_id"]) == (workflow_id, "acme")

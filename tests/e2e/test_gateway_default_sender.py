"""The embedded stack's gateway accepts webhooks out of the box: `interlock up` configures a
development sender, `dev`, whose secret it keeps with the installation's other secrets and
whose location it prints."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from interlock.config import access
from interlock.config.settings import Settings
from tests.support.cli import free_port, interlock_up
from tests.support.gateway_webhooks import APPROVAL, PATH, signed
from tests.support.polling import eventually

pytestmark = pytest.mark.timeout(180)


async def test_up_configures_a_development_sender_that_the_gateway_accepts(
    tmp_path: Path,
) -> None:
    home, port = tmp_path / "home", free_port()
    only = ("projector", "relay", "gateway")
    with interlock_up(home, *only, INTERLOCK_GATEWAY_PORT=str(port)) as printed:
        secrets = access.secrets_of(Settings(home=home)).directory
        assert "sender `dev`" in printed
        assert str(secrets / "gateway.json") in printed
        assert (secrets / "gateway.json").stat().st_mode & 0o077 == 0
        secret = json.loads((secrets / "gateway.json").read_text())["dev"]
        assert secret not in printed
        body, headers = signed(APPROVAL, sender="dev", secret=secret)

        async def answered() -> httpx.Response | None:
            # `up` is ready once the consumers fetch; the gateway may still be binding.
            async with httpx.AsyncClient() as http:
                try:
                    return await http.post(
                        f"http://127.0.0.1:{port}{PATH}", content=body, headers=headers
                    )
                except httpx.ConnectError:
                    return None

        answer = await eventually(answered, within=30, every=0.2, what="the gateway's answer")
        assert answer.status_code == 202, answer.text

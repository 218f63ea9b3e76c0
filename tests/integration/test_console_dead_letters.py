"""Dead letters on the console's operations page: listed without their bodies, redriven by an
operator (only when the console may) with the same effect as `interlock dlq redrive`; the
console's own broker identity reads them and can neither delete them nor forge a message."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import nats
import pytest

from interlock.config.settings import Settings
from interlock.console import deadletters
from interlock.contracts import subjects
from interlock.contracts.urls import nats_inbox
from tests.support.console import console_settings, csrf_of, signed_in
from tests.support.harness import Harness, projector_running
from tests.support.payloads import envelope
from tests.support.polling import eventually

pytestmark = pytest.mark.timeout(120)
REDRIVE = re.compile(r'action="/operations/dead-letters/(\d+)/redrive"')


async def _dead_cancel(h: Harness, workflow_id: str) -> None:
    """A cancellation that arrives before its workflow: dead-lettered `unknown_workflow`."""
    cancel = envelope("CANCEL_REQUESTED", workflow_id=workflow_id, role="operator", event_id="c-1")
    await h.publish(cancel)


async def _listed(client: httpx.AsyncClient, workflow_id: str) -> str:
    async def page() -> str | None:
        text = (await client.get("/operations")).text
        return text if "unknown_workflow" in text and workflow_id in text else None

    return await eventually(page, what="the dead letter on the operations page", within=60)


async def test_an_operator_redrives_a_dead_letter_an_approver_may_not(
    nats_url: str, database_url: str, tmp_path: Path
) -> None:
    settings = console_settings(Settings(home=tmp_path), console_redrive=True)
    async with projector_running(nats_url, database_url) as h:
        await _dead_cancel(h, "late")
        async with signed_in(settings, nats_url, database_url, "alice") as approver:
            page = await _listed(approver, "late")
            assert REDRIVE.search(page) is None  # an approver is offered no redrive
            assert "Redriving needs the operator role" in page
            posted = await approver.post(
                "/operations/dead-letters/1/redrive", data={"csrf_token": csrf_of(page)}
            )
            assert posted.status_code == 403
        async with signed_in(settings, nats_url, database_url, "olga") as client:
            page = await _listed(client, "late")
            found = REDRIVE.search(page)
            assert found is not None
            letter = found.group(1)
            await h.publish(envelope("START", workflow_id="late", event_id="late-req"))
            await h.at_state("late", "CLASSIFYING")

            sent = await client.post(
                f"/operations/dead-letters/{letter}/redrive",
                data={"csrf_token": csrf_of(page)},
            )
            assert sent.status_code == 303
            after = (await client.get("/operations")).text
            assert f"Dead letter {letter} redriven" in after
            assert REDRIVE.search(after) is None
            await h.at_state("late", "CANCELLED")
            again = await client.post(
                f"/operations/dead-letters/{letter}/redrive",
                data={"csrf_token": csrf_of(after)},
            )
            assert again.status_code == 303
            assert "not redriven: no dead letter" in (await client.get("/operations")).text


async def test_redrive_needs_the_csrf_token_and_the_setting(
    nats_url: str, database_url: str, tmp_path: Path
) -> None:
    allowed = console_settings(Settings(home=tmp_path), console_redrive=True)
    async with projector_running(nats_url, database_url) as h:
        await _dead_cancel(h, "kept")
        async with signed_in(allowed, nats_url, database_url, "olga") as operator:
            forged = await operator.post("/operations/dead-letters/1/redrive", data={})
            assert forged.status_code == 403
        off = console_settings(Settings(home=tmp_path))
        async with signed_in(off, nats_url, database_url, "olga") as operator:
            page = await _listed(operator, "kept")
            assert REDRIVE.search(page) is None
            assert "INTERLOCK_CONSOLE_REDRIVE=1" in page
            posted = await operator.post(
                "/operations/dead-letters/1/redrive", data={"csrf_token": csrf_of(page)}
            )
            assert posted.status_code == 303
            assert "Redriving from the console is off" in (await operator.get("/operations")).text
        assert (await deadletters.newest(nats_url))["total"] == 1


async def test_the_consoles_identity_reads_dead_letters_but_cannot_delete_or_forge(
    nats_url: str, database_url: str, identity_url: Callable[[str], str]
) -> None:
    console = identity_url("console")
    async with projector_running(nats_url, database_url) as h:
        await _dead_cancel(h, "ghost")

        async def one() -> dict[str, Any] | None:
            found = await deadletters.newest(console)
            return found if found["total"] == 1 else None

        read = await eventually(one, what="the dead letter read as the console", within=60)
        assert "error" not in read
        [letter] = read["letters"]
        assert (letter["reason"], letter["workflow_id"]) == ("unknown_workflow", "ghost")
        assert "body" not in letter
        refused = await deadletters.redrive(console, letter["id"], "olga")
        assert refused is not None
        assert "did not take it" in refused
        assert (await deadletters.newest(nats_url))["total"] == 1
        nc = await nats.connect(console, inbox_prefix=nats_inbox(console))
        try:
            with pytest.raises((TimeoutError, nats.errors.TimeoutError)):
                await nc.jetstream().publish(
                    subjects.request("support", "upstream"), b"{}", timeout=0.5
                )
        finally:
            await nc.close()

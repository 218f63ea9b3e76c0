"""Hostile input, round two, at the projector (findings 2 and 3), against real NATS JetStream
and PostgreSQL: a timestamp of year 1 or 9999 is dead-lettered `bad_timestamp` at once (not
delivered until its deliveries run out) and audited with its reason on the workflow it names;
a client of another tenant leaves nothing in this tenant's audit, its refusal dead-lettered
with its name."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from interlock.config.settings import Settings
from interlock.contracts import subjects
from interlock.contracts.clients import ClientPolicy
from interlock.messaging import letters
from interlock.projector.refusal_bounds import RefusalBounds
from tests.support.drive import start, to_awaiting_approval
from tests.support.harness import Harness, projector_running
from tests.support.payloads import envelope
from tests.support.polling import eventually

pytestmark = pytest.mark.timeout(90)
EVERY = frozenset({"*"})
CLIENTS = {
    "upstream": ClientPolicy(publish=frozenset({"request"}), types=EVERY, tenants=EVERY),
    "approvals": ClientPolicy(
        publish=frozenset({"signal"}),
        types=EVERY,
        tenants=EVERY,
        roles=frozenset({"support_approver", "support_supervisor", "operator"}),
    ),
    "globex_desk": ClientPolicy(
        publish=frozenset({"signal"}),
        types=EVERY,
        tenants=frozenset({"globex"}),
        roles=frozenset({"support_approver"}),
    ),
}


async def _letter(h: Harness, event_id: str) -> letters.Letter:
    async def found() -> letters.Letter | None:
        async for dead in letters.letters(h.nc.jetstream(), source="projector"):
            if dead.envelope().get("event_id") == event_id:
                return dead
        return None

    return await eventually(found, what=f"the dead letter of {event_id}", within=20)


async def _audit(h: Harness, workflow_id: str, event_id: str) -> list[tuple[str, bool]]:
    rows = await h.scalar(
        "SELECT coalesce(json_agg(json_build_array(reason, accepted)), '[]') FROM audit"
        " WHERE workflow_id = :wf AND event_id = :ev",
        wf=workflow_id,
        ev=event_id,
    )
    return [(reason, accepted) for reason, accepted in rows]


@pytest.mark.parametrize("year", [1, 9999])
async def test_an_absurd_timestamp_is_dead_lettered_at_once_and_audited(
    nats_url: str, database_url: str, year: int
) -> None:
    async with projector_running(nats_url, database_url, settings=Settings(clients=CLIENTS)) as h:
        workflow_id = await start(h)
        await to_awaiting_approval(h, workflow_id)
        approval = envelope(
            "APPROVED",
            workflow_id=workflow_id,
            event_id=f"approve-{year}",
            occurred_at=datetime(year, 1, 1, tzinfo=UTC),
        )
        await h.publish(approval)

        dead = await _letter(h, approval.event_id)

        assert dead.reason == "bad_timestamp"
        assert dead.headers.get("Nats-Num-Delivered", "1") == "1"
        audited = await eventually(
            lambda: _audit(h, workflow_id, approval.event_id), what="the audit row"
        )
        assert audited == [("bad_timestamp", False)]
        assert (await h.view(workflow_id))["state"] == "AWAITING_APPROVAL"


async def test_a_client_of_another_tenant_is_dead_lettered_and_leaves_no_audit_row(
    nats_url: str, database_url: str
) -> None:
    async with projector_running(nats_url, database_url, settings=Settings(clients=CLIENTS)) as h:
        workflow_id = await start(h)  # tenant acme
        await to_awaiting_approval(h, workflow_id)
        forged = envelope("APPROVED", workflow_id=workflow_id, event_id="from-globex")
        await h.publish(forged, subject=subjects.signal("support", "globex_desk"))

        dead = await _letter(h, forged.event_id)

        assert (dead.reason, "globex_desk" in dead.detail) == ("client_not_allowed_tenant", True)
        assert await _audit(h, workflow_id, forged.event_id) == []


async def test_another_message_under_a_decided_event_id_is_refused_and_audited(
    nats_url: str, database_url: str
) -> None:
    async with projector_running(nats_url, database_url, settings=Settings(clients=CLIENTS)) as h:
        workflow_id = await start(h)
        request_id = next(e["event_id"] for e in (await h.view(workflow_id))["audit"])
        cancel = envelope(
            "CANCEL_REQUESTED", workflow_id=workflow_id, role="operator", event_id=request_id
        )
        await h.publish(cancel, msg_id="another-message")

        audited = await eventually(
            lambda: _refused(h, workflow_id, request_id), what="the refusal of the reused id"
        )

        assert audited == [("event_id_reused", False)]
        assert (await h.view(workflow_id))["state"] == "CLASSIFYING"


async def _refused(h: Harness, workflow_id: str, event_id: str) -> list[tuple[str, bool]]:
    return [row for row in await _audit(h, workflow_id, event_id) if not row[1]]


async def test_a_clients_refusals_past_its_bound_land_in_the_dead_letters_naming_it(
    nats_url: str, database_url: str
) -> None:
    bound = RefusalBounds().per_workflow
    async with projector_running(nats_url, database_url, settings=Settings(clients=CLIENTS)) as h:
        workflow_id = await start(h)
        stale = [
            envelope(
                "CANCEL_REQUESTED",
                workflow_id=workflow_id,
                role="operator",
                event_id=f"stale-{n}",
                expected_version=999,
            )
            for n in range(bound + 5)
        ]
        for event in stale:
            await h.publish(event)

        over = [await _letter(h, event.event_id) for event in stale[bound:]]
        refused = await h.scalar(
            "SELECT count(*) FROM audit WHERE workflow_id = :wf AND NOT accepted", wf=workflow_id
        )

    assert refused == bound
    assert {letter.reason for letter in over} == {"refusals_over_limit"}
    assert all("approvals" in letter.detail for letter in over)
    assert all("stale_version" in letter.detail for letter in over)

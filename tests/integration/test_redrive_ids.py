"""A redriven letter's message id is nobody else's to spend: a client that published junk
under the id a redrive of letter N would have used (`redrive-N`) does not make the broker drop
the redriven copy as a duplicate, and the letter is redriven and decided."""

from __future__ import annotations

import pytest

from interlock.contracts import subjects
from interlock.messaging import letters
from tests.support.harness import projector_running
from tests.support.payloads import envelope
from tests.support.polling import eventually

pytestmark = pytest.mark.timeout(120)


async def test_junk_under_a_coming_redrives_id_does_not_swallow_the_redrive(
    nats_url: str, database_url: str
) -> None:
    cancel = envelope("CANCEL_REQUESTED", workflow_id="late", role="operator", event_id="c-9")
    async with projector_running(nats_url, database_url) as h:
        js = h.nc.jetstream()
        await h.publish(cancel)  # before its workflow exists: dead-lettered unknown_workflow

        async def dead() -> letters.Letter | None:
            found = [d async for d in letters.letters(js, reason="unknown_workflow")]
            return found[0] if found else None

        letter = await eventually(dead, what="the cancel dead-lettered", within=30)
        squat = await js.publish(
            subjects.signal("support", "approvals"),
            b"{junk",
            headers={subjects.HEADER_MSG_ID: f"redrive-{letter.id}"},
        )
        assert not squat.duplicate
        await h.publish(envelope("START", workflow_id="late", event_id="late-req"))
        await h.at_state("late", "CLASSIFYING")

        await letters.redrive(js, letter)

        await h.at_state("late", "CANCELLED")

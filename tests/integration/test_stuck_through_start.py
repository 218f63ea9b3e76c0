"""Stuck detection of workflows started the real way (START through the projector), whose
armed deadline timer is days away: a stage that never answers is still reported stuck
within the state's bound, by the relay's gauge and by the console's stuck filter alike."""

from __future__ import annotations

import pytest

from interlock.console import reads
from interlock.relay.gauges import Gauges
from tests.support.drive import start
from tests.support.harness import Harness
from tests.support.polling import eventually
from tests.support.workflows import REGISTRY

pytestmark = pytest.mark.timeout(60)

BOUND_S = 1.0
"""The state's bound in these tests: short, so the test waits about a second."""


async def _has_deadline_timer(h: Harness, workflow_id: str) -> bool:
    armed = await h.scalar(
        "SELECT count(*) FROM timers WHERE workflow_id = :w AND status = 'armed' "
        "AND fire_at > now() + interval '1 day'",
        w=workflow_id,
    )
    return bool(armed)


async def test_a_classify_stage_that_never_answers_is_stuck_within_the_state_bound(
    h: Harness, database_url: str
) -> None:
    workflow_id = await start(h)  # nothing runs the classify stage
    assert await _has_deadline_timer(h, workflow_id), "support arms its 7-day deadline"
    gauges = Gauges(database_url, registry=REGISTRY, stuck_after=BOUND_S)

    async def flagged() -> bool:
        return (await gauges.sample()).stuck == {("support", "CLASSIFYING"): 1}

    await eventually(flagged, within=BOUND_S + 10, what="CLASSIFYING reported stuck")
    rows, _ = await reads.list_workflows(
        h.engine, reads.Filters(stuck=True), registry=REGISTRY, stuck_after=BOUND_S
    )
    assert [r["id"] for r in rows] == [workflow_id]


async def test_a_per_state_bound_overrides_the_default(h: Harness, database_url: str) -> None:
    workflow_id = await start(h)
    per_state = {"support": {"stuck_after_seconds_by_state": {"CLASSIFYING": BOUND_S}}}
    hour = 3600.0
    gauges = Gauges(database_url, registry=REGISTRY, stuck_after=hour, parameters=per_state)
    patient = Gauges(database_url, registry=REGISTRY, stuck_after=hour)

    async def flagged() -> bool:
        return (await gauges.sample()).stuck == {("support", "CLASSIFYING"): 1}

    await eventually(flagged, within=BOUND_S + 10, what="CLASSIFYING stuck by its own bound")
    assert (await patient.sample()).stuck == {}
    rows, _ = await reads.list_workflows(
        h.engine,
        reads.Filters(stuck=True),
        registry=REGISTRY,
        stuck_after=hour,
        parameters=per_state,
    )
    assert [r["id"] for r in rows] == [workflow_id]

"""Projector partitions against real NATS and PostgreSQL: every workflow decided by exactly
one partition, in its stream order, nothing lost, nothing decided twice; malformed messages
dead-lettered once; the inbound stream and its consumers provisioned for one layout only."""

from __future__ import annotations

import json
from typing import Any

import pytest
from nats.aio.client import Client
from nats.js.api import RetentionPolicy
from sqlalchemy import text

from interlock.contracts import subjects
from interlock.contracts.partitions import partition_of
from interlock.messaging.errors import PartitionLayoutError
from interlock.messaging.streams import provision
from tests.support.drive import answer, race_cancels, start, start_then_cancel_each
from tests.support.harness import Harness, projector_running
from tests.support.payloads import envelope
from tests.support.polling import eventually
from tests.support.workflows import STAGES

pytestmark = pytest.mark.timeout(120)


async def _projector_consumers(nc: Client) -> list[str]:
    found = await nc.jetstream().consumers_info(subjects.STREAM_IN)
    return sorted(i.name for i in found if subjects.is_projector_consumer(i.name))


async def _retention(nc: Client) -> RetentionPolicy:
    info = await nc.jetstream().stream_info(subjects.STREAM_IN)
    return RetentionPolicy(info.config.retention)


async def _drained(h: Harness) -> None:
    """Every partition has acknowledged every inbound message (interest retention keeps a
    message until all have)."""

    async def empty() -> bool:
        infos = await h.nc.jetstream().streams_info()
        inbound = [i for i in infos if (i.config.name or "").startswith(subjects.STREAM_IN)]
        return sum(i.state.messages for i in inbound) == 0

    await eventually(empty, what="the inbound streams drained by every partition")


async def _dead_letter_count(h: Harness) -> int:
    return int((await h.nc.jetstream().stream_info(subjects.STREAM_DLQ)).state.messages)


async def test_many_workflows_through_two_partitions_each_event_decided_once_in_order(
    nats_url: str, database_url: str
) -> None:
    """START, CANCEL a, CANCEL b per workflow, back to back: a is accepted and b refused as
    terminal (the order kept), every event audited once, versions gap-free."""
    count = 40
    async with projector_running(nats_url, database_url, partitions=2, workers=8) as h:
        ids = [f"many-{i}" for i in range(count)]
        assert {partition_of("acme", w, 2) for w in ids} == {0, 1}  # both partitions work
        for workflow_id in ids:
            await h.publish(envelope("START", workflow_id=workflow_id, event_id=f"{workflow_id}-s"))
            for tag in ("a", "b"):
                cancel = envelope(
                    "CANCEL_REQUESTED",
                    workflow_id=workflow_id,
                    role="operator",
                    event_id=f"{workflow_id}-{tag}",
                )
                await h.publish(cancel)
        for workflow_id in ids:
            await h.decided(workflow_id, f"{workflow_id}-b")
        await _drained(h)
        async with h.engine.connect() as conn:
            rows = (
                await conn.execute(
                    text(
                        "SELECT workflow_id, event_id, accepted, state_version, reason "
                        "FROM audit ORDER BY id"
                    )
                )
            ).all()
        assert await _dead_letter_count(h) == 0
    by_workflow: dict[str, list[Any]] = {}
    for row in rows:
        by_workflow.setdefault(row.workflow_id, []).append(row)
    assert sorted(by_workflow) == sorted(ids)
    for workflow_id, audited in by_workflow.items():
        events = [r.event_id for r in audited]
        assert sorted(events) == sorted(f"{workflow_id}-{t}" for t in "sab")  # each once
        accepted = {r.event_id: r.state_version for r in audited if r.accepted}
        assert accepted == {f"{workflow_id}-s": 1, f"{workflow_id}-a": 2}
        (refused,) = [r for r in audited if not r.accepted]
        assert (refused.event_id, refused.reason) == (f"{workflow_id}-b", "terminal")


async def test_with_two_partitions_a_cancel_right_behind_its_request_is_never_lost(
    nats_url: str, database_url: str
) -> None:
    """Two replicas of each of two partitions: a replica may take the CANCEL before the
    other replica has committed the START; it waits for the workflow."""
    async with projector_running(
        nats_url, database_url, projectors=2, partitions=2, workers=8
    ) as h:
        await start_then_cancel_each(h, "pair", 60)
        await _drained(h)


async def test_three_partitions_racing_commit_each_version_exactly_once(
    nats_url: str, database_url: str
) -> None:
    async with projector_running(
        nats_url, database_url, projectors=2, partitions=3, workers=8
    ) as h:
        workflow_id = await start(h)

        entered, decisions = await race_cancels(h, workflow_id)

        versions = sorted(d["state_version"] for d in decisions)
        assert all(d["accepted"] for d in decisions)
        assert versions == list(range(entered["version"] + 1, entered["version"] + 41))
        assert (await answer(h, workflow_id, "ACTION_EXECUTED"))["to_state"] == "COMPENSATING"


async def test_with_two_partitions_a_malformed_message_is_dead_lettered_once(
    nats_url: str, database_url: str
) -> None:
    """Partition 0 alone refuses what has no workflow (test_partitions pins that; the dead
    letters' stream would also drop a second letter of the same message as a duplicate)."""
    async with projector_running(nats_url, database_url, partitions=2) as h:
        js = h.nc.jetstream()
        await js.publish(subjects.request("support", "upstream"), b"{not json")
        await js.publish(
            subjects.request("support", "upstream"), json.dumps({"type": "START"}).encode()
        )
        # a signal for a workflow nobody started: its own partition refuses it, once
        stray = envelope("CANCEL_REQUESTED", workflow_id="nobody", role="operator")
        await h.publish(stray)

        await _drained(h)  # both partitions acknowledged all three (one refused each)

        async def three_letters() -> bool:
            return await _dead_letter_count(h) >= 3

        await eventually(three_letters, what="three dead letters")
        reasons: list[str] = []
        for sequence in range(1, await _dead_letter_count(h) + 1):
            letter = await js.get_msg(subjects.STREAM_DLQ, sequence)
            reasons.append((letter.headers or {}).get(subjects.HEADER_DLQ_REASON, "?"))
    assert sorted(reasons) == ["bad_json", "schema_mismatch", "unknown_workflow"]


async def test_provisioning_keeps_one_partition_layout(nc: Client) -> None:
    js = nc.jetstream()
    await provision(js, STAGES, partitions=2)
    assert await _retention(nc) == RetentionPolicy.INTEREST
    assert await _projector_consumers(nc) == ["projector-p0-of-2", "projector-p1-of-2"]

    await provision(js, STAGES, partitions=3)
    assert await _projector_consumers(nc) == [f"projector-p{k}-of-3" for k in range(3)]

    await provision(js, STAGES)  # back to one: the interest stream serves it too
    assert await _projector_consumers(nc) == ["projector"]
    assert await _retention(nc) == RetentionPolicy.INTEREST


async def test_a_work_queue_stream_is_repartitioned_only_when_asked_and_empty(
    nc: Client,
) -> None:
    js = nc.jetstream()
    await provision(js, STAGES)
    assert await _retention(nc) == RetentionPolicy.WORK_QUEUE
    await js.publish(subjects.request("support", "upstream"), b"{}")

    with pytest.raises(PartitionLayoutError, match="migrate --repartition"):
        await provision(js, STAGES, partitions=2)
    with pytest.raises(PartitionLayoutError, match="still holds 1 message"):
        await provision(js, STAGES, partitions=2, repartition=True)
    # refused: still the work queue it was, taking messages, its message kept
    await js.publish(subjects.request("support", "upstream"), b"{}")
    info = await js.stream_info(subjects.STREAM_IN)
    assert (RetentionPolicy(info.config.retention), info.state.messages) == (
        RetentionPolicy.WORK_QUEUE,
        2,
    )
    assert await _projector_consumers(nc) == ["projector"]

    await js.purge_stream(subjects.STREAM_IN)  # what a projector deciding them amounts to
    await provision(js, STAGES, partitions=2, repartition=True)
    assert await _retention(nc) == RetentionPolicy.INTEREST
    assert await _projector_consumers(nc) == ["projector-p0-of-2", "projector-p1-of-2"]

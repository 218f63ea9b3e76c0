"""Changing the partition count on a running stack, against a real nats-server: the slots that
move are closed and drained by the old projectors while the others keep their messages, the
new layout keeps what stayed, and a workflow in flight across the change is decided in the
order its events were sent, by one partition at a time."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from nats.aio.client import Client
from nats.js import JetStreamContext

from interlock.contracts import subjects
from interlock.contracts.envelope import Envelope
from interlock.contracts.partitions import routing_key, slot_of
from interlock.messaging.errors import DrainTimedOut, PartitionLayoutError
from interlock.messaging.slot_drain import drain
from interlock.messaging.streams import provision
from tests.support.cli import cli_env, cli_streams
from tests.support.harness import keyed_subject, projector_running
from tests.support.payloads import envelope
from tests.support.polling import eventually
from tests.support.routing import REFUSED, key_that, refused
from tests.support.workflows import STAGES

pytestmark = pytest.mark.timeout(150)


async def _held(js: JetStreamContext, stream: str) -> int:
    return int((await js.stream_info(stream)).state.messages)


async def test_only_the_moving_slots_are_closed_and_drained(nc: Client) -> None:
    js = nc.jetstream()
    await provision(js, STAGES, partitions=2, repartition=True)
    moving, staying = key_that(True), key_that(False)
    moving_stream = subjects.partition_stream(slot_of(moving) % 2)
    staying_stream = subjects.partition_stream(slot_of(staying) % 2)
    await js.publish(subjects.signal("support", "approvals", moving), b"{}")
    await js.publish(subjects.signal("support", "approvals", staying), b"{}")
    looks: list[bool] = []
    draining = asyncio.create_task(
        drain(js, 4, within=60, poll=0.05, progress=lambda plan: looks.append(plan.drained))
    )

    async def closed() -> bool:
        return await refused(js, subjects.signal("support", "approvals", moving))

    await eventually(closed, what="the moving slot closed")

    async def looked() -> bool:
        return bool(looks)

    await eventually(looked, what="the drain's first look")
    assert looks[0] is False, "drained with a message of a moving slot still held"
    assert not draining.done()
    assert not await refused(js, subjects.signal("support", "approvals", staying))
    # the old partition decides (acknowledges) what it holds of the moving slot
    consumer = subjects.projector_consumer(slot_of(moving) % 2, 2)
    pull = await js.pull_subscribe_bind(consumer, stream=moving_stream)
    while not draining.done():
        try:
            fetched = await pull.fetch(10, timeout=0.5)
        except TimeoutError:
            continue
        for msg in fetched:
            if moving in (msg.subject or "").split("."):
                await msg.ack()
    plan = await draining
    assert plan.drained
    assert plan.before == 2
    assert plan.after == 4
    assert slot_of(moving) in plan.moving[moving_stream]
    held_staying = await _held(js, staying_stream)
    assert held_staying >= 1

    await provision(js, STAGES, partitions=4)
    # what stayed is still there, for the new layout's consumer of that stream
    assert await _held(js, staying_stream) == held_staying
    new_consumer = subjects.projector_consumer(slot_of(staying) % 4, 4)
    info = await js.consumer_info(staying_stream, new_consumer)
    assert info.num_pending + info.num_ack_pending == held_staying
    # the moving slot is open again, on its new partition's stream
    new_stream = subjects.partition_stream(slot_of(moving) % 4)
    before = await _held(js, new_stream)
    await js.publish(subjects.signal("support", "approvals", moving), b"{}")
    assert await _held(js, new_stream) == before + 1


async def test_provisioning_refuses_a_change_while_a_moving_slot_holds_messages(
    nc: Client,
) -> None:
    js = nc.jetstream()
    await provision(js, STAGES, partitions=2, repartition=True)
    moving = key_that(True)
    await js.publish(subjects.signal("support", "approvals", moving), b"{}")
    held = subjects.partition_stream(slot_of(moving) % 2)
    with pytest.raises(PartitionLayoutError, match=f"{held}: slot\\(s\\) {slot_of(moving)}\\b"):
        await provision(js, STAGES, partitions=4)
    # refused: the old layout stands whole, taking messages of every slot, its own kept
    assert not await refused(js, subjects.signal("support", "approvals", moving))
    assert await _held(js, held) == 2
    staying = key_that(False)
    assert not await refused(js, subjects.signal("support", "approvals", staying))


async def test_a_drain_that_runs_out_of_time_opens_the_slots_again(nc: Client) -> None:
    js = nc.jetstream()
    await provision(js, STAGES, partitions=2, repartition=True)
    moving = key_that(True)
    stream = subjects.partition_stream(slot_of(moving) % 2)
    config = (await js.stream_info(stream)).config
    await js.publish(subjects.signal("support", "approvals", moving), b"{}")
    with pytest.raises(DrainTimedOut, match="still hold messages"):
        await drain(js, 4, within=1, poll=0.1)
    assert (await js.stream_info(stream)).config.subjects == config.subjects
    assert not await refused(js, subjects.signal("support", "approvals", moving))


async def _send_in_order(
    js: JetStreamContext, events: list[Envelope], within: float = 90.0
) -> None:
    """One publisher's events in order, each retried while refused (as a publisher does while
    its slot moves), the next sent only once the broker stored the one before."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    for event in events:
        while True:
            try:
                await js.publish(keyed_subject(event), event.to_bytes())
                break
            except (*REFUSED, TimeoutError):
                assert loop.time() < deadline, f"{event.event_id} refused for {within}s"
                await asyncio.sleep(0.05)


async def test_a_workflow_in_flight_across_a_change_keeps_its_order(
    nats_url: str, database_url: str, nc: Client
) -> None:
    """Sixteen workflows, each sent START, two approvals it is not waiting for (refused, in
    order, into its audit) and a cancellation, one at a time, while the count goes from 2 to 4
    under them: each ends cancelled with its audit in the order sent, every event once."""
    ids = [f"moving-{i}" for i in range(16)]
    moves = {
        w: slot_of(routing_key("acme", w)) % 4 != slot_of(routing_key("acme", w)) % 2 for w in ids
    }
    assert any(moves.values())
    assert not all(moves.values())
    sent = {
        w: [
            envelope("START", workflow_id=w, event_id=f"{w}-start"),
            envelope("APPROVED", workflow_id=w, event_id=f"{w}-early-1"),
            envelope("APPROVED", workflow_id=w, event_id=f"{w}-early-2"),
            envelope("CANCEL_REQUESTED", workflow_id=w, role="operator", event_id=f"{w}-cancel"),
        ]
        for w in ids
    }
    async with projector_running(nats_url, database_url, partitions=2) as old:
        for w in ids:
            await old.publish(sent[w][0])
        senders = [asyncio.create_task(_send_in_order(nc.jetstream(), sent[w][1:])) for w in ids]
        plan = await drain(nc.jetstream(), 4, within=60, poll=0.05)
        assert plan.drained
    async with projector_running(nats_url, database_url, partitions=4) as new:
        await asyncio.gather(*senders)
        for w in ids:
            await new.at_state(w, "CANCELLED")

            async def audited(w: str = w) -> list[str] | None:
                rows = await new.scalar(
                    "SELECT array_agg(event_id ORDER BY id) FROM audit WHERE workflow_id = :w",
                    w=w,
                )
                return rows if rows and len(rows) >= 4 else None

            order = await eventually(audited, what=f"the audit of {w}")
            assert order == [e.event_id for e in sent[w]], w
        letters = await new.scalar("SELECT count(*) FROM audit WHERE reason = 'partition_mismatch'")
        assert letters == 0


async def test_the_command_drains_reports_and_refuses_in_one_line(
    nc: Client, nats_url: str, database_url: str, tmp_path: Path
) -> None:
    js = nc.jetstream()
    env = cli_env(tmp_path, INTERLOCK_NATS_URL=nats_url, INTERLOCK_DATABASE_URL=database_url)
    await provision(js, STAGES)
    code, _, err = await cli_streams(env, "repartition", "4")
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert "migrate --repartition" in err

    await provision(js, STAGES, partitions=2, repartition=True)
    moving = key_that(True)
    await js.publish(subjects.signal("support", "approvals", moving), b"{}")
    code, _, err = await cli_streams(env, "repartition", "4", "--timeout", "1")
    assert code == 1
    assert "still hold messages" in err
    assert not await refused(js, subjects.signal("support", "approvals", moving))

    for k in (0, 1):
        await js.purge_stream(subjects.partition_stream(k))  # what deciding them amounts to
    code, out, err = await cli_streams(env, "repartition", "4", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert (report["from"], report["to"], report["drained"]) == (2, 4, True)
    assert slot_of(moving) in report["moving_slots"][subjects.partition_stream(slot_of(moving) % 2)]
    assert await refused(js, subjects.signal("support", "approvals", moving))

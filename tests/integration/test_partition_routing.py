"""Routing by the broker against a real nats-server: a keyed subject is mapped to the slot the
projector computes, each partition's stream holds only its own workflows' messages, a subject
that lies about its key is dead-lettered, and a change of count waits for the slots that move."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from nats.aio.client import Client
from nats.js import JetStreamContext

from interlock.contracts import subjects
from interlock.contracts.partitions import SLOTS, partition_of, routing_key, slot_of
from interlock.messaging.errors import PartitionLayoutError
from interlock.messaging.partition_streams import deliveries
from interlock.messaging.streams import provision
from tests.support.drive import start_then_cancel_each
from tests.support.harness import projector_running
from tests.support.payloads import envelope
from tests.support.polling import eventually
from tests.support.routing import key_that
from tests.support.workflows import STAGES

pytestmark = pytest.mark.timeout(120)


async def _inbound_streams(js: JetStreamContext) -> dict[str, int]:
    """Every inbound stream and the messages it holds."""
    infos = await js.streams_info()
    return {
        i.config.name: int(i.state.messages)
        for i in infos
        if i.config.name and i.config.name.startswith(subjects.STREAM_IN)
    }


async def test_the_broker_maps_every_key_to_the_slot_the_projector_computes(nc: Client) -> None:
    js = nc.jetstream()
    await provision(js, STAGES)
    keys = [routing_key("acme", f"wf-{i}") for i in range(200)]
    for key in keys:
        await js.publish(subjects.signal("support", "approvals", key), b"{}")
    stored = [await js.get_msg(subjects.STREAM_IN, seq) for seq in range(1, len(keys) + 1)]

    slots = [subjects.parse_inbound(m.subject or "") for m in stored]
    assert [(s.key, s.slot) for s in slots] == [(k, slot_of(k)) for k in keys]
    assert len({s.slot for s in slots}) > SLOTS // 2


async def test_each_partition_is_delivered_only_its_own_workflows_messages(
    nats_url: str, database_url: str
) -> None:
    """A START and a CANCEL per workflow, keyed as clients send them: each partition's
    consumers are delivered exactly its own workflows' messages, the shared stream none."""
    count, partitions = 24, 2
    async with projector_running(nats_url, database_url, partitions=partitions) as h:
        ids = [f"routed-{i}" for i in range(count)]
        await start_then_cancel_each(h, "routed", count)
        js = h.nc.jetstream()
        per_message = 2
        own = {
            k: per_message * sum(partition_of("acme", w, partitions) == k for w in ids)
            for k in range(partitions)
        }
        assert await deliveries(js, partitions) == own
        for k in range(partitions):
            info = await js.consumer_info(subjects.STREAM_IN, f"projector-p{k}-of-{partitions}")
            assert (info.delivered.consumer_seq or 0) == 0
        assert set(await _inbound_streams(js)) == {
            subjects.STREAM_IN,
            *(subjects.partition_stream(k) for k in range(partitions)),
        }


async def test_a_subject_that_lies_about_its_workflow_is_dead_lettered_never_decided(
    nats_url: str, database_url: str
) -> None:
    async with projector_running(nats_url, database_url, partitions=2) as h:
        await h.publish(envelope("START", workflow_id="victim", event_id="victim-req"))
        await eventually(lambda: h.find("victim"), what="the victim started")
        cancel = envelope("CANCEL_REQUESTED", workflow_id="victim", role="operator")
        # Routed under another workflow's key, to the slot that key maps to: the partition
        # that reads it is not the victim's, and refuses it.
        home = partition_of("acme", "victim", 2)
        decoy = next(
            f"decoy-{i}" for i in range(99) if partition_of("acme", f"decoy-{i}", 2) != home
        )
        lie = routing_key("acme", decoy)
        subject = f"wf.in.slot.{slot_of(lie)}.signal.support.{lie}.approvals"
        await h.nc.jetstream().publish(subject, cancel.to_bytes())

        async def letter() -> dict[str, str] | None:
            info = await h.nc.jetstream().stream_info(subjects.STREAM_DLQ)
            if not info.state.messages:
                return None
            found = await h.nc.jetstream().get_msg(subjects.STREAM_DLQ, 1)
            return dict(found.headers or {})

        headers = await eventually(letter, what="the lie dead-lettered")
        assert headers[subjects.HEADER_DLQ_REASON] == "partition_mismatch"
        assert (await h.find("victim") or {})["state"] != "CANCELLED"


async def test_a_change_of_count_waits_until_the_moving_slots_are_empty(nc: Client) -> None:
    js = nc.jetstream()
    await provision(js, STAGES, partitions=2, repartition=True)
    key = key_that(True, 2, 4)
    await js.publish(subjects.signal("support", "approvals", key), json.dumps({}).encode())
    held = subjects.partition_stream(slot_of(key) % 2)
    assert (await _inbound_streams(js))[held] == 1

    with pytest.raises(PartitionLayoutError, match=f"slots that move \\({held}: slot\\(s\\) "):
        await provision(js, STAGES, partitions=4)
    # refused: the whole old layout stands, still taking messages, its message kept
    await js.publish(subjects.signal("support", "approvals", key), b"{}")
    streams = await _inbound_streams(js)
    assert streams[held] == 2
    assert set(streams) == {subjects.STREAM_IN, *(subjects.partition_stream(k) for k in (0, 1))}
    other = routing_key(
        "acme",
        next(f"x-{i}" for i in range(99) if partition_of("acme", f"x-{i}", 2) != slot_of(key) % 2),
    )
    await js.publish(subjects.signal("support", "approvals", other), b"{}")  # the other one too

    for k in (0, 1):
        await js.purge_stream(subjects.partition_stream(k))  # what deciding them amounts to
    await provision(js, STAGES, partitions=4)
    assert set(await _inbound_streams(js)) == {
        subjects.STREAM_IN,
        *(subjects.partition_stream(k) for k in range(4)),
    }
    await provision(js, STAGES)  # one partition: the shared stream holds every subject again
    assert set(await _inbound_streams(js)) == {subjects.STREAM_IN}
    await js.publish(subjects.signal("support", "approvals", key), b"{}")
    assert (await _inbound_streams(js))[subjects.STREAM_IN] == 1


async def test_a_partition_stream_an_interrupted_change_left_closed_is_opened_again(
    nc: Client,
) -> None:
    js = nc.jetstream()
    await provision(js, STAGES, partitions=2, repartition=True)
    key = key_that(True, 2, 4)
    held = subjects.partition_stream(slot_of(key) % 2)
    await js.publish(subjects.signal("support", "approvals", key), b"{}")
    config = (await js.stream_info(held)).config
    await js.update_stream(replace(config, subjects=[f"interlock.repartitioning.{held}"]))

    with pytest.raises(PartitionLayoutError, match="slots that move"):
        await provision(js, STAGES, partitions=4)
    assert (await js.stream_info(held)).config.subjects == config.subjects
    await js.update_stream(replace(config, subjects=[f"interlock.repartitioning.{held}"]))
    await provision(js, STAGES, partitions=2)  # the same count: simply opened again
    await js.publish(subjects.signal("support", "approvals", key), b"{}")
    assert (await _inbound_streams(js))[held] == 2

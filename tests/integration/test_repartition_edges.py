"""The edges of changing the projector partition count, against a real nats-server: counts
above 32 (partitions owning one slot in both layouts), an interrupted change undone, from one
partition on an interest stream, a drain stopped early, and a change while old projectors
still pull."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest
from nats.aio.client import Client

from interlock.contracts import subjects
from interlock.contracts.partitions import slot_of
from interlock.messaging import inbound
from interlock.messaging.errors import PartitionLayoutError
from interlock.messaging.inbound import INBOUND
from interlock.messaging.partition_streams import partition_streams, reshape_layout
from interlock.messaging.slot_drain import drain
from interlock.messaging.streams import provision
from tests.support.polling import eventually
from tests.support.routing import key_that, refused
from tests.support.workflows import STAGES

pytestmark = pytest.mark.timeout(150)


async def test_a_change_between_counts_above_32_can_be_provisioned(
    nc: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """33 -> 34: partitions 31 and 32 own the same single slot in both layouts; their
    streams still change layout, so their old consumers give way to the new ones (a work
    queue admits one)."""
    # 34 streams of 4 GiB exceed the test server's storage: smaller ones, the same layout
    monkeypatch.setattr(inbound, "INBOUND", replace(inbound.INBOUND, max_bytes=2**24))
    js = nc.jetstream()
    await provision(js, STAGES, partitions=33, repartition=True)
    plan = await drain(js, 34, within=10, poll=0.05)
    assert plan.drained
    await provision(js, STAGES, partitions=34)
    names = {c.name for c in await js.consumers_info(subjects.partition_stream(32))}
    assert names == {subjects.projector_consumer(32, 34)}


async def test_an_interrupted_change_to_three_can_be_undone_with_two(nc: Client) -> None:
    """2 -> 3 interrupted in `add_layout` after WF_IN_P0 took its new slots (0, 3, 6, ...):
    provisioning with 2 narrows WF_IN_P0 back before it reopens WF_IN_P1 (still `1 of 2`,
    narrowed) to every odd slot, so the two never overlap and the old count is restored."""
    js = nc.jetstream()
    await provision(js, STAGES, partitions=2, repartition=True)
    assert (await drain(js, 3, within=10, poll=0.05)).drained
    # what `provision(partitions=3)` does up to an interruption in `add_layout`
    new = partition_streams(INBOUND, 3)
    await reshape_layout(js, new)
    await js.update_stream(new[0])
    await provision(js, STAGES, partitions=2)  # the documented undo
    key = key_that(True, 2, 3)
    assert not await refused(js, subjects.signal("support", "approvals", key))


async def test_from_one_partition_on_an_interest_stream_keyed_messages_are_checked(
    nc: Client,
) -> None:
    """n -> 1 leaves WF_IN an interest stream on `wf.in.>`; going back to n while it holds a
    keyed message is refused (else that workflow's next message would land in its partition
    stream and one partition would read the two through two consumers, in no order), and the
    drain from one partition closes the keyed subjects until they are decided."""
    js = nc.jetstream()
    await provision(js, STAGES, partitions=2, repartition=True)
    assert (await drain(js, 1, within=10, poll=0.05)).drained
    await provision(js, STAGES, partitions=1)
    key = key_that(True, 2, 4)
    await js.publish(subjects.signal("support", "approvals", key), b"first")
    assert (await js.stream_info(subjects.STREAM_IN)).state.messages == 1
    with pytest.raises(PartitionLayoutError, match="still holds keyed messages"):
        await provision(js, STAGES, partitions=2, repartition=True)
    assert not await refused(js, subjects.signal("support", "approvals", key))  # reopened
    pull = await js.pull_subscribe_bind(subjects.CONSUMER_PROJECTOR, subjects.STREAM_IN)
    draining = asyncio.create_task(drain(js, 2, within=30, poll=0.05))
    while not draining.done():  # the one partition decides what it holds
        try:
            for msg in await pull.fetch(10, timeout=0.5):
                await msg.ack()
        except TimeoutError:
            continue
    assert (await draining).moving == {subjects.STREAM_IN: list(range(64))}
    await provision(js, STAGES, partitions=2)
    assert (await js.stream_info(subjects.STREAM_IN)).state.messages == 0


async def test_from_one_partition_on_a_work_queue_the_refusal_says_to_rebuild(
    nc: Client,
) -> None:
    js = nc.jetstream()
    await provision(js, STAGES)
    with pytest.raises(PartitionLayoutError, match="work-queue WF_IN, which must be rebuilt"):
        await drain(js, 2, within=5)


async def test_a_cancelled_drain_opens_the_slots_again(nc: Client) -> None:
    """Ctrl-C on `interlock repartition` (the task cancelled) while the projectors drain: the
    moving slots are opened again, as when its time runs out."""
    js = nc.jetstream()
    await provision(js, STAGES, partitions=2, repartition=True)
    key = key_that(True, 2, 4)
    subject = subjects.signal("support", "approvals", key)
    await js.publish(subject, b"{}")  # held: no projector decides it
    looked = asyncio.Event()
    draining = asyncio.create_task(drain(js, 4, within=60, poll=5, progress=lambda _: looked.set()))
    await asyncio.wait_for(looked.wait(), 10)  # closed, looked once, now waiting
    assert await refused(js, subject)
    draining.cancel()
    with pytest.raises(asyncio.CancelledError):
        await draining
    assert not await refused(js, subject), "the slot stays closed after the drain was stopped"


async def test_provisioning_refuses_while_the_old_projectors_still_pull(nc: Client) -> None:
    """The new count provisioned (`interlock migrate`) while an old projector still runs: it
    holds a delivered, unacked message of a slot that stays and waits on a pull. Refused:
    deleting its consumer would hand the same message at once to a second process while the
    first may still be deciding it."""
    js = nc.jetstream()
    await provision(js, STAGES, partitions=2, repartition=True)
    key = key_that(False, 2, 4)
    stream = subjects.partition_stream(slot_of(key) % 2)
    await js.publish(subjects.signal("support", "approvals", key), b"{}")
    old = await js.pull_subscribe_bind(subjects.projector_consumer(slot_of(key) % 2, 2), stream)
    (held,) = await old.fetch(1, timeout=5)  # the old partition is deciding it
    assert (await drain(js, 4, within=10, poll=0.05)).drained
    waiting = asyncio.create_task(old.fetch(1, timeout=30))  # and asks for more
    consumer = subjects.projector_consumer(slot_of(key) % 2, 2)

    async def pulling() -> bool:
        return bool((await js.consumer_info(stream, consumer)).num_waiting)

    await eventually(pulling, what="the old projector's pull")
    try:
        with pytest.raises(PartitionLayoutError, match="still pull"):
            await provision(js, STAGES, partitions=4)
    finally:
        waiting.cancel()
    assert held.metadata.num_delivered == 1

"""The inbound streams and the projector's consumers on them, for a number of partitions.

One partition (the default): one work-queue stream, `WF_IN`, holding every inbound subject, read
by the one consumer `projector`. Several: each partition has its own work-queue stream
(`WF_IN_P<k>`, `partition_streams`) holding the slots the broker maps its workflows' keyed
subjects to, read by it alone; `WF_IN` keeps what carries no routing key, and every partition
reads it through its own consumer (`projector-p<k>-of-<n>`), acknowledging what other
partitions decide, so it keeps a message until every partition has acknowledged it: interest
retention (a work queue admits no overlapping consumers). The server cannot turn a work queue
into an interest stream in place, so a stack made with one partition is rebuilt, empty, by
`interlock migrate --repartition`; an interest stream serves any count, one included.

Only one layout exists at a time: provisioning adds the consumers of the configured count, then
removes those of any other count (added first, so no message loses every interested consumer;
what the old layout had not acknowledged is delivered to the new one, and the projector's
duplicate check answers what was already decided). A change of count moves slots between
partition streams: it goes ahead only once no stream holds a message of a slot that leaves it
(`partition_streams.reshape_layout`), so a workflow's messages are decided by its old partition
or, after the change, its new one, never both.
"""

from __future__ import annotations

from dataclasses import replace

from nats.js import JetStreamContext
from nats.js.api import (
    AckPolicy,
    ConsumerConfig,
    DiscardPolicy,
    RetentionPolicy,
    StorageType,
    StreamConfig,
)
from nats.js.errors import BadRequestError, NotFoundError

from interlock.contracts import subjects
from interlock.contracts.partitions import consumers
from interlock.messaging.errors import PartitionLayoutError
from interlock.messaging.partition_streams import (
    SLOTS_ANY,
    add_layout,
    holds,
    partition_streams,
    reshape_layout,
)

DUPLICATE_WINDOW_S = 300.0
"""Publishes with the same Nats-Msg-Id inside this window are dropped by the server; it must
outlast the longest relay or timer-service restart."""
GIB = 1024**3
_CLOSED = "interlock.repartitioning"
"""Where the inbound stream listens while it is checked empty and rebuilt: nowhere in use."""

INBOUND = StreamConfig(
    name=subjects.STREAM_IN,
    description="Requests, signals, results and timer firings for the projector",
    subjects=[f"{subjects.IN_PREFIX}.>"],
    retention=RetentionPolicy.WORK_QUEUE,
    storage=StorageType.FILE,
    duplicate_window=DUPLICATE_WINDOW_S,
    max_msg_size=1024 * 1024,
    max_bytes=4 * GIB,
    discard=DiscardPolicy.NEW,
)


def retention_for(partitions: int) -> RetentionPolicy:
    return RetentionPolicy.WORK_QUEUE if partitions == 1 else RetentionPolicy.INTEREST


def projector_consumer(name: str, *, whole: bool = False) -> ConsumerConfig:
    """A projector partition's durable pull consumer on the shared inbound stream (`whole`:
    on the whole of its own stream)."""
    return ConsumerConfig(
        durable_name=name,
        filter_subject=None if whole else f"{subjects.IN_PREFIX}.>",
        ack_policy=AckPolicy.EXPLICIT,
        ack_wait=subjects.PROJECTOR_ACK_WAIT_S,
        max_deliver=-1,
        max_ack_pending=2000,
    )


async def provision_inbound(
    js: JetStreamContext, partitions: int = 1, *, repartition: bool = False, replicas: int = 1
) -> None:
    """Create or update the inbound streams (at `replicas` copies) and the consumers of
    `partitions` partitions; `repartition`: rebuild a work-queue stream, if it is empty, for
    more than one."""
    inbound = replace(INBOUND, num_replicas=replicas)
    own = partition_streams(inbound, partitions)
    await reshape_layout(js, own)
    if partitions > 1:
        inbound = replace(inbound, subjects=subjects.unkeyed_subjects())
    await _provision_shared(js, inbound, partitions, repartition)
    await add_layout(js, own)
    wanted = consumers(partitions)
    for stream, name in zip(own, wanted, strict=False):
        await ensure_consumer(js, stream.name or "", projector_consumer(name, whole=True))
    for name in wanted:
        await ensure_consumer(js, subjects.STREAM_IN, projector_consumer(name))
    for found in await js.consumers_info(subjects.STREAM_IN):
        if subjects.is_projector_consumer(found.name) and found.name not in wanted:
            await js.delete_consumer(subjects.STREAM_IN, found.name)


async def _provision_shared(
    js: JetStreamContext, inbound: StreamConfig, partitions: int, repartition: bool
) -> None:
    try:
        info = await js.stream_info(subjects.STREAM_IN)
    except NotFoundError:
        await js.add_stream(replace(inbound, retention=retention_for(partitions)))
        return
    retention = RetentionPolicy(info.config.retention)
    if partitions > 1 and retention == RetentionPolicy.WORK_QUEUE:
        if not repartition:
            raise PartitionLayoutError(
                f"the inbound stream {subjects.STREAM_IN} was made for one projector "
                f"partition; to run {partitions}, stop the stack, let one projector drain "
                "it, then run `interlock migrate --repartition` (see the README)"
            )
        before = info.config
        if before.subjects == [_CLOSED]:  # an interrupted rebuild: it listened on every subject
            before = replace(before, subjects=[f"{subjects.IN_PREFIX}.>"])
        await _rebuild_as_interest(js, inbound, before)
        return
    await js.update_stream(replace(inbound, retention=retention))
    if partitions > 1 and await holds(js, subjects.STREAM_IN, SLOTS_ANY):
        # Keyed messages of a one-partition layout: they must be decided before any
        # partition stream takes their slots, or one workflow's messages would wait in two.
        await js.update_stream(info.config)
        raise PartitionLayoutError(
            f"the inbound stream {subjects.STREAM_IN} still holds keyed messages of the "
            f"one-partition layout; with the stack running on one partition, run `interlock "
            f"repartition {partitions}` until they are decided, stop it, then change the count"
        )


async def _rebuild_as_interest(
    js: JetStreamContext, inbound: StreamConfig, before: StreamConfig
) -> None:
    """Stop the work-queue stream taking messages, and rebuild it as an interest stream if it
    holds none; else open it again as it was (`before`) and refuse."""
    await js.update_stream(replace(before, subjects=[_CLOSED]))
    held = (await js.stream_info(subjects.STREAM_IN)).state.messages
    if held:
        await js.update_stream(before)
        raise PartitionLayoutError(
            f"the inbound stream {subjects.STREAM_IN} still holds {held} message(s); let the "
            "projector (one partition) decide them, stop it, then repartition"
        )
    await js.delete_stream(subjects.STREAM_IN)
    await js.add_stream(replace(inbound, retention=RetentionPolicy.INTEREST))


async def ensure_consumer(js: JetStreamContext, stream: str, config: ConsumerConfig) -> None:
    try:
        await js.add_consumer(stream, config)
    except BadRequestError:
        # Older servers refuse an in-place update through CREATE; recreate is not an option
        # (it would lose ack state), so keep the existing consumer as it is.
        await js.consumer_info(stream, config.durable_name or "")

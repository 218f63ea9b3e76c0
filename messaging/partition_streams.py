"""The streams of a partitioned projector: one per partition, holding its slots' keyed messages.

The broker maps a keyed inbound subject to `wf.in.slot.<slot>.…` (`subjects.inbound_mappings`);
partition `k` of `n` owns the slots congruent to `k` and reads them from its own work-queue
stream, `WF_IN_P<k>`, through its consumer `projector-p<k>-of-<n>`: no partition reads another's
messages, and each stream has its own leader and fsync chain. With one partition there are
none (the shared stream holds every subject).

Changing the count moves slots between streams, and two streams may not listen on one subject,
so a stream of another layout is closed (it stops taking messages), checked empty and removed
before the new ones are made; one that still holds messages is opened again and the change
refused, with what to do, and nothing is lost.
"""

from __future__ import annotations

import re
from dataclasses import replace

from nats.js import JetStreamContext
from nats.js.api import RetentionPolicy, StreamConfig
from nats.js.errors import NotFoundError

from interlock.contracts import subjects
from interlock.contracts.partitions import Partition
from interlock.messaging.errors import PartitionLayoutError

_CLOSED = "interlock.repartitioning"
"""Where a stream listens while it is checked empty and removed: nowhere in use."""
_LAYOUT = re.compile(r"partition (\d+) of (\d+)")
"""What a partition stream's description says of its layout (`partition_streams`)."""


def partition_streams(base: StreamConfig, partitions: int) -> list[StreamConfig]:
    """The partition streams of a stack with `partitions` partitions (none for one)."""
    if partitions == 1:
        return []
    return [
        replace(
            base,
            name=subjects.partition_stream(k),
            description=f"Keyed inbound messages of projector partition {k} of {partitions}",
            subjects=[subjects.slot_subject(s) for s in Partition(k, partitions).slots],
            retention=RetentionPolicy.WORK_QUEUE,
        )
        for k in range(partitions)
    ]


def streams_of(index: int, partitions: int) -> list[str]:
    """The inbound streams projector partition `index` of `partitions` reads."""
    if partitions == 1:
        return [subjects.STREAM_IN]
    return [subjects.STREAM_IN, subjects.partition_stream(index)]


async def deliveries(js: JetStreamContext, partitions: int) -> dict[int, int]:
    """Per partition: the messages delivered so far to its consumers (redeliveries
    included), over the streams it reads; a partition without consumers is left out."""
    delivered: dict[int, int] = {}
    for index in range(partitions):
        name = subjects.projector_consumer(index, partitions)
        for stream in streams_of(index, partitions):
            try:
                info = await js.consumer_info(stream, name)
            except NotFoundError:
                continue
            seen = int(info.delivered.consumer_seq or 0) if info.delivered else 0
            delivered[index] = delivered.get(index, 0) + seen
    return delivered


async def remove_other_layouts(js: JetStreamContext, wanted: list[StreamConfig]) -> None:
    """Remove every partition stream that is not one of `wanted` as it is. All of them are
    closed first and checked together: if any holds messages, all are opened again as they
    were and the change refused; else all are removed. A stream an interrupted change left
    closed is opened again as its description says it was."""
    keep = {s.name: sorted(s.subjects or []) for s in wanted}
    stale = []
    for name in await _partition_stream_names(js):
        config = (await js.stream_info(name)).config
        opened = _as_opened(config)
        if keep.get(name) != sorted(opened.subjects or []):
            stale.append(opened)
        elif opened is not config:  # left closed, and wanted as it was: open it again
            await js.update_stream(opened)
    closed: list[StreamConfig] = []
    try:
        for config in stale:
            await js.update_stream(replace(config, subjects=[_closed(config)]))
            closed.append(config)
        held = {c.name: (await js.stream_info(c.name or "")).state.messages for c in stale}
    except BaseException:
        await _reopen(js, closed)
        raise
    if any(held.values()):
        await _reopen(js, closed)
        holding = ", ".join(f"{name} {n}" for name, n in held.items() if n)
        raise PartitionLayoutError(
            f"the partition streams of the old layout still hold messages ({holding}); run "
            "the stack with its old partition count until its projectors have decided them, "
            "stop it, then change the count (see the README)"
        )
    for config in stale:
        await js.delete_stream(config.name or "")


def _closed(config: StreamConfig) -> str:
    return f"{_CLOSED}.{config.name}"


def _as_opened(config: StreamConfig) -> StreamConfig:
    """`config` as it takes messages: a closed stream's subjects are its layout's again."""
    if config.subjects != [_closed(config)]:
        return config
    found = _LAYOUT.search(config.description or "")
    if found is None:
        return config
    partition = Partition(int(found.group(1)), int(found.group(2)))
    return replace(config, subjects=[subjects.slot_subject(s) for s in partition.slots])


async def _reopen(js: JetStreamContext, configs: list[StreamConfig]) -> None:
    for config in configs:
        await js.update_stream(config)


async def add_layout(js: JetStreamContext, wanted: list[StreamConfig]) -> None:
    """Create (or update in place) the `wanted` partition streams."""
    existing = set(await _partition_stream_names(js))
    for config in wanted:
        if config.name in existing:
            await js.update_stream(config)
        else:
            await js.add_stream(config)


async def inbound_streams(js: JetStreamContext) -> list[str]:
    """The inbound streams of the layout provisioned now: the shared one and any partition's."""
    return [subjects.STREAM_IN, *await _partition_stream_names(js)]


async def _partition_stream_names(js: JetStreamContext) -> list[str]:
    prefix = f"{subjects.STREAM_IN}_P"
    return [
        info.config.name
        for info in await js.streams_info()
        if info.config.name and info.config.name.startswith(prefix)
    ]

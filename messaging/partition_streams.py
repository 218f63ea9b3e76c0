"""The streams of a partitioned projector: one per partition, holding its slots' keyed messages.

The broker maps a keyed inbound subject to `wf.in.slot.<slot>.…` (`subjects.inbound_mappings`);
partition `k` of `n` owns the slots congruent to `k` and reads them from its own work-queue
stream, `WF_IN_P<k>`, through its consumer `projector-p<k>-of-<n>`: no partition reads another's
messages, and each stream has its own leader and fsync chain. With one partition there are
none (the shared stream holds every subject).

Changing the count moves slots between streams, and two streams may not listen on one subject.
A stream the new layout keeps (partition k of both) keeps its messages of the slots that stay
with k and is narrowed to them; one the new layout drops is closed; each must hold no message of
a slot that moves (`interlock repartition` closes those slots on the running stack and waits for
its projectors to decide what they hold), else everything is opened again and the change
refused, with what to do, and nothing is lost.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import replace

from nats.js import JetStreamContext
from nats.js.api import RetentionPolicy, StreamConfig
from nats.js.errors import NotFoundError

from interlock.contracts import subjects
from interlock.contracts.partitions import SLOTS, Partition
from interlock.messaging.errors import PartitionLayoutError

_CLOSED = "interlock.repartitioning"
"""Where a stream listens while it is checked empty and removed: nowhere in use."""
SLOTS_ANY = f"{subjects.IN_PREFIX}.{subjects.SLOT_TOKEN}.>"
"""Every slot's mapped subjects."""
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


async def reshape_layout(js: JetStreamContext, wanted: list[StreamConfig]) -> None:
    """Bring the partition streams of another layout to the `wanted` one's, before
    `add_layout` opens the new slots: a stream the wanted layout keeps (by name) is narrowed
    to the slots it keeps, one it drops is closed; then each is checked to hold no message of
    a slot that is no longer its own (`strays`). If any does, every stream is opened again as
    it was and the change refused; also while the old layout's projectors still pull from
    them (`still_pulling`). Else the dropped streams are removed, and the kept ones lose the
    old layout's consumers (the new layout's consumer reads what they hold, in order). A
    stream an interrupted change left closed or narrowed is opened again as its description
    says it was when the wanted layout is its own, after the others are narrowed (they may
    still listen on its slots)."""
    want = {s.name or "": s for s in wanted}
    changed: list[tuple[StreamConfig, set[str]]] = []
    """Each stream whose layout changes, as it takes messages, and the subjects it keeps."""
    reopen: list[StreamConfig] = []
    for name in await partition_stream_names(js):
        config = (await js.stream_info(name)).config
        as_open = opened(config)
        own = set(want[name].subjects or []) if name in want else set()
        same = name in want and layout_of(as_open) == layout_of(want[name])
        if same and own == set(as_open.subjects or []):
            if as_open is not config:
                reopen.append(as_open)
            continue
        changed.append((as_open, own))
    narrowed: list[StreamConfig] = []
    try:
        for before, own in changed:
            await js.update_stream(narrowed_to(before, own))
            narrowed.append(before)
        held = {o.name or "": await strays(js, o.name or "", own) for o, own in changed}
        pulling = [c for o, _ in changed for c in await still_pulling(js, o.name or "")]
    except BaseException:
        await reopen_all(js, narrowed)
        raise
    if any(held.values()) or pulling:
        await reopen_all(js, narrowed)
        holding = "; ".join(f"{name}: {what}" for name, what in held.items() if what)
        if holding:
            raise PartitionLayoutError(
                f"partition streams still hold messages of slots that move ({holding}); with "
                "the stack running on its old count, run `interlock repartition <count>` until "
                "they are drained, stop it, then change the count (see the README)"
            )
        raise PartitionLayoutError(
            f"projectors of the old layout still pull ({', '.join(pulling)}); stop them "
            "before changing the count"
        )
    for before, _ in changed:
        name = before.name or ""
        if name in want:
            for consumer in await js.consumers_info(name):
                if subjects.is_projector_consumer(consumer.name):
                    await js.delete_consumer(name, consumer.name)
        else:
            await js.delete_stream(name)
    await reopen_all(js, reopen)


PULL_EXPIRY_S = 3.0
"""Longer than a projector's pull request lives (it asks again every 2 s while it runs)."""


async def still_pulling(js: JetStreamContext, stream: str) -> list[str]:
    """The projector consumers of `stream` a running process still pulls from, waiting out
    the pull requests a process that just stopped left behind."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + PULL_EXPIRY_S
    while True:
        pulling = [
            c.name
            for c in await js.consumers_info(stream)
            if subjects.is_projector_consumer(c.name) and c.num_waiting
        ]
        if not pulling or loop.time() >= deadline:
            return pulling
        await asyncio.sleep(0.2)


async def strays(js: JetStreamContext, stream: str, own: set[str]) -> str:
    """What `stream` holds outside the slot subjects `own` (none: it keeps no slot), said
    for a person (empty: nothing): its message count, or the slots holding messages."""
    if not own:
        held = (await js.stream_info(stream)).state.messages
        return f"{held} message(s)" if held else ""
    return said(
        await held_slots(
            js, stream, [s for s in range(SLOTS) if subjects.slot_subject(s) not in own]
        )
    )


async def held_slots(js: JetStreamContext, stream: str, slots: list[int]) -> list[int]:
    """Of `slots`, those `stream` holds a message of."""
    return [s for s in slots if await holds(js, stream, subjects.slot_subject(s))]


def said(slots: list[int]) -> str:
    """Slots holding messages, for a person (empty: none)."""
    return f"slot(s) {', '.join(map(str, slots))}" if slots else ""


async def holds(js: JetStreamContext, stream: str, subject: str) -> bool:
    """Whether `stream` holds any message on `subject` (a wildcard: its first one is read)."""
    try:
        await js.get_msg(stream, seq=1, subject=subject, next=True)
    except NotFoundError:
        return False
    return True


def closed_subject(config: StreamConfig) -> str:
    return f"{_CLOSED}.{config.name}"


def narrowed_to(config: StreamConfig, keep: set[str]) -> StreamConfig:
    """`config` listening only on those of its subjects in `keep`; closed if none."""
    kept = [subject for subject in config.subjects or [] if subject in keep]
    return replace(config, subjects=kept or [closed_subject(config)])


def layout_of(config: StreamConfig) -> Partition | None:
    """The partition a partition stream was made for, as its description says."""
    found = _LAYOUT.search(config.description or "")
    return None if found is None else Partition(int(found.group(1)), int(found.group(2)))


def opened(config: StreamConfig) -> StreamConfig:
    """`config` as it takes messages: a closed or narrowed stream's subjects are its
    layout's again."""
    partition = layout_of(config)
    if partition is None:
        return config
    full = [subjects.slot_subject(s) for s in partition.slots]
    if config.subjects == [closed_subject(config)] or (set(config.subjects or []) < set(full)):
        return replace(config, subjects=full)
    return config


async def reopen_all(js: JetStreamContext, configs: list[StreamConfig]) -> None:
    """Put each stream back as `configs` says (as it was before it was narrowed)."""
    for config in configs:
        await js.update_stream(config)


async def add_layout(js: JetStreamContext, wanted: list[StreamConfig]) -> None:
    """Create (or update in place) the `wanted` partition streams."""
    existing = set(await partition_stream_names(js))
    for config in wanted:
        if config.name in existing:
            await js.update_stream(config)
        else:
            await js.add_stream(config)


async def inbound_streams(js: JetStreamContext) -> list[str]:
    """The inbound streams of the layout provisioned now: the shared one and any partition's."""
    return [subjects.STREAM_IN, *await partition_stream_names(js)]


async def partition_stream_names(js: JetStreamContext) -> list[str]:
    prefix = f"{subjects.STREAM_IN}_P"
    return [
        info.config.name
        for info in await js.streams_info()
        if info.config.name and info.config.name.startswith(prefix)
    ]

"""Draining the slots a change of partition count moves, on the running stack.

Going from n to m partitions, slot s moves when its partition changes (`s mod n` to `s mod m`;
to one partition every slot moves, to the shared stream). Its messages must all be decided by
its old partition before its new one reads any, or one workflow would be decided by two
processes at once and its order lost. So the moving slots are closed on the old layout's
streams, which keep what they hold: their publishes are refused (the publishers retry, as they
do while a stream has no leader) while the old projectors, still running, decide what is
there. Once no stream holds a message of a slot that leaves it, the stack is stopped and
provisioned with the new count (`reshape_layout` checks again, narrows each kept stream to the
slots it keeps and reopens the moving slots on their new streams), and the new projectors
start: every message of a moving slot is then decided by its new partition only, after every
earlier one was decided by its old. Slots that stay keep flowing until the stack stops.

From one partition, the shared stream holds every slot: if it is an interest stream (the stack
ran more partitions before) its slot subjects are closed and drained the same way; a work
queue must be rebuilt instead (`interlock migrate --repartition`).

The closing is undone by provisioning with the old count (it opens each stream to its
layout's slots again), and by `drain` itself when its time runs out, it fails or it is
cancelled.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from nats.js import JetStreamContext
from nats.js.api import RetentionPolicy, StreamConfig

from interlock.contracts import subjects
from interlock.contracts.partitions import MAX_PARTITIONS, SLOTS, Partition
from interlock.messaging.errors import DrainTimedOut, PartitionLayoutError
from interlock.messaging.partition_streams import (
    SLOTS_ANY,
    closed_subject,
    holds,
    layout_of,
    opened,
    partition_stream_names,
    strays,
)


@dataclass
class Drain:
    """A change from `before` to `after` partitions: the slots leaving each stream, and what
    each still holds of them (empty once drained)."""

    before: int
    after: int
    moving: dict[str, list[int]] = field(default_factory=dict)
    holding: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def drained(self) -> bool:
        return not any(self.holding.values())

    def as_json(self) -> dict[str, object]:
        return {
            "from": self.before,
            "to": self.after,
            "moving_slots": self.moving,
            "holding": {k: v for k, v in self.holding.items() if v},
            "drained": self.drained,
            "seconds": round(self.seconds, 2),
        }


async def running_layout(js: JetStreamContext) -> int:
    """The partition count the broker's streams were provisioned for (1: no partition
    streams). Raises `PartitionLayoutError` if they disagree."""
    counts = set()
    for name in await partition_stream_names(js):
        partition = layout_of((await js.stream_info(name)).config)
        if partition is None:
            raise PartitionLayoutError(f"the partition stream {name} names no layout")
        counts.add(partition.count)
    if len(counts) > 1:
        raise PartitionLayoutError(f"partition streams of several layouts: {sorted(counts)}")
    return counts.pop() if counts else 1


def moving_slots(before: int, after: int) -> dict[int, list[int]]:
    """Per partition of `before`, the slots that leave it for `after` partitions."""
    return {
        k: [s for s in Partition(k, before).slots if after == 1 or s % after != k]
        for k in range(before)
    }


def _narrowed(config: StreamConfig, leaving: list[int]) -> StreamConfig:
    gone = {subjects.slot_subject(s) for s in leaving}
    kept = [subject for subject in opened(config).subjects or [] if subject not in gone]
    return replace(config, subjects=kept or [closed_subject(config)])


async def drain(
    js: JetStreamContext,
    after: int,
    *,
    within: float,
    poll: float = 0.5,
    progress: Callable[[Drain], None] = lambda _: None,
) -> Drain:
    """Close the slots that move going to `after` partitions and wait until the old layout's
    streams hold no message of them; `progress` is told what is left on every look. Raises
    `PartitionLayoutError` for a change there is no slot drain for, `DrainTimedOut` if they
    still hold messages after `within` seconds. Whatever ends it early (the time running
    out, an error, a cancellation) opens the slots again: nothing changed."""
    if not 1 <= after <= MAX_PARTITIONS:
        raise PartitionLayoutError(f"no layout of {after} partitions (1..{MAX_PARTITIONS})")
    before = await running_layout(js)
    if before == after:
        raise PartitionLayoutError(f"the stack already runs {after} partitions")
    plan = Drain(before, after)
    closing = await _shared_closing(js, after) if before == 1 else await _closing(js, plan)
    narrowed: list[StreamConfig] = []
    try:
        for config, closed in closing:
            plan.moving.setdefault(config.name or "", _moving_of(config, closed))
            await js.update_stream(closed)
            narrowed.append(config)
        started = time.monotonic()
        while True:
            for config, closed in closing:
                plan.holding[config.name or ""] = await _left(js, config, closed)
            plan.seconds = time.monotonic() - started
            progress(plan)
            if plan.drained:
                return plan
            if plan.seconds >= within:
                held = "; ".join(f"{k}: {v}" for k, v in plan.holding.items() if v)
                raise DrainTimedOut(
                    f"the moving slots still hold messages after {within:.0f}s ({held}); they "
                    "are open again and nothing changed: is the projector running?"
                )
            await asyncio.sleep(poll)
    except BaseException:
        for config in narrowed:
            await js.update_stream(config)
        raise


async def _closing(js: JetStreamContext, plan: Drain) -> list[tuple[StreamConfig, StreamConfig]]:
    """Each partition stream as it takes messages, and as it is with its moving slots closed."""
    closing = []
    for k, leaving in moving_slots(plan.before, plan.after).items():
        config = opened((await js.stream_info(subjects.partition_stream(k))).config)
        closing.append((config, _narrowed(config, leaving)))
    return closing


async def _shared_closing(
    js: JetStreamContext, after: int
) -> list[tuple[StreamConfig, StreamConfig]]:
    """From one partition: the shared stream, every slot of it closed (it then keeps only the
    unkeyed subjects, as with several). A work queue cannot serve several partitions at all."""
    config = (await js.stream_info(subjects.STREAM_IN)).config
    if RetentionPolicy(config.retention) == RetentionPolicy.WORK_QUEUE:
        raise PartitionLayoutError(
            f"the stack runs one partition on a work-queue {subjects.STREAM_IN}, which must be "
            "rebuilt for more: let the projector drain it, stop the stack, then run "
            f"`INTERLOCK_PROJECTOR_PARTITIONS={after} interlock migrate --repartition`"
        )
    whole = replace(config, subjects=[f"{subjects.IN_PREFIX}.>"])
    return [(whole, replace(config, subjects=subjects.unkeyed_subjects()))]


def _moving_of(config: StreamConfig, closed: StreamConfig) -> list[int]:
    if config.name == subjects.STREAM_IN:
        return list(range(SLOTS))
    gone = set(config.subjects or []) - set(closed.subjects or [])
    return [s for s in range(SLOTS) if subjects.slot_subject(s) in gone]


async def _left(js: JetStreamContext, config: StreamConfig, closed: StreamConfig) -> str:
    """What `config`'s stream still holds of the slots `closed` shut (empty: nothing)."""
    name = config.name or ""
    if name == subjects.STREAM_IN:
        return "keyed messages" if await holds(js, name, SLOTS_ANY) else ""
    own = set(closed.subjects or []) - {closed_subject(config)}
    return await strays(js, name, own or None)

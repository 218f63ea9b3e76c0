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
    held_slots,
    holds,
    layout_of,
    narrowed_to,
    opened,
    partition_stream_names,
    reopen_all,
    said,
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


@dataclass(frozen=True)
class _Closing:
    """One stream of the old layout: as it takes messages, as it is with the moving slots
    closed, and those slots."""

    opened: StreamConfig
    closed: StreamConfig
    leaving: list[int]

    @property
    def name(self) -> str:
        return self.opened.name or ""


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
        for stream in closing:
            plan.moving[stream.name] = stream.leaving
            await js.update_stream(stream.closed)
            narrowed.append(stream.opened)
        started = time.monotonic()
        while True:
            for stream in closing:
                plan.holding[stream.name] = await _left(js, stream)
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
        await reopen_all(js, narrowed)
        raise


async def _closing(js: JetStreamContext, plan: Drain) -> list[_Closing]:
    """Each partition stream of the old layout, with its moving slots."""
    closing = []
    for k, leaving in moving_slots(plan.before, plan.after).items():
        config = opened((await js.stream_info(subjects.partition_stream(k))).config)
        gone = {subjects.slot_subject(s) for s in leaving}
        closed = narrowed_to(config, set(config.subjects or []) - gone)
        closing.append(_Closing(config, closed, leaving))
    return closing


async def _shared_closing(js: JetStreamContext, after: int) -> list[_Closing]:
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
    closed = replace(config, subjects=subjects.unkeyed_subjects())
    return [_Closing(whole, closed, list(range(SLOTS)))]


async def _left(js: JetStreamContext, stream: _Closing) -> str:
    """What the stream still holds of its moving slots (empty: nothing)."""
    if stream.name == subjects.STREAM_IN:  # every slot: one look
        return "keyed messages" if await holds(js, stream.name, SLOTS_ANY) else ""
    return said(await held_slots(js, stream.name, stream.leaving))

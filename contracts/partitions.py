"""Projector partitions: which of N projector partitions decides a workflow's messages.

A workflow's routing key is a stable hash of its tenant and id (`routing_key`, the same in
every process and every release). Publishers that know the workflow put the key in the
subject (`subjects.request(..., key=...)`); the broker maps it to one of `SLOTS` slots with
its deterministic `partition()` function (FNV-1a of the key, `slot_of` computes the same),
and slot `s` belongs to partition `s % N`. Each partition's own stream holds only its slots,
so a partition reads only its own workflows' keyed messages.

Messages without a key (a publisher that cannot derive the workflow id, e.g. a START whose
id comes from a content key it does not know) go to the shared inbound stream, which every
partition reads through its own durable consumer, deciding only what hashes to it and
acknowledging the rest. A message there with no readable workflow (malformed) belongs to
partition 0, so it is dead-lettered exactly once.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from interlock.contracts import subjects
from interlock.contracts.envelope import Envelope

if TYPE_CHECKING:
    from interlock.contracts.registry import Registry

SLOTS = 64
"""Slots the broker maps routing keys to; a partition owns the slots congruent to its index."""
MAX_PARTITIONS = SLOTS
PROJECTOR = "projector"
"""The projector's component name when it runs as one partition."""
MALFORMED_OWNER = 0
"""The partition that dead-letters messages without a readable workflow."""
_COMPONENT = re.compile(r"projector\.(\d+)")


def routing_key(tenant_id: str, workflow_id: str) -> str:
    """The subject token that routes `workflow_id` of `tenant_id`: 16 hex digits."""
    key = f"{tenant_id}\x00{workflow_id}".encode()
    return hashlib.blake2b(key, digest_size=8, person=b"interlock-route").hexdigest()


def key_of(event: Envelope, registry: Registry | None = None) -> str | None:
    """The routing key of the workflow `event` addresses, where its publisher can know it:
    the event names its workflow, or `registry` derives a request's id (its type's content
    key, or its event id); None for a request whose id only the plugin could derive (it is
    sent unkeyed, on the shared stream)."""
    if event.workflow_id:
        return routing_key(event.tenant_id, event.workflow_id)
    if registry is None:
        return None
    return routing_key(event.tenant_id, registry.workflow_id(event))


def slot_of(key: str) -> int:
    """The slot the broker maps routing key `key` to: nats-server's `partition(SLOTS, key)`,
    the 32-bit FNV-1a hash of the token's bytes modulo `SLOTS`."""
    value = 0x811C9DC5
    for byte in key.encode():
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value % SLOTS


def partition_of(tenant_id: str, workflow_id: str, count: int) -> int:
    """The partition (0 .. count-1) deciding `workflow_id` of `tenant_id`."""
    if not 1 <= count <= MAX_PARTITIONS:
        raise ValueError(f"partition count must be 1..{MAX_PARTITIONS}, not {count}")
    return slot_of(routing_key(tenant_id, workflow_id)) % count


@dataclass(frozen=True)
class Partition:
    """Partition `index` of `count`."""

    index: int = 0
    count: int = 1

    def __post_init__(self) -> None:
        if not 1 <= self.count <= MAX_PARTITIONS or not 0 <= self.index < self.count:
            raise ValueError(f"no partition {self.index} of {self.count}")

    def owns(self, tenant_id: str, workflow_id: str) -> bool:
        return self.count == 1 or partition_of(tenant_id, workflow_id, self.count) == self.index

    def owns_slot(self, slot: int) -> bool:
        return slot % self.count == self.index

    @property
    def slots(self) -> list[int]:
        return [s for s in range(SLOTS) if self.owns_slot(s)]

    @property
    def stream(self) -> str | None:
        """Its own stream of keyed messages; None with one partition (the inbound stream
        holds everything)."""
        return None if self.count == 1 else subjects.partition_stream(self.index)

    @property
    def owns_malformed(self) -> bool:
        return self.index == MALFORMED_OWNER

    @property
    def consumer(self) -> str:
        """Its durable consumer on the inbound stream."""
        return subjects.projector_consumer(self.index, self.count)

    @property
    def component(self) -> str:
        """Its component name: `projector` alone, else `projector.<index>`."""
        return component_name(self.index, self.count)


SINGLE = Partition()


def component_name(index: int, count: int) -> str:
    return PROJECTOR if count == 1 else f"{PROJECTOR}.{index}"


def components(count: int) -> list[str]:
    """The projector components of a stack with `count` partitions."""
    return [component_name(k, count) for k in range(count)]


def consumers(count: int) -> list[str]:
    """The projector consumers of a stack with `count` partitions."""
    return [subjects.projector_consumer(k, count) for k in range(count)]


def index_of(component: str) -> int | None:
    """The partition index a projector component name carries (`projector` -> 0); None for a
    name that is no projector's."""
    if component == PROJECTOR:
        return 0
    found = _COMPONENT.fullmatch(component)
    if found is None or int(found.group(1)) >= MAX_PARTITIONS:
        return None
    return int(found.group(1))


def is_projector(component: str) -> bool:
    return index_of(component) is not None


def partition_of_component(component: str, count: int) -> Partition:
    """The partition `component` runs with `count` partitions configured; ValueError (one
    line) for a name that does not belong to that layout."""
    index = index_of(component)
    if index is None or component != component_name(index, count) or index >= count:
        names = ", ".join(components(count)) if count <= 4 else f"projector.0 .. {count - 1}"
        raise ValueError(
            f"{component} is not a projector of this stack: INTERLOCK_PROJECTOR_PARTITIONS="
            f"{count} runs {names}"
        )
    return Partition(index, count)

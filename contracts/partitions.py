"""Projector partitions: which of N projector partitions decides a workflow's messages.

Each partition reads the whole inbound stream through its own durable consumer and decides
only the messages of the workflows that hash to it (a stable hash of tenant and workflow id,
the same in every process and every release); it acknowledges the others without deciding
them. A message with no readable workflow (malformed) belongs to partition 0, so it is
dead-lettered exactly once.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from interlock.contracts import subjects

MAX_PARTITIONS = 64
PROJECTOR = "projector"
"""The projector's component name when it runs as one partition."""
MALFORMED_OWNER = 0
"""The partition that dead-letters messages without a readable workflow."""
_COMPONENT = re.compile(r"projector\.(\d+)")


def partition_of(tenant_id: str, workflow_id: str, count: int) -> int:
    """The partition (0 .. count-1) deciding `workflow_id` of `tenant_id`."""
    if not 1 <= count <= MAX_PARTITIONS:
        raise ValueError(f"partition count must be 1..{MAX_PARTITIONS}, not {count}")
    key = f"{tenant_id}\x00{workflow_id}".encode()
    digest = hashlib.blake2b(key, digest_size=8, person=b"interlock-part").digest()
    return int.from_bytes(digest, "big") % count


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

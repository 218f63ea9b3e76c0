"""Which inbound messages a projector partition decides (see `contracts.partitions`)."""

from __future__ import annotations

from interlock.contracts.envelope import Envelope, workflow_id_of
from interlock.contracts.errors import MalformedMessage
from interlock.contracts.partitions import SINGLE, Partition, routing_key, slot_of
from interlock.contracts.registry import Registry
from interlock.contracts.subjects import parse_inbound


class Owner:
    """Whether a message belongs to `partition`: its workflow hashes to it (a request's as
    its type derives it, so a START goes where that workflow's later messages go), or, for
    a message with no readable workflow, whether the partition is the one that refuses
    those."""

    def __init__(self, partition: Partition = SINGLE, registry: Registry | None = None) -> None:
        self.partition = partition
        self._registry = registry

    def claim(
        self, subject: str, event: Envelope | MalformedMessage
    ) -> Envelope | MalformedMessage | None:
        """What this partition decides of a message on `subject`: the event; a
        `partition_mismatch` in its place when its subject routes it here under a key that
        is not its workflow's (it is dead-lettered, never decided); None when another
        partition decides it. A keyed subject the broker mapped to a slot reached only the
        stream of the slot's partition, so it is this partition's to decide or refuse."""
        try:
            slot, key = _routing(subject)
        except MalformedMessage:
            slot = key = None
        if slot is None:
            return event if self.owns(event) else None
        if isinstance(event, MalformedMessage):
            return event
        expected = routing_key(event.tenant_id, self._workflow(event))
        if key != expected or slot != slot_of(expected) or not self.partition.owns_slot(slot):
            return MalformedMessage(
                "partition_mismatch",
                f"slot {slot} and key {key} are not its workflow's (key {expected}, "
                f"slot {slot_of(expected)}, partition {self.partition.index} of "
                f"{self.partition.count})",
            )
        return event

    def owns(self, event: Envelope | MalformedMessage) -> bool:
        if self.partition.count == 1:
            return True
        if isinstance(event, MalformedMessage):
            return self.partition.owns_malformed
        return self.partition.owns(event.tenant_id, self._workflow(event))

    def _workflow(self, event: Envelope) -> str:
        if self._registry is None or event.workflow_id:
            return workflow_id_of(event)
        try:
            return self._registry.workflow_id(event)
        except Exception:  # a content key that fails on this payload: the projector refuses it
            return workflow_id_of(event)


EVERYTHING = Owner()


def _routing(subject: str) -> tuple[int | None, str | None]:
    inbound = parse_inbound(subject)
    return inbound.slot, inbound.key

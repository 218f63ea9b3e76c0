"""Which inbound messages a projector partition decides (see `contracts.partitions`)."""

from __future__ import annotations

from interlock.contracts.envelope import Envelope, workflow_id_of
from interlock.contracts.errors import MalformedMessage
from interlock.contracts.partitions import SINGLE, Partition, partition_of
from interlock.contracts.registry import Registry


class Owner:
    """Whether a message belongs to `partition`: its workflow hashes to it (a request's as
    its type derives it, so a START goes where that workflow's later messages go), or, for
    a message with no readable workflow, whether the partition is the one that refuses
    those."""

    def __init__(self, partition: Partition = SINGLE, registry: Registry | None = None) -> None:
        self.partition = partition
        self._registry = registry

    def claim(
        self, stream: str, event: Envelope | MalformedMessage
    ) -> Envelope | MalformedMessage | None:
        """What this partition decides of a message from `stream`: the event; None when
        another partition decides it (the shared stream, which every partition reads). What
        its own stream holds only it reads, so it never lets one go undecided: one whose
        workflow belongs to another partition (its subject's key lied, or its publisher
        derived another workflow id) is replaced by a `partition_mismatch`, dead-lettered,
        never decided; a subject the door cannot read is refused there (`bad_subject`)."""
        if stream != self.partition.stream:
            return event if self.owns(event) else None
        if isinstance(event, MalformedMessage) or self.owns(event):
            return event
        home = partition_of(event.tenant_id, self._workflow(event), self.partition.count)
        return MalformedMessage(
            "partition_mismatch",
            f"routed to partition {self.partition.index} of {self.partition.count}; its "
            f"workflow belongs to partition {home}",
        )

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

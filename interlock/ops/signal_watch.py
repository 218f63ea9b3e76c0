"""What became of a signal the projector has not decided (yet): dead-lettered, or waiting for
a projector to run. Read from the broker, as its administrator."""

from __future__ import annotations

from nats.js import JetStreamContext
from nats.js.errors import NotFoundError

from interlock.contracts import subjects
from interlock.contracts.partitions import partition_of
from interlock.messaging.letters import Letter, letter


async def dlq_mark(js: JetStreamContext) -> int:
    """The last sequence of the dead-letter stream: letters after it are new."""
    try:
        return int((await js.stream_info(subjects.STREAM_DLQ)).state.last_seq)
    except NotFoundError:
        return 0


async def dead_letter_of(js: JetStreamContext, event_id: str, after: int) -> Letter | None:
    """The dead letter of `event_id` stored after sequence `after`, if any; `after` is
    returned moved on by the caller through `dlq_mark` (letters are never re-read)."""
    for sequence in range(after + 1, await dlq_mark(js) + 1):
        found = await letter(js, sequence)
        if found is not None and event_id in (
            found.headers.get(subjects.HEADER_MSG_ID),
            found.envelope().get("event_id"),
        ):
            return found
    return None


async def projector_consuming(
    js: JetStreamContext, tenant_id: str | None = None, workflow_id: str | None = None
) -> bool:
    """Whether a projector is pulling from or working on its consumer now: with several
    partitions, the one deciding `workflow_id` of `tenant_id` (given both), else any."""
    try:
        found = await js.consumers_info(subjects.STREAM_IN)
    except NotFoundError:
        return False
    ours = [info for info in found if subjects.is_projector_consumer(info.name)]
    if tenant_id is not None and workflow_id is not None:
        ours = [info for info in ours if consumer_decides(info.name, tenant_id, workflow_id)]
    return any(info.num_waiting or info.num_ack_pending for info in ours)


def consumer_decides(consumer: str, tenant_id: str, workflow_id: str) -> bool:
    """Whether projector consumer `consumer` is that of the partition deciding the workflow."""
    layout = subjects.partition_layout(consumer)
    if layout is None:  # the one projector decides everything
        return True
    index, count = layout
    return partition_of(tenant_id, workflow_id, count) == index

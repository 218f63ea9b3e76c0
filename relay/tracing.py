"""Publish spans for the relay, continuing the trace stored with the row that caused the message
(the decision that wrote the outbox row)."""

from __future__ import annotations

from interlock.messaging.ordered import traced
from interlock.relay.publish import PublishDone
from interlock.relay.store import OutboxRow

TRACER = "interlock.relay"


def traced_publish(row: OutboxRow, headers: dict[str, str]) -> PublishDone:
    """The relay's publish hook: one span per outbox row, ended on its ack or error."""
    return traced(TRACER, row.subject, headers, {"interlock.outbox_id": row.id})

"""Outbox relay: publishes committed outbox rows to JetStream in commit-safe order."""

from relay.backoff import Backoff
from relay.errors import LeadershipLost, PublishFailed, SchemaMissing, StoreUnavailable
from relay.publish import DEAD_LETTER_SUBJECT, PublishDone, PublishHook
from relay.relay import OutboxRelay
from relay.store import Cursor, OutboxRow

__all__ = [
    "DEAD_LETTER_SUBJECT",
    "Backoff",
    "Cursor",
    "LeadershipLost",
    "OutboxRelay",
    "OutboxRow",
    "PublishDone",
    "PublishFailed",
    "PublishHook",
    "SchemaMissing",
    "StoreUnavailable",
]

"""Outbox relay: publishes committed outbox rows to JetStream in commit-safe order."""

from interlock.messaging.backoff import Backoff
from interlock.relay.errors import LeadershipLost, OutboxPublishFailed, TimerPublishFailed
from interlock.relay.publish import DEAD_LETTER_SUBJECT, PublishDone, PublishHook
from interlock.relay.relay import OutboxRelay
from interlock.relay.store import Cursor, OutboxRow

__all__ = [
    "DEAD_LETTER_SUBJECT",
    "Backoff",
    "Cursor",
    "LeadershipLost",
    "OutboxPublishFailed",
    "OutboxRelay",
    "OutboxRow",
    "PublishDone",
    "PublishHook",
    "TimerPublishFailed",
]

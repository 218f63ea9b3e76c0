"""The subject a keyed inbound subject is stored under once the broker has mapped it; routing
keys whose slot moves (or stays) across a change of partition count; whether the broker
refuses a publish (no stream takes its subject)."""

from __future__ import annotations

from nats.errors import NoRespondersError
from nats.js import JetStreamContext
from nats.js.errors import NoStreamResponseError, ServiceUnavailableError

from interlock.contracts import subjects
from interlock.contracts.partitions import routing_key, slot_of
from interlock.messaging.slot_drain import moving_slots

REFUSED = (NoRespondersError, NoStreamResponseError, ServiceUnavailableError)
"""What a publish raises when no stream listens on its subject (a closed slot)."""


def mapped(subject: str) -> str:
    """`wf.in.<kind>.<type>.<key>[.<sender>]` as the broker stores it:
    `wf.in.slot.<slot>.<kind>.<type>.<key>[.<sender>]`."""
    key = subjects.parse_inbound(subject).key
    assert key is not None, f"{subject} carries no routing key"
    prefix = f"{subjects.IN_PREFIX}."
    return f"{prefix}{subjects.SLOT_TOKEN}.{slot_of(key)}.{subject.removeprefix(prefix)}"


def sent(kind: str, workflow_type: str, sender: str | None) -> str:
    """The filter matching every keyed `kind` message `sender` sent for `workflow_type`, as
    the broker stores it (any key, any slot)."""
    return subjects.grants(kind, workflow_type, sender)[2]


def key_that(moves: bool, before: int = 2, after: int = 4) -> str:
    """A routing key (tenant `acme`) whose slot moves, or stays, going from `before` to
    `after` partitions."""
    for i in range(10_000):
        key = routing_key("acme", f"k-{i}")
        slot = slot_of(key)
        if (slot in moving_slots(before, after)[slot % before]) == moves:
            return key
    raise AssertionError("no such key")


async def refused(js: JetStreamContext, subject: str) -> bool:
    """Whether the broker refuses a publish on `subject` (no stream takes it)."""
    try:
        await js.publish(subject, b"{}", timeout=1)
    except REFUSED:
        return True
    return False

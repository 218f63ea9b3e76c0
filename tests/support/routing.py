"""The subject a keyed inbound subject is stored under once the broker has mapped it."""

from __future__ import annotations

from interlock.contracts import subjects
from interlock.contracts.partitions import slot_of


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

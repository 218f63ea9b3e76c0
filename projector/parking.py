"""What one sender may hold in flight while its messages wait for a workflow to exist.

A message addressed to a workflow that does not exist (yet) waits for the unknown-workflow
grace: its START may be behind it. Under the consumer it waits in the projector (`holder`,
the dispatcher's `hold`), kept alive, and is decided again as soon as a decision of its
workflow is accepted here (its START, which only this partition decides) or, failing that,
once, as its grace runs out. It is not decided again in between: nothing but a decision here
can create its workflow, and most such messages name workflows nobody will create, each
decision of which (a checkpoint read, a refusal) delayed everyone's work on the projector's
event loop for nothing. Without a holder it is nak'd with a growing delay, to be
redelivered. Meanwhile it counts against the
consumer's limit of unacknowledged messages (`max_ack_pending`), which every tenant shares:
2,500 well-formed signals for made-up workflows held that limit for the whole grace, and
nothing else was delivered. So each sender (a client, a stage, the timer service) may keep
at most `per_sender` such messages waiting, and all senders together `total`; past that, a
message for an unknown workflow is dead-lettered at once (`unknown_workflow`, the sender and
what it holds named), and the consumer's limit stays free for everyone else's work.

Counted per process by stream and sequence (a message waiting again is not counted twice); after
a restart the count starts afresh and the messages still waiting are admitted again up to the
bound, so the bound holds across restarts too.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC

from nats.aio.msg import Msg

from interlock.contracts.clients import GATEWAY, relayed_sender
from interlock.contracts.envelope import utcnow
from interlock.contracts.subjects import Inbound
from interlock.messaging.deadletter import redelivery_delay, settle

log = logging.getLogger("interlock.projector")
WorkflowKey = tuple[str, str]
"""(tenant, workflow id) of the workflow a message waits for."""
Wake = Callable[[], None]
"""Has a held message decided again at once."""
Holder = Callable[[Msg, float], Wake]
"""Keeps a message alive for the delay, then has it decided again; returns its `Wake`."""
FIRST_DELAY = 0.5
"""Seconds before a message waiting by redelivery is first redelivered (doubling after each)."""
PAST_GRACE_S = 0.05
"""A held message is decided again this long after its grace, so that it is then past it."""


@dataclass
class Parking:
    per_sender: int = 200
    total: int = 1000
    holder: Holder | None = None
    _sender_of: dict[tuple[str, int], str] = field(default_factory=dict)
    _held: dict[str, int] = field(default_factory=dict)
    _wakers: dict[WorkflowKey, dict[tuple[str, int], list[Wake]]] = field(default_factory=dict)
    """What wakes each waiting message, by the workflow it waits for (one per hold: a copy
    delivered again while the first waits is woken too)."""
    _waits_on: dict[tuple[str, int], WorkflowKey] = field(default_factory=dict)

    def hold(self, sender: str, sequence: tuple[str, int]) -> bool:
        """Whether message `sequence` of `sender` may wait (again) for its workflow: True if
        it already waits or there is room, and it is counted; False: refuse it now."""
        if sequence in self._sender_of:
            return True
        if self._held.get(sender, 0) >= self.per_sender or len(self._sender_of) >= self.total:
            return False
        self._sender_of[sequence] = sender
        self._held[sender] = self._held.get(sender, 0) + 1
        return True

    def release(self, sequence: tuple[str, int]) -> None:
        """Message `sequence` no longer waits (decided, dead-lettered or gone)."""
        sender = self._sender_of.pop(sequence, None)
        workflow = self._waits_on.pop(sequence, None)
        wakers = self._wakers.get(workflow) if workflow is not None else None
        if wakers is not None and workflow is not None:
            wakers.pop(sequence, None)
            if not wakers:
                del self._wakers[workflow]
        if sender is None:
            return
        left = self._held[sender] - 1
        if left:
            self._held[sender] = left
        else:
            del self._held[sender]

    def waits(self, sequence: tuple[str, int]) -> bool:
        """Whether message `sequence` waits for its workflow (was nak'd to be decided again)."""
        return sequence in self._sender_of

    def held(self, sender: str) -> int:
        """How many of `sender`'s messages wait for their workflow now."""
        return self._held.get(sender, 0)

    def moved(self, workflow: WorkflowKey) -> None:
        """A decision of `workflow` was accepted: its waiting messages are decided again now."""
        for wakes in self._wakers.pop(workflow, {}).values():
            for wake in wakes:
                try:
                    wake()
                except Exception:  # not the accepted decision's failure: its delay still runs
                    log.exception("waking a message waiting for %s failed", workflow[1])

    async def wait_for_workflow(
        self,
        raw: Msg,
        inbound: Inbound | None,
        grace: float,
        event_id: str | None = None,
        workflow: WorkflowKey | None = None,
    ) -> str | None:
        """Keep `raw` (addressed to `workflow`, which does not exist) waiting to be decided
        again while it is younger than `grace` seconds and its sender has room: None if it
        now waits, else what to add to its dead letter's detail (why it was not kept)."""
        remaining = grace - _age(raw)
        if remaining <= 0:
            return ""
        who = sender(inbound, event_id)
        at = sequence(raw)
        if not self.hold(who, at):
            return f"; not kept waiting: {who} already has {self.held(who)} messages waiting"
        if self.holder is None or workflow is None:
            delay = min(redelivery_delay(raw, FIRST_DELAY), max(remaining, 0.1))
            await settle(lambda: raw.nak(delay=delay), raw.subject)
            return None
        wake = self.holder(raw, remaining + PAST_GRACE_S)
        self._wakers.setdefault(workflow, {}).setdefault(at, []).append(wake)
        self._waits_on[at] = workflow
        return None


def sender(inbound: Inbound | None, event_id: str | None = None) -> str:
    """Who a waiting message counts against: its client or stage, or the timer service; for
    the gateway, the one webhook sender its event id names (the gateway admits only its
    configured senders), so one sender's flood does not use up the others' share."""
    if inbound is None:
        return "?"
    who = f"{inbound.kind}:{inbound.sender or ''}"
    relayed = relayed_sender(event_id or "") if inbound.sender == GATEWAY else None
    return f"{who}/{relayed}" if relayed else who


def sequence(raw: Msg) -> tuple[str, int]:
    """The message's stream and its sequence there (("", 0) when it carries no metadata):
    a partition reads two streams, whose sequences overlap."""
    if raw.metadata is None:
        return "", 0
    return raw.metadata.stream, raw.metadata.sequence.stream


def _age(raw: Msg) -> float:
    """Seconds since the message was stored in its stream."""
    stored = raw.metadata.timestamp if raw.metadata else None
    if stored is None:
        return 0.0
    if stored.tzinfo is None:
        stored = stored.replace(tzinfo=UTC)
    return max(0.0, (utcnow() - stored).total_seconds())

"""How the projector's consumer ends a message it cannot decide: a dead letter with its reason
(audited on the workflow it names, where its sender has standing), a wait for a workflow
that may yet be created, or a later delivery. A result request is never dead-lettered or
retried here: it is answered `not_taken`, and its stage sends it the durable way.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from faststream.nats import NatsBroker
from nats.aio.msg import Msg

from interlock.contracts import subjects
from interlock.contracts.envelope import Envelope
from interlock.contracts.errors import InterlockError, MalformedMessage, described
from interlock.contracts.subjects import Inbound
from interlock.messaging.deadletter import (
    dead_letter,
    deliveries,
    is_last_delivery,
    redelivery_delay,
    settle,
)
from interlock.projector.asked import is_asked
from interlock.projector.dispatch import key_of
from interlock.projector.parking import Parking
from interlock.projector.service import Projector

log = logging.getLogger("interlock.projector")
SOURCE = "projector"


@dataclass(frozen=True)
class Letter:
    """What a dead letter is known to be about: a well-formed event, the sender its subject
    names (None: the subject did not parse), and the projector that audits it."""

    projector: Projector
    event: Envelope | None
    inbound: Inbound | None

    async def audit(self, reason: str, detail: str) -> None:
        """Audit the letter on the workflow it names, once it is stored on the dead-letter
        stream (so whoever sees the audit row finds the letter too): a store that is down is
        waited out (a retryable error propagates, the message is decided again, and its dead
        letter, under the same message id, stored once), any other failure only logged."""
        if self.event is None or self.inbound is None:
            return
        try:
            await self.projector.audit_dead_letter(self.event, reason, detail, self.inbound)
        except InterlockError as exc:
            if exc.retryable:
                raise
            log.warning("dead letter %s not audited: %s", self.event.event_id, described(exc))
        except Exception as exc:
            log.warning("dead letter %s not audited: %s", self.event.event_id, described(exc))


async def refuse(
    broker: NatsBroker,
    raw: Msg,
    exc: MalformedMessage,
    grace: float,
    letter: Letter,
    *,
    parking: Parking,
) -> bool:
    """Dead-letter a malformed message (audited on its workflow if it names one); give one for
    an unknown workflow time to be preceded by its START (published earlier elsewhere, or
    redelivered after a crash), while its sender's share of waiting messages has room.
    True if the message now waits."""
    detail = exc.detail
    if exc.reason == "unknown_workflow":
        event = letter.event
        event_id, workflow = (event.event_id, key_of(event)) if event else (None, None)
        refused = await parking.wait_for_workflow(raw, letter.inbound, grace, event_id, workflow)
        if refused is None:
            return True
        detail += refused
    await dead_letter(broker, raw, source=SOURCE, reason=exc.reason, detail=detail)
    await letter.audit(exc.reason, detail)
    return False


async def retry_later(broker: NatsBroker, raw: Msg, exc: Exception, letter: Letter) -> None:
    """Have a message that failed for no fault of its own decided again later, with a
    growing delay; dead-letter it `max_deliver_exceeded` on its last delivery."""
    if is_asked(raw):  # its stage sends it the durable way, which retries it
        await settle(raw.nak, raw.subject)
        return
    if is_last_delivery(raw, subjects.PROJECTOR_MAX_DELIVER):
        detail = described(exc)
        await dead_letter(broker, raw, source=SOURCE, reason="max_deliver_exceeded", detail=detail)
        await letter.audit("max_deliver_exceeded", detail)
        return
    delivered = deliveries(raw)
    log.warning("will retry %s (delivery %d): %s", raw.subject, delivered, described(exc))
    await settle(lambda: raw.nak(delay=redelivery_delay(raw, 0.5)), raw.subject)

"""Which workflow's line an inbound message waits in.

Messages of one workflow are decided one at a time (each sender's in stream order), because
each decision reads the state the one before it left. A message the projector refuses
whatever that state is (a sender who may not speak for the tenant, the type or the role; an
event id or a message id reserved for results or timers; a timestamp out of range) reads
nothing the workflow's other messages write, so it waits in no line: decided beside them, in
slots of its own (`dispatch`). Otherwise an attacker who knows a workflow's id could put any
number of refusals in front of its next genuine step.

Anything the check cannot tell (a claim it cannot read, a type nobody installed) stays in
the workflow's line and is decided there as before.
"""

from __future__ import annotations

from collections.abc import Callable

from nats.aio.msg import Msg

from interlock.contracts.envelope import Envelope
from interlock.contracts.errors import MalformedMessage
from interlock.contracts.subjects import HEADER_MSG_ID
from interlock.projector.dispatch import LineKey, key_of
from interlock.projector.service import Projector

LineOf = Callable[[Msg, Envelope | MalformedMessage], LineKey | None]


def lines_of(projector: Projector) -> LineOf:
    """The line of each message `projector` decides: its workflow's, or None for none."""

    def line_of(raw: Msg, event: Envelope | MalformedMessage) -> LineKey | None:
        if isinstance(event, MalformedMessage):
            return None
        try:
            headers = dict(raw.headers or {})
            inbound = projector.inbound(raw.subject, raw.data, headers)
            if projector.refused_at_door(event, inbound, headers.get(HEADER_MSG_ID)):
                return None
        except Exception:  # decided in its workflow's line, which refuses it properly
            pass
        return key_of(event)

    return line_of

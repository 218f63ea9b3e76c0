"""Hostile messages at the projector's door that are well-formed and sent by a client allowed to
publish, yet must change nothing and leave their record with their sender:

* a cancellation dated year 1, year 9999 or days ahead (it once passed the door and failed the
  commit on every delivery, dead-lettered `max_deliver_exceeded`, never audited);
* a cancellation of the good tenant's workflow by a client limited to another tenant, as an
  actor of its choosing (its refusals once filled that workflow's audit);
* a cancellation under the event id of the workflow's request, already decided (a different
  message under a decided id was dropped as a duplicate with nothing recorded).

Pure, like the other forgers: the seed decides every message.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from interlock.contracts import subjects
from interlock.tools.hostile.messages import HEADER, Hostile, Target
from interlock.tools.hostile.reads import DESK

ABSURD_TIMES = ("0001-01-01T00:00:00+00:00", "9999-12-31T23:59:59+00:00")
FOREIGN = "foreign_refusal"
"""The kind whose refusal must never be audited on the workflow it names."""


def _cancel(n: int, kind: str, client: str, target: Target, **fields: Any) -> Hostile:
    event_id = fields.pop("event_id", f"hostile-{n}")
    event = {
        "event_id": event_id,
        "type": "CANCEL_REQUESTED",
        "workflow_type": "support",
        "workflow_id": target.workflow_id,
        "tenant_id": target.tenant_id,
        "actor": {"id": "ops", "role": "operator"},
        "occurred_at": datetime.now(UTC).isoformat(),
        "payload": {"reason": "hostile"},
        **fields,
    }
    headers = {HEADER: str(n), subjects.HEADER_MSG_ID: f"hostile-msg-{n}"}
    subject = subjects.signal("support", client)
    return Hostile(n, kind, client, subject, json.dumps(event).encode(), headers, event_id)


def out_of_range_time(rng: random.Random, n: int, target: Target) -> Hostile:
    """A cancellation its client may send, dated where no real message is."""
    ahead = (datetime.now(UTC) + timedelta(days=rng.randint(3, 400))).isoformat()
    when = rng.choice([*ABSURD_TIMES, ahead])
    return _cancel(n, "out_of_range_time", "approvals", target, occurred_at=when)


def foreign_refusal(rng: random.Random, n: int, target: Target) -> Hostile:
    """The good tenant's workflow cancelled by a client limited to another tenant."""
    actor = {"id": f"mallory-{rng.getrandbits(32):08x}", "role": "operator"}
    return _cancel(n, FOREIGN, DESK, target, actor=actor)


def reused_event_id(rng: random.Random, n: int, target: Target) -> Hostile:
    """A cancellation under the event id of the workflow's request (decided long ago)."""
    event_id = json.loads(target.start)["event_id"]
    return _cancel(n, "reused_event_id", "approvals", target, event_id=event_id)


DOOR_FORGERS: dict[str, Callable[[random.Random, int, Target], Hostile]] = {
    "out_of_range_time": out_of_range_time,
    FOREIGN: foreign_refusal,
    "reused_event_id": reused_event_id,
}

"""Carrying out the hostile reads of `reads.py` against the broker, and their fates.

A refused attempt is its fate at once (`read_refused`, `consumer_refused`, `delete_refused`,
`pull_refused`). A plain subscription is refused without an answer, so its fate is settled at
the end of the round: `subscription_refused` when it received nothing although the good
workflows announced meanwhile (the victim's own subscription shows they did; else it cannot be
told, `UNACCOUNTED`), `ACCEPTED` when it received anything. The victim's consumer is checked
last: gone, pulled from or re-filtered, every attempt on it is `ACCEPTED` (a violation).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import nats.errors
import nats.js.errors
from nats.aio.client import Client
from nats.aio.subscription import Subscription
from nats.js.api import ConsumerConfig, DeliverPolicy

from interlock.contracts import subjects
from interlock.tools.hostile import account
from interlock.tools.hostile.messages import Hostile
from interlock.tools.hostile.reads import VICTIM, VICTIM_CONSUMER, victim_filter

REFUSED_S = 1.0
"""How long an API request the broker drops is waited for."""
_REFUSALS = (TimeoutError, nats.errors.TimeoutError, nats.js.errors.BadRequestError)


@dataclass
class Snoops:
    """The attempts of one round, made through `connect(identity)` connections."""

    connect: Callable[[str], Awaitable[Client]]
    good_tenant: str
    subscriptions: dict[int, Subscription] = field(default_factory=dict)
    on_victim: list[int] = field(default_factory=list)
    control: Subscription | None = None
    """The victim's own plain subscription: it shows that announcements were made."""

    async def prepare(self) -> None:
        """The victim's durable consumer of its tenant's announcements (kept across rounds)."""
        nc = await self.connect(VICTIM)
        self.control = await nc.subscribe(victim_filter(self.good_tenant))
        await nc.jetstream().pull_subscribe(
            victim_filter(self.good_tenant), durable=VICTIM_CONSUMER, stream=subjects.STREAM_OUT
        )

    async def attempt(self, h: Hostile) -> str | None:
        """Try `h`; its fate, or None while a subscription waits to be settled."""
        how = json.loads(h.body)
        nc = await self.connect(how["client"])
        js = nc.jetstream(timeout=REFUSED_S)
        op, consumer = how["op"], how.get("consumer", "")
        if op == "subscribe":
            self.subscriptions[h.number] = await nc.subscribe(h.subject)
            return None
        if op in ("delete", "pull", "hijack"):
            self.on_victim.append(h.number)
        try:
            return await _attempted(nc, js, op, h.subject, consumer)
        except _REFUSALS:
            return {"delete": "delete_refused", "pull": "pull_refused"}.get(op, "consumer_refused")

    async def settled(self, admin: Client) -> dict[int, str]:
        """The fates of the subscriptions, and a violation for every attempt on the victim's
        consumer if it was deleted, pulled from or changed."""
        announced = self.control is not None and self.control.pending_msgs > 0
        refused = "subscription_refused" if announced else account.UNACCOUNTED
        fates = {
            n: account.ACCEPTED if s.pending_msgs else refused
            for n, s in self.subscriptions.items()
        }
        for subscription in [*self.subscriptions.values(), *filter(None, [self.control])]:
            await subscription.unsubscribe()
        if not await _intact(admin, victim_filter(self.good_tenant)):
            fates.update(dict.fromkeys(self.on_victim, account.ACCEPTED))
        return fates


async def _attempted(nc: Client, js: nats.js.JetStreamContext, op: str, subject: str,
                     consumer: str) -> str:  # fmt: skip
    """Carry out one consumer operation; a violation when the broker lets it through."""
    if op == "delete":
        await nc.jsm(timeout=REFUSED_S).delete_consumer(subjects.STREAM_OUT, consumer)
    elif op == "pull":
        bound = await js.pull_subscribe_bind(durable=consumer, stream=subjects.STREAM_OUT)
        await bound.fetch(1, timeout=REFUSED_S)
    elif op == "consumer_unnamed":
        await js.subscribe(subject, ordered_consumer=True)
    else:  # consumer_named, hijack: a named consumer with that filter
        config = ConsumerConfig(name=consumer, filter_subject=subject,
                                deliver_policy=DeliverPolicy.ALL)  # fmt: skip
        await nc.jsm(timeout=REFUSED_S).add_consumer(subjects.STREAM_OUT, config)
    return account.ACCEPTED


async def _intact(admin: Client, expected_filter: str) -> bool:
    """The victim's consumer exists, unchanged, and nobody pulled from it."""
    try:
        info = await admin.jsm().consumer_info(subjects.STREAM_OUT, VICTIM_CONSUMER)
    except nats.js.errors.NotFoundError:
        return False
    pulled = info.delivered is not None and (info.delivered.consumer_seq or 0) > 0
    return info.config.filter_subject == expected_filter and not pulled

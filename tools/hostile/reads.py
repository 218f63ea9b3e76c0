"""Hostile reads of announcements: what a client limited to one tenant or one workflow type
could try in order to read what is not its own, or to take another client's consumer.

Pure, like the other forgers: the seed decides every attempt. Each is a `Hostile` of identity
`SNOOP` whose subject is the filter (or the subscription) it tries and whose body says how
(`snoop.py` carries it out). None may succeed: the broker must refuse every one.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable

from interlock.contracts import subjects
from interlock.contracts.clients import ClientPolicy
from interlock.tools.hostile.messages import HEADER, Hostile, Target

SNOOP = "bus+read"
"""The `identity` of an attempt to read announcements (the body names the client it uses)."""
DESK = "hostile_desk"
"""A client limited to another tenant than the good traffic's (support only)."""
REQUESTS = "hostile_requests"
"""A client limited to the `request` type (every tenant)."""
VICTIM = "hostile_victim"
"""A client of the good tenant holding a durable consumer of its announcements."""
OTHER_TENANT = "hostile-other"
VICTIM_CONSUMER = subjects.out_consumers(VICTIM)[0]
OPS = ("subscribe", "consumer_named", "consumer_unnamed")
"""How a read is tried: a plain subscription, a consumer under the client's own name with the
filter, an unnamed consumer with it."""


def policies(good_tenant: str) -> dict[str, ClientPolicy]:
    """The clients these attacks are made as (the broker must know them)."""
    return {
        DESK: ClientPolicy(publish={"signal"}, types={"support"}, tenants={OTHER_TENANT}),
        REQUESTS: ClientPolicy(publish={"signal"}, types={"request"}, tenants={"*"}),
        VICTIM: ClientPolicy(publish={"signal"}, types={"support"}, tenants={good_tenant}),
    }


def victim_filter(good_tenant: str) -> str:
    return subjects.tenant_out(good_tenant, "support", ">")


def _attempt(n: int, kind: str, client: str, op: str, subject: str, **more: str) -> Hostile:
    body = json.dumps({"client": client, "op": op, **more}).encode()
    return Hostile(n, kind, SNOOP, subject, body, {HEADER: str(n)})


def foreign_tenant_read(rng: random.Random, n: int, target: Target) -> Hostile:
    """The good tenant's announcements, read by a client limited to another tenant."""
    subject = rng.choice([
        subjects.out("support", ">"),
        subjects.out("support", "approval_requested"),
        subjects.tenant_out(target.tenant_id, "support", ">"),
        f"{subjects.TENANT_OUT_PREFIX}.*.support.>",
        "wf.>",
    ])  # fmt: skip
    consumer = subjects.out_consumers(DESK)[rng.randrange(subjects.OUT_CONSUMERS_PER_CLIENT)]
    return _attempt(n, "foreign_tenant_read", DESK, rng.choice(OPS), subject, consumer=consumer)


def foreign_type_read(rng: random.Random, n: int, target: Target) -> Hostile:
    """Support announcements, read by a client limited to the `request` type."""
    subject = rng.choice([
        subjects.out("support", ">"),
        subjects.out("support", "completed"),
        subjects.tenant_out(target.tenant_id, "support", "approval_requested"),
        f"{subjects.TENANT_OUT_PREFIX}.*.support.>",
    ])  # fmt: skip
    consumer = subjects.out_consumers(REQUESTS)[0]
    return _attempt(n, "foreign_type_read", REQUESTS, rng.choice(OPS), subject, consumer=consumer)


def foreign_consumer(rng: random.Random, n: int, target: Target) -> Hostile:
    """Another client's durable consumer: deleted, pulled from, or re-created under its name
    with the attacker's own filter."""
    client = rng.choice([DESK, REQUESTS])
    op = rng.choice(["delete", "pull", "hijack"])
    own = (
        subjects.tenant_out(OTHER_TENANT, "support", ">")
        if client == DESK
        else subjects.out("request", ">")
    )
    return _attempt(n, "foreign_consumer", client, op, own, consumer=VICTIM_CONSUMER)


def consumer_flood(rng: random.Random, n: int, target: Target) -> Hostile:
    """One consumer more than a client may hold: a name outside its own, its own filter."""
    name = rng.choice([f"{DESK}-out-{subjects.OUT_CONSUMERS_PER_CLIENT + n % 1000}", f"flood-{n}"])
    own = subjects.tenant_out(OTHER_TENANT, "support", ">")
    return _attempt(n, "consumer_flood", DESK, "consumer_named", own, consumer=name)


READ_FORGERS: dict[str, Callable[[random.Random, int, Target], Hostile]] = {
    "foreign_tenant_read": foreign_tenant_read,
    "foreign_type_read": foreign_type_read,
    "foreign_consumer": foreign_consumer,
    "consumer_flood": consumer_flood,
}

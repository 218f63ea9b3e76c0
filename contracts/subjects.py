"""Subject, stream, consumer and bucket names: the addressing half of the public contract."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from interlock.contracts.errors import MalformedMessage

IN_PREFIX = "wf.in"
JOB_PREFIX = "wf.job"
OUT_PREFIX = "wf.out"
TENANT_OUT_PREFIX = "wf.tenant"
"""Announcements again, one tenant's each: `wf.tenant.<tenant>.<type>.<event>`."""
DLQ_PREFIX = "wf.dlq"

STREAM_IN = "WF_IN"
"""Requests, signals, stage results and timer firings: everything the projector consumes
(with several partitions: what carries no routing key; `partition_stream` holds the rest)."""
SLOT_TOKEN = "slot"
"""`wf.in.slot.<slot>.<kind>.…`: a keyed inbound subject as the broker maps it."""


def partition_stream(index: int) -> str:
    """The stream of projector partition `index`'s keyed messages (several partitions)."""
    return f"{STREAM_IN}_P{index}"


def slot_subject(slot: int) -> str:
    """The mapped subjects of one slot (a partition's stream lists those of its slots)."""
    return f"{IN_PREFIX}.{SLOT_TOKEN}.{slot}.>"


def unkeyed_subjects() -> list[str]:
    """What the shared inbound stream holds beside a partition's streams: every inbound
    subject the broker did not map to a slot."""
    return [f"{IN_PREFIX}.{kind}.>" for kind in INBOUND_KINDS]


def inbound_mappings(slots: int) -> dict[str, str]:
    """The broker's subject mappings: a keyed subject (`wf.in.<kind>.<type>.<key>[.<sender>]`)
    to its slot's (`wf.in.slot.<slot>.<kind>.<type>.<key>[.<sender>]`), the slot the
    deterministic `partition()` of the key token."""
    mappings = {}
    for kind in INBOUND_KINDS:
        wildcards = 2 if kind == "timer" else 3
        source = ".".join([IN_PREFIX, kind, *["*"] * wildcards])
        tokens = ".".join(f"{{{{wildcard({i + 1})}}}}" for i in range(wildcards))
        slot = f"{{{{partition({slots},2)}}}}"
        mappings[source] = f"{IN_PREFIX}.{SLOT_TOKEN}.{slot}.{kind}.{tokens}"
    return mappings


STREAM_JOBS = "WF_JOBS"
"""Stage jobs, one work-queue consumer per stage."""
STREAM_OUT = "WF_OUT"
"""Announcements for downstream systems: approval tasks, outcomes."""
OUT_CONSUMERS_PER_CLIENT = 8
"""How many consumers of the announcements stream one client may hold: it may create them
under its own names only (`out_consumers`)."""
OUT_MAX_CONSUMERS = 1024
"""Consumers the announcements stream holds at most, whoever made them (the bound on clients
allowed every type and tenant, which may also make unnamed ones)."""
STREAM_DLQ = "WF_DLQ"
"""Dead letters, each with its reason in headers."""

CONSUMER_PROJECTOR = "projector"
"""The projector's consumer when it runs as one partition (the default)."""
_PARTITION_CONSUMER = re.compile(r"projector-p(\d+)-of-(\d+)")


def projector_consumer(index: int, count: int) -> str:
    """The durable consumer of projector partition `index` of `count` on the inbound stream:
    `projector` for a single partition, else `projector-p<index>-of-<count>`."""
    if count == 1:
        return CONSUMER_PROJECTOR
    return f"projector-p{index}-of-{count}"


def partition_layout(consumer: str) -> tuple[int, int] | None:
    """(index, count) of a partition's consumer; None for any other name."""
    found = _PARTITION_CONSUMER.fullmatch(consumer)
    return None if found is None else (int(found.group(1)), int(found.group(2)))


def is_projector_consumer(name: str) -> bool:
    """Whether `name` is a projector consumer of any partition layout."""
    return name == CONSUMER_PROJECTOR or _PARTITION_CONSUMER.fullmatch(name) is not None


STAGE_ACK_WAIT_S = 10.0
"""How long a stage may hold a job without acking before it is redelivered; stages send
`in_progress` heartbeats during long calls, so this bounds recovery after a crash, not work."""
PROJECTOR_ACK_WAIT_S = 10.0
STAGE_MAX_DELIVER = 6
"""Deliveries of a job before its stage gives up (the last one submits ESCALATE instead)."""
PROJECTOR_MAX_DELIVER = 8
"""Deliveries of an inbound event before the projector dead-letters it."""

HEADER_MSG_ID = "Nats-Msg-Id"
HEADER_DLQ_REASON = "Interlock-Dlq-Reason"
HEADER_DLQ_DETAIL = "Interlock-Dlq-Detail"
HEADER_DLQ_SUBJECT = "Interlock-Dlq-Subject"
HEADER_DLQ_BODY_BYTES = "Interlock-Dlq-Body-Bytes"
"""Set when a dead letter's body was too large to keep: how many bytes it had."""


def outbox_message_id(instance: str, row_id: int) -> str:
    """The `Nats-Msg-Id` of outbox row `row_id` of database `instance`: the projector and the
    relay both publish a row under it, so the stream's duplicate window stores it once."""
    return f"{instance}-{row_id}"


INBOUND_KINDS = REQUEST, SIGNAL, RESULT, TIMER = ("request", "signal", "result", "timer")
"""What an inbound subject may carry; its sender token names a client (requests and
signals), a stage (results) or nobody (timer firings, sent by the timer service alone)."""

_TOKEN = re.compile(r"[A-Za-z0-9_-]+")


def is_token(value: str) -> bool:
    """Whether `value` can be one token of a subject (no dots, wildcards or spaces)."""
    return _TOKEN.fullmatch(value) is not None


def request(workflow_type: str, client: str, key: str | None = None) -> str:
    """Where client `client` publishes requests (START) of `workflow_type`; with the
    workflow's routing `key` (`partitions.routing_key`), routed to its partition."""
    return _inbound(REQUEST, workflow_type, key, client)


def signal(workflow_type: str, client: str, key: str | None = None) -> str:
    """Where client `client` publishes signals (approvals, cancellations, ...)."""
    return _inbound(SIGNAL, workflow_type, key, client)


def result(workflow_type: str, stage: str, key: str | None = None) -> str:
    """Where stage `stage` of `workflow_type` submits the result of a job."""
    return _inbound(RESULT, workflow_type, key, stage)


def timer(workflow_type: str, key: str | None = None) -> str:
    return _inbound(TIMER, workflow_type, key, None)


def _inbound(kind: str, workflow_type: str, key: str | None, sender: str | None) -> str:
    tokens = [IN_PREFIX, kind, workflow_type]
    if key is not None:
        tokens.append(key)
    if sender is not None:
        tokens.append(sender)
    return ".".join(tokens)


def grants(kind: str, workflow_type: str, sender: str | None) -> list[str]:
    """What a sender may publish to send `kind` for `workflow_type` (either may be `*`):
    the unkeyed subject, the keyed one, and the keyed one as the broker maps it (the broker
    checks permissions on the mapped subject)."""
    mapped = ".".join([IN_PREFIX, SLOT_TOKEN, "*", kind, workflow_type, "*"])
    return [
        _inbound(kind, workflow_type, None, sender),
        _inbound(kind, workflow_type, "*", sender),
        mapped if sender is None else f"{mapped}.{sender}",
    ]


_KEY = re.compile(r"[0-9a-f]{16}")
_SLOT = re.compile(r"[0-9]|[1-9][0-9]")
"""A slot token as the broker writes it (0 .. 99; `partitions.SLOTS` bounds it lower)."""


@dataclass(frozen=True)
class Inbound:
    """What an inbound subject says about its message: the kind of event, the workflow
    type, and who sent it (the broker lets only that identity publish there)."""

    kind: str
    workflow_type: str
    sender: str | None
    """The client (request, signal) or stage (result); None for a timer firing."""
    claimed: str | None = None
    """The sender behind a relaying client, as its verified signed claim names it
    (`contracts.sender_claims`); None when it carries no valid claim."""
    claim_checked: bool = False
    """Whether the claim was verified (a projector given the gateway's public key does)."""
    key: str | None = None
    """The routing key the subject carries (None: an unkeyed subject)."""
    slot: int | None = None
    """The slot the broker mapped the key to (None: not mapped)."""


def parse_inbound(subject: str) -> Inbound:
    """Read `wf.in.<kind>.<type>[.<key>][.<sender>]`, or a keyed one as the broker maps it,
    `wf.in.slot.<slot>.<kind>.<type>.<key>[.<sender>]`. Anything else (an unknown kind, a
    missing or extra token, a sender on a timer firing) is a `MalformedMessage`
    (`bad_subject`)."""
    prefix, _, rest = subject.partition(f"{IN_PREFIX}.")
    tokens = rest.split(".")
    slot = None
    if not prefix and tokens[0] == SLOT_TOKEN and len(tokens) > 2:
        if _SLOT.fullmatch(tokens[1]) is None:
            raise MalformedMessage("bad_subject", f"not a slot: {_shown(subject)}")
        slot, tokens = int(tokens[1]), tokens[2:]
    if prefix or tokens[0] not in INBOUND_KINDS:
        raise MalformedMessage("bad_subject", f"not {IN_PREFIX}.<kind>.…: {_shown(subject)}")
    kind = tokens[0]
    senders = 0 if kind == "timer" else 1
    keyed = len(tokens) == 3 + senders
    if (
        len(tokens) not in (2 + senders, 3 + senders)
        or (slot is not None and not keyed)
        or (keyed and _KEY.fullmatch(tokens[2]) is None)
        or not all(is_token(t) for t in tokens)
    ):
        raise MalformedMessage("bad_subject", f"{kind} subjects are {IN_PREFIX}.{_FORMS[kind]}")
    sender = tokens[-1] if senders else None
    return Inbound(kind, tokens[1], sender, key=tokens[2] if keyed else None, slot=slot)


def template(subject: str) -> str:
    """`subject` as few spans' names may carry it: an inbound subject's routing key written
    `{key}` and its slot `{slot}` (one per workflow, one per slot); any other subject as it
    is."""
    try:
        inbound = parse_inbound(subject)
    except MalformedMessage:
        return subject
    if inbound.key is None:
        return subject
    tokens = [IN_PREFIX] + ([SLOT_TOKEN, "{slot}"] if inbound.slot is not None else [])
    tokens += [inbound.kind, inbound.workflow_type, "{key}"]
    return ".".join(tokens + ([inbound.sender] if inbound.sender is not None else []))


def _shown(subject: str) -> str:
    return subject if len(subject) <= 100 else f"{subject[:100]}…"


_FORMS = {
    "request": "request.<type>[.<key>].<client>",
    "signal": "signal.<type>[.<key>].<client>",
    "result": "result.<type>[.<key>].<stage>",
    "timer": "timer.<type>[.<key>]",
}


def inbox_prefix(identity: str) -> str:
    """The reply-subject prefix of a connection as `identity`: the only inbox it may
    subscribe to, so no identity can read the replies (JetStream acks, simulator answers,
    pulled messages) meant for another."""
    return f"_INBOX_{identity}"


def job(workflow_type: str, stage: str) -> str:
    return f"{JOB_PREFIX}.{workflow_type}.{stage}"


def out(workflow_type: str, event: str) -> str:
    """Where every tenant's announcement `event` of `workflow_type` goes (the stable
    subject; only clients allowed every tenant may read it)."""
    return f"{OUT_PREFIX}.{workflow_type}.{event}"


def tenant_token(tenant_id: str) -> str:
    """A tenant as one subject token: its id when that is a token, else `~` and a digest of
    it (`~` is in no token, so the two forms never meet)."""
    if is_token(tenant_id):
        return tenant_id
    return "~" + hashlib.sha256(tenant_id.encode()).hexdigest()[:32]


def tenant_out(tenant_id: str, workflow_type: str, event: str) -> str:
    """Where the same announcement goes for readers limited to `tenant_id` (`event` may be
    a wildcard: `>` for every event of the type)."""
    return f"{TENANT_OUT_PREFIX}.{tenant_token(tenant_id)}.{workflow_type}.{event}"


def out_consumers(client: str) -> list[str]:
    """The names under which `client` may hold consumers of the announcements stream."""
    return [f"{client}-out-{n}" for n in range(OUT_CONSUMERS_PER_CLIENT)]


def dlq(source: str) -> str:
    return f"{DLQ_PREFIX}.{source}"


def stage_consumer(workflow_type: str, stage: str) -> str:
    """Durable consumer name of one stage service."""
    return f"{workflow_type}-{stage}"

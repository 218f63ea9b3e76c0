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
"""Requests, signals, stage results and timer firings: everything the projector consumes."""
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


JOBS_BUCKET = "wf_open_jobs"
"""Per-workflow record of open jobs, written through the outbox; services use it to skip
stale jobs before doing any work."""

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


INBOUND_KINDS = ("request", "signal", "result", "timer")
"""What an inbound subject may carry; its sender token names a client (requests and
signals), a stage (results) or nobody (timer firings, sent by the timer service alone)."""

_TOKEN = re.compile(r"[A-Za-z0-9_-]+")


def is_token(value: str) -> bool:
    """Whether `value` can be one token of a subject (no dots, wildcards or spaces)."""
    return _TOKEN.fullmatch(value) is not None


def request(workflow_type: str, client: str) -> str:
    """Where client `client` publishes requests (START) of `workflow_type`."""
    return f"{IN_PREFIX}.request.{workflow_type}.{client}"


def signal(workflow_type: str, client: str) -> str:
    """Where client `client` publishes signals (approvals, cancellations, ...)."""
    return f"{IN_PREFIX}.signal.{workflow_type}.{client}"


def result(workflow_type: str, stage: str) -> str:
    """Where stage `stage` of `workflow_type` submits the result of a job."""
    return f"{IN_PREFIX}.result.{workflow_type}.{stage}"


def timer(workflow_type: str) -> str:
    return f"{IN_PREFIX}.timer.{workflow_type}"


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


def parse_inbound(subject: str) -> Inbound:
    """Read `wf.in.<kind>.<type>[.<sender>]`. Anything else (an unknown kind, a missing or
    extra token, a sender on a timer firing) is a `MalformedMessage` (`bad_subject`)."""
    prefix, _, rest = subject.partition(f"{IN_PREFIX}.")
    tokens = rest.split(".")
    if prefix or tokens[0] not in INBOUND_KINDS:
        raise MalformedMessage("bad_subject", f"not {IN_PREFIX}.<kind>.…: {_shown(subject)}")
    kind = tokens[0]
    expected = 2 if kind == "timer" else 3
    if len(tokens) != expected or not all(is_token(t) for t in tokens):
        raise MalformedMessage("bad_subject", f"{kind} subjects are {IN_PREFIX}.{_FORMS[kind]}")
    return Inbound(kind, tokens[1], tokens[2] if expected == 3 else None)


def _shown(subject: str) -> str:
    return subject if len(subject) <= 100 else f"{subject[:100]}…"


_FORMS = {
    "request": "request.<type>.<client>",
    "signal": "signal.<type>.<client>",
    "result": "result.<type>.<stage>",
    "timer": "timer.<type>",
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

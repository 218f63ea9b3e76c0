"""The projector's door: what a message may say, given who sent it.

The subject a message arrived on names its kind, its workflow type and its sender, and the
broker lets only that sender publish there (`contracts.subjects.parse_inbound`). So the
projector trusts the subject, never the body's claims about itself:

* the event's kind (request, signal, result, timer firing) and type must be the subject's;
* a request or signal comes from a configured client (`INTERLOCK_CLIENTS`) that may send that
  kind, for that workflow type and tenant, and (signals) with that actor role;
* a result comes from a stage that emits that event, answers an open job of that stage, and
  carries the event id derived from its job; a timer firing, the id derived from its timer;
* requests and signals may not use the event-id namespaces of results and timer firings;
* a relaying client (the gateway) speaks for one sender per message, the one its event id
  names, and is checked against that sender's grant (`ClientPolicy.senders`); once the
  projector verifies the gateway's signed sender claims (`projector.claims`), that sender must
  be the one the claim names (`relayed_sender_of`).

Pure: each check returns the refusal (a `Rejected` with its reason) or None. A message that
did not come through the broker (`inbound` None, an in-process caller) skips the checks that
need a sender.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from interlock.contracts.clients import ClientPolicy, SenderGrant, relayed_sender
from interlock.contracts.definition import EventSpec, WorkflowDefinition
from interlock.contracts.envelope import Envelope, utcnow
from interlock.contracts.errors import MalformedMessage
from interlock.contracts.ids import (
    RESULT_PREFIX,
    is_reserved,
    result_event_id,
    timer_event_id,
)
from interlock.contracts.subjects import HEADER_MSG_ID, Inbound, parse_inbound
from interlock.projector.engine import Rejected, Workflow

Clients = Mapping[str, ClientPolicy]

WITHOUT_STANDING = frozenset(
    {
        "unknown_client",
        "client_not_allowed_type",
        "client_not_allowed_tenant",
        "sender_unsigned",
        "sender_mismatch",
    }
)
"""Refusals of a sender that may not speak for the tenant or workflow type at all: they are
dead-lettered with the sender named, never written into that tenant's workflow audit (a
client of one tenant could otherwise fill another's audit with rows of its choosing)."""


def refusal(
    definition: WorkflowDefinition,
    spec: EventSpec,
    event: Envelope,
    inbound: Inbound | None,
    clients: Clients,
) -> Rejected | None:
    """Why `event` may not be decided at all, whatever the workflow's state (None: it may)."""
    if inbound is not None:
        sent = _sender_refusal(definition, spec, event, inbound, clients)
        if sent is not None:
            return sent
    if spec.source in ("request", "signal") and is_reserved(event.event_id):
        return Rejected("reserved_event_id", f"{event.type} uses an id reserved for results")
    if spec.answers_job and event.event_id != result_event_id(event.causation_id or ""):
        return Rejected("bad_result_id", f"{event.type} does not carry its job's result id")
    if spec.source == "timer":
        timer_id = str(event.payload.get("timer_id", ""))
        if event.event_id != timer_event_id(timer_id):
            return Rejected("bad_timer_id", f"{event.type} does not carry its timer's id")
    return None


@dataclass(frozen=True)
class OccurredWindow:
    """How far an event's `occurred_at` may lie from now. Outside it the message is
    dead-lettered `bad_timestamp` at once: a year-1 or year-9999 timestamp could not even be
    stored (the commit would fail on every delivery until the deliveries ran out). The past
    is generous (a redriven dead letter, a backfill); the future allows clock skew only.
    Measured on the wall clock, not the projector's decision clock: it bounds the input."""

    past: timedelta = timedelta(days=3650)
    future: timedelta = timedelta(days=1)
    clock: Callable[[], datetime] = utcnow

    def refusal(self, event: Envelope) -> str | None:
        """Why `event`'s timestamp is refused (None: it is within the window)."""
        now = self.clock()
        if event.occurred_at < now - self.past:
            return f"occurred_at is more than {self.past.days} days in the past"
        if event.occurred_at > now + self.future:
            return f"occurred_at is more than {self.future} in the future"
        return None


def has_standing(event: Envelope, inbound: Inbound | None, clients: Clients) -> bool:
    """Whether the sender may speak for `event`'s tenant and workflow type at all: only then
    may anything it sent be written into that tenant's audit. Stages and the timer service
    are the installation's own components (and an in-process caller has no sender)."""
    if inbound is None or inbound.kind not in ("request", "signal"):
        return True
    policy = clients.get(inbound.sender or "")
    if policy is None or not policy.admits_type(event.workflow_type):
        return False
    if not policy.admits_tenant(event.tenant_id):
        return False
    if policy.senders is None:
        return True
    sender, refused = relayed_sender_of(event, inbound)
    grant = None if refused is not None else policy.senders.get(sender or "")
    return (
        grant is not None
        and grant.admits_type(event.workflow_type)
        and grant.admits_tenant(event.tenant_id)
    )


def squatted_message_id(inbound: Inbound, message_id: str | None) -> str | None:
    """Why a request or signal may not carry its `Nats-Msg-Id` (None: it may): one in the
    namespace of results and timer firings can only be an attempt to have a real result or
    firing dropped as a duplicate (those travel under sealed ids nobody else can compute,
    `ids.sealed_message_id`, so the attempt fails; it is recorded with its sender)."""
    if inbound.kind not in ("request", "signal") or not is_reserved(message_id or ""):
        return None
    spent = "a stage result" if (message_id or "").startswith(RESULT_PREFIX) else "a timer firing"
    shown = (message_id or "")[:120]
    return f"{inbound.sender} sent a {inbound.kind} under the message id of {spent} ({shown})"


def refuse_squatting(subject: str, headers: dict[str, str], inbound: Inbound | None = None) -> None:
    """Refuse (`reserved_message_id`) a request or signal, well-formed or not, sent under
    the message id of a result or timer firing, naming its sender."""
    if inbound is None:
        try:
            inbound = parse_inbound(subject)
        except MalformedMessage:
            return
    squatted = squatted_message_id(inbound, headers.get(HEADER_MSG_ID))
    if squatted is not None:
        raise MalformedMessage("reserved_message_id", squatted)


def job_refusal(workflow: Workflow, event: Envelope, inbound: Inbound | None) -> Rejected | None:
    """Why a result may not answer the job it names in this workflow: the job is open, but
    another stage's (a job that is not open at all is the table's `stale_version`)."""
    if inbound is None or inbound.kind != "result":
        return None
    job = workflow.execution.open_jobs.get(event.causation_id or "")
    if job is not None and job.stage != inbound.sender:
        return Rejected("job_of_another_stage", f"{event.type} answers another stage's job")
    return None


def _sender_refusal(
    definition: WorkflowDefinition,
    spec: EventSpec,
    event: Envelope,
    inbound: Inbound,
    clients: Clients,
) -> Rejected | None:
    if inbound.workflow_type != event.workflow_type:
        subject = inbound.workflow_type
        return Rejected("subject_mismatch", f"a {event.workflow_type} event on a {subject} subject")
    if inbound.kind != spec.source:
        return Rejected("kind_mismatch", f"{event.type} is a {spec.source}, not a {inbound.kind}")
    if spec.source == "result":
        if event.type not in definition.emitted_by(inbound.sender or ""):
            return Rejected(
                "event_not_emitted_by_stage", f"stage {inbound.sender} does not emit {event.type}"
            )
        return None
    if spec.source in ("request", "signal"):
        return _client_refusal(clients.get(inbound.sender or ""), inbound, spec, event)
    return None


def _client_refusal(
    policy: ClientPolicy | None, inbound: Inbound, spec: EventSpec, event: Envelope
) -> Rejected | None:
    # Standing first (may this sender speak for the tenant and type at all?), so a refusal
    # without it is recognisable as such and kept out of that tenant's audit (`WITHOUT_STANDING`).
    client = inbound.sender
    if policy is None:
        return Rejected("unknown_client", f"{client} is not a configured client")
    if not policy.admits_type(event.workflow_type):
        detail = f"{client} may not address {event.workflow_type}"
        return Rejected("client_not_allowed_type", detail)
    if not policy.admits_tenant(event.tenant_id):
        return Rejected("client_not_allowed_tenant", f"{client} may not act for this tenant")
    if policy.senders is not None:
        relayed = _relayed_refusal(policy.senders, inbound, spec, event)
        if relayed is not None:
            return relayed
    if not policy.may_publish(spec.source):
        return Rejected("client_not_allowed_kind", f"{client} may not send a {spec.source}")
    if spec.source == "signal" and not policy.admits_role(event.actor.role):
        return Rejected("client_not_allowed_role", f"{client} may not sign for the actor's role")
    return None


def relayed_sender_of(event: Envelope, inbound: Inbound) -> tuple[str | None, Rejected | None]:
    """The sender a relaying client's message speaks for: the one its event id names, which
    must be the one its verified claim names when claims are checked; else the refusal."""
    sender = relayed_sender(event.event_id)
    if not inbound.claim_checked:
        return sender, None
    client = inbound.sender
    if inbound.claimed is None:
        return None, Rejected("sender_unsigned", f"{client}: no valid signed sender claim")
    if inbound.claimed != sender:
        detail = f"{client}: the event id names another sender than the signed claim"
        return None, Rejected("sender_mismatch", detail)
    return sender, None


def _relayed_refusal(
    senders: Mapping[str, SenderGrant], inbound: Inbound, spec: EventSpec, event: Envelope
) -> Rejected | None:
    """A relaying client's message carries its one sender's authority: the sender its event
    id (and signed claim) names must be configured and admit the workflow type, the tenant and
    (a signal) the actor role and id."""
    client = inbound.sender
    sender, refused = relayed_sender_of(event, inbound)
    if refused is not None:
        return refused
    grant = senders.get(sender or "")
    if sender is None or grant is None:
        return Rejected("unknown_client", f"{client}: the event id names no configured sender")
    if not grant.admits_type(event.workflow_type):
        detail = f"{client} sender {sender!r} may not address {event.workflow_type}"
        return Rejected("client_not_allowed_type", detail)
    if not grant.admits_tenant(event.tenant_id):
        detail = f"{client} sender {sender!r} may not act for this tenant"
        return Rejected("client_not_allowed_tenant", detail)
    if spec.source == "signal" and not grant.admits_actor(event.actor.id, event.actor.role):
        detail = f"{client} sender {sender!r} may not sign as that actor"
        return Rejected("client_not_allowed_role", detail)
    return None

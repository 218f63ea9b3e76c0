"""Hostile messages: what an attacker holding one identity (a client, a stage, the relay, the
timer service) or none (the gateway's open port) could send, each of one kind.

Pure: a seeded `random.Random` and a snapshot of the good workflows under way decide every
message, so a seed replays the same messages (and Hypothesis, handing in its own `Random`,
can shrink them). No message generated here is one its sender may legitimately send: every
one must be refused, dead-lettered or dropped as a duplicate, and none may change a workflow.
"""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from interlock.contracts import subjects
from interlock.contracts.ids import job_id_for, result_event_id, timer_event_id, timer_id_for
from interlock.tools.hostile.doorway import DOOR_FORGERS
from interlock.tools.hostile.messages import HEADER, Hostile, Target
from interlock.tools.hostile.reads import READ_FORGERS
from interlock.tools.hostile.web import WEB_FORGERS

__all__ = ["FORGERS", "GATEWAY", "HEADER", "REDRIVE", "SENDER", "Hostile", "Target", "forge"]

WORKFLOW_TYPE = "support"
STAGES = ("classify", "retrieve_policy", "inspect_account", "generate_recommendation",
          "validate_policy", "execute_action", "notify_customer", "compensate")  # fmt: skip
RESULTS = ("CLASSIFICATION_SUCCEEDED", "POLICY_RETRIEVED", "ACCOUNT_INSPECTED", "POLICY_VALID",
           "ACTION_EXECUTED", "CUSTOMER_NOTIFIED", "COMPENSATION_SUCCEEDED")  # fmt: skip
GATEWAY = "http"
"""The `identity` of a message posted to the gateway's HTTP port."""
REDRIVE = "http+redrive"
"""The `identity` of a webhook posted by a configured sender (signed with its secret), refused,
whose record an operator then tries to redrive."""
SENDER = "tickets"
"""The gateway's one configured sender in a hostile round."""
OVERSIZED = 300 * 1024


Forger = Callable[[random.Random, int, Target], Hostile]


def _envelope(event_type: str, target: Target, event_id: str, **fields: Any) -> dict[str, Any]:
    return {
        "event_id": event_id,
        "type": event_type,
        "workflow_type": WORKFLOW_TYPE,
        "workflow_id": target.workflow_id,
        "tenant_id": target.tenant_id,
        "actor": {"id": "hostile", "role": "operator"},
        "occurred_at": datetime.now(UTC).isoformat(),
        "payload": {},
        **fields,
    }


def _uid(rng: random.Random) -> uuid.UUID:
    """A random id the seed decides."""
    return uuid.UUID(int=rng.getrandbits(128), version=4)


def _msg(n: int, kind: str, identity: str, subject: str, body: Any, *,
         event_id: str | None = None, msg_id: str | None = None) -> Hostile:  # fmt: skip
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    headers = {HEADER: str(n), subjects.HEADER_MSG_ID: msg_id or f"hostile-msg-{n}"}
    return Hostile(n, kind, identity, subject, data, headers, event_id)


def _request_subject() -> str:
    return subjects.request(WORKFLOW_TYPE, "upstream")


def _signal_subject() -> str:
    return subjects.signal(WORKFLOW_TYPE, "approvals")


def malformed(rng: random.Random, n: int, target: Target) -> Hostile:
    body = rng.choice([rng.randbytes(rng.randint(1, 200)), b"{not json", b"[]", b"null", b""])
    return _msg(n, "malformed", "upstream", _request_subject(), body)


def oversized(rng: random.Random, n: int, target: Target) -> Hostile:
    event = _envelope("CANCEL_REQUESTED", target, f"hostile-{n}")
    event["payload"] = {"reason": "x" * OVERSIZED}
    return _msg(n, "oversized", "approvals", _signal_subject(), event)


def deeply_nested(rng: random.Random, n: int, target: Target) -> Hostile:
    depth = rng.randint(200, 5000)
    body = b'{"event_id": "hostile-%d", "payload": ' % n + b"[" * depth + b"]" * depth + b"}"
    return _msg(n, "deeply_nested", "approvals", _signal_subject(), body)


def wrongly_encoded(rng: random.Random, n: int, target: Target) -> Hostile:
    text = json.dumps(_envelope("CANCEL_REQUESTED", target, f"hostile-{n}"))
    body = rng.choice([text.encode("utf-16"), text.replace("hostile", "hostil\udcff").encode(
        "utf-8", "surrogateescape"), b"\xff\xfe" + text.encode()])  # fmt: skip
    return _msg(n, "wrongly_encoded", "approvals", _signal_subject(), body)


def nul_bearing(rng: random.Random, n: int, target: Target) -> Hostile:
    event = _envelope("CANCEL_REQUESTED", target, f"hostile-{n}", payload={"reason": "a\x00b"})
    return _msg(n, "nul_bearing", "approvals", _signal_subject(), event, event_id=f"hostile-{n}")


def forged_result(rng: random.Random, n: int, target: Target) -> Hostile:
    """A result from a stage that does not emit it, or for a job that is not open."""
    stage = rng.choice(STAGES)
    job = f"forged-job-{_uid(rng)}"
    if target.open_jobs and rng.random() < 0.5:
        job, owner = rng.choice(sorted(target.open_jobs.items()))
        stage = rng.choice([s for s in STAGES if s != owner])  # another stage's job
    event_id = result_event_id(job)
    event = _envelope(rng.choice(RESULTS), target, event_id, causation_id=job)
    subject = subjects.result(WORKFLOW_TYPE, stage)
    identity = f"stage-{WORKFLOW_TYPE}-{stage}"
    return _msg(n, "forged_result", identity, subject, event, event_id=event_id)


def forged_job(rng: random.Random, n: int, target: Target) -> Hostile:
    """An unsigned job (e.g. a 99,999.00 refund), as a compromised relay could publish it."""
    stage = rng.choice(STAGES)
    job_id = f"forged-job-{_uid(rng)}"
    payload = {"job_id": job_id, "stage": stage, "state": "EXECUTING_ACTION",
               "definition_version": 2, "inputs": {"amount": "99999.00"}}  # fmt: skip
    event = _envelope("JOB", target, job_id, expected_version=99, payload=payload)
    subject = subjects.job(WORKFLOW_TYPE, stage)
    return _msg(n, "forged_job", "relay", subject, event, event_id=job_id)


def forged_signal(rng: random.Random, n: int, target: Target) -> Hostile:
    """An approval claiming a role its client may not sign for."""
    event_id = f"hostile-{n}"
    actor = {"id": "mallory", "role": rng.choice(["support_superuser", "cfo", "root"])}
    payload = {"recommendation_version": 1, "amount": "99999.00"}
    event = _envelope("APPROVED", target, event_id, actor=actor, payload=payload)
    return _msg(n, "forged_signal", "approvals", _signal_subject(), event, event_id=event_id)


def reserved_id(rng: random.Random, n: int, target: Target) -> Hostile:
    """A signal spending an id in the namespace of results or timer firings."""
    event_id = rng.choice([result_event_id, timer_event_id])(f"squat-{_uid(rng)}")
    event = _envelope("CANCEL_REQUESTED", target, event_id, expected_version=10_000)
    return _msg(n, "reserved_id", "approvals", _signal_subject(), event, event_id=event_id)


def _squat_subject(rng: random.Random) -> tuple[str, str]:
    """(identity, subject) of a client an attacker holds: upstream's requests or approvals'."""
    if rng.random() < 0.5:
        return "upstream", _request_subject()
    return "approvals", _signal_subject()


def _squat_body(rng: random.Random, n: int, target: Target) -> tuple[Any, str | None]:
    if rng.random() < 0.5:
        return rng.randbytes(rng.randint(1, 40)), None
    event = _envelope("CANCEL_REQUESTED", target, f"hostile-{n}", expected_version=10_000)
    return event, f"hostile-{n}"


def squatted_result(rng: random.Random, n: int, target: Target) -> Hostile:
    """Anything, under the message id of a result the workflow will (or may) get: the id of
    an open job's result, or of a job it derives from what the announcements say (tenant,
    workflow id, a coming state version, a stage), e.g. the refund's."""
    if target.open_jobs and rng.random() < 0.3:
        job = rng.choice(sorted(target.open_jobs))
    else:
        version = target.version + rng.randint(1, 4)
        stage = "execute_action" if rng.random() < 0.5 else rng.choice(STAGES)
        job = job_id_for(target.tenant_id, target.workflow_id, version, stage)
    identity, subject = _squat_subject(rng)
    body, event_id = _squat_body(rng, n, target)
    msg_id = result_event_id(job)
    return _msg(n, "squatted_result", identity, subject, body, event_id=event_id, msg_id=msg_id)


def squatted_timer(rng: random.Random, n: int, target: Target) -> Hostile:
    """Anything, under the message id of a timer firing: an armed timer's, or the approval
    timeout's or deadline's at a coming state version."""
    if target.timers and rng.random() < 0.3:
        timer = rng.choice(sorted(target.timers))
    else:
        version = target.version + rng.randint(0, 4)
        kind = rng.choice(["approval", "deadline"])
        timer = timer_id_for(target.tenant_id, target.workflow_id, version, kind)
    identity, subject = _squat_subject(rng)
    body, event_id = _squat_body(rng, n, target)
    msg_id = timer_event_id(timer)
    return _msg(n, "squatted_timer", identity, subject, body, event_id=event_id, msg_id=msg_id)


def unknown_workflow(rng: random.Random, n: int, target: Target) -> Hostile:
    """A well-formed cancellation for a workflow that does not exist, of the target's tenant:
    many of them once held the projector's in-flight limit for every tenant."""
    event_id = f"hostile-{n}"
    ghost = Target(target.tenant_id, f"ghost-{_uid(rng)}", b"", "")
    event = _envelope("CANCEL_REQUESTED", ghost, event_id, actor={"id": "ops", "role": "operator"})
    return _msg(n, "unknown_workflow", "approvals", _signal_subject(), event, event_id=event_id)


def replayed(rng: random.Random, n: int, target: Target) -> Hostile:
    """The workflow's own request again: under its message id (the broker drops it) or a new
    one (the projector counts an idempotent replay)."""
    msg_id = target.start_msg_id if rng.random() < 0.5 else None
    event_id = json.loads(target.start)["event_id"]
    subject = _request_subject()
    return _msg(n, "replayed", "upstream", subject, target.start, event_id=event_id, msg_id=msg_id)


def cross_tenant(rng: random.Random, n: int, target: Target) -> Hostile:
    """A signal for the workflow's id, claiming another tenant."""
    event_id = f"hostile-{n}"
    event = _envelope("CANCEL_REQUESTED", target, event_id, tenant_id=f"other-{rng.randint(1, 9)}")
    return _msg(n, "cross_tenant", "approvals", _signal_subject(), event, event_id=event_id)


def premature(rng: random.Random, n: int, target: Target) -> Hostile:
    """A timer firing long before its time, as a compromised timer service could send it."""
    timer_id, event_type = rng.choice(sorted(target.timers.items()) or [("no-timer", "RETRY_DUE")])
    event_id = timer_event_id(timer_id)
    fire_at = (datetime.now(UTC) + timedelta(days=7)).isoformat()
    payload = {"timer_id": timer_id, "fire_at": fire_at}
    event = _envelope(event_type, target, event_id, payload=payload)
    subject = subjects.timer(WORKFLOW_TYPE)
    return _msg(n, "premature", "timer", subject, event, event_id=event_id)


def gateway(rng: random.Random, n: int, target: Target) -> Hostile:
    """A webhook: unsigned, signed by nobody we know, or malformed (signing is `Sender`'s)."""
    body = _envelope("APPROVED", target, f"hostile-{n}")
    data = rng.choice([json.dumps(body).encode(), rng.randbytes(40), b"{}"])
    path = f"/v1/workflows/{WORKFLOW_TYPE}/{target.workflow_id}/signals"
    sender = rng.choice(["tickets", "nobody", ""])
    headers = {
        "interlock-sender": sender,
        "webhook-id": f"msg_{n}",
        "content-type": "application/json",
    }
    return Hostile(n, "gateway", GATEWAY, path, data, headers, None)


def redriven_webhook(rng: random.Random, n: int, target: Target) -> Hostile:
    """A configured sender posts a whole envelope as its webhook's body (an approval as an actor
    it names itself); refused, its record is redriven from the dead letters: it must stay a
    refusal, never reach the projector with the gateway's authority."""
    event_id = f"hostile-{n}"
    actor = {"id": f"mallory-{n}", "role": "support_approver"}
    payload = {"recommendation_version": 1, "amount": "20.00"}
    body = _envelope("APPROVED", target, event_id, actor=actor, payload=payload)
    path = f"/v1/workflows/{WORKFLOW_TYPE}/{target.workflow_id}/signals"
    headers = {
        HEADER: str(n),
        "interlock-sender": SENDER,
        "webhook-id": f"msg_{n}",
        "content-type": "application/json",
    }
    return Hostile(
        n, "redriven_webhook", REDRIVE, path, json.dumps(body).encode(), headers, event_id
    )


FORGERS: dict[str, Forger] = {
    "malformed": malformed,
    "oversized": oversized,
    "deeply_nested": deeply_nested,
    "wrongly_encoded": wrongly_encoded,
    "nul_bearing": nul_bearing,
    "forged_result": forged_result,
    "forged_job": forged_job,
    "forged_signal": forged_signal,
    "reserved_id": reserved_id,
    "replayed": replayed,
    "cross_tenant": cross_tenant,
    "premature": premature,
    "gateway": gateway,
    "redriven_webhook": redriven_webhook,
    "squatted_result": squatted_result,
    "squatted_timer": squatted_timer,
    "unknown_workflow": unknown_workflow,
    **DOOR_FORGERS,
    **READ_FORGERS,
    **WEB_FORGERS,
}


def forge(
    rng: random.Random, first: int, count: int, targets: list[Target], kinds: Iterable[str] = ()
) -> list[Hostile]:
    """`count` hostile messages numbered from `first` (numbers name their event and message
    ids: a round starts from a number of its own), of kinds (among `kinds`, default all) and
    targets `rng` chooses."""
    kinds = sorted(kinds or FORGERS)
    return [FORGERS[rng.choice(kinds)](rng, first + i, rng.choice(targets)) for i in range(count)]

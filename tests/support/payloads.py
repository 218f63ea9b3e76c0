"""Valid payloads for every event (support's here, request's in `request_payloads`), and an
envelope builder."""

from __future__ import annotations

import copy
import itertools
import json
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from interlock.contracts.envelope import Actor, Envelope, utcnow
from interlock.contracts.ids import result_event_id, timer_event_id
from tests.support.request_payloads import REQUEST_PAYLOADS
from tests.support.workflows import REGISTRY

CALL = {
    "model": "rules",
    "prompt_version": "test-v1",
    "output": {},
    "validation": "passed",
    "latency_ms": 1.0,
}
REQUEST = {
    "customer_id": "cust-1",
    "subject": "Double charge",
    "body": "I was charged twice for my subscription.",
    "amount": "20.00",
    "currency": "EUR",
}
SUPPORT_PAYLOADS: dict[str, dict[str, Any]] = {
    "START": REQUEST,
    "CLASSIFICATION_SUCCEEDED": {"category": "billing", "confidence": 0.92, "call": CALL},
    "POLICY_RETRIEVED": {
        "policy_id": "refunds",
        "policy_version": 3,
        "category": "billing",
        "max_amount": "100.00",
        "allowed_actions": ["refund"],
    },
    "ACCOUNT_INSPECTED": {"account_ref": "acct-1", "status": "active", "currency": "EUR"},
    "RECOMMENDATION_GENERATED": {
        "action_type": "refund",
        "amount": "20.00",
        "currency": "EUR",
        "evidence_refs": ["policy:refunds:v3", "account:acct-1"],
        "call": CALL,
    },
    "POLICY_VALID": {"passed": True, "recommendation_version": 1, "policy_ref": "p", "checks": []},
    "POLICY_INVALID": {
        "passed": False,
        "recommendation_version": 1,
        "policy_ref": "p",
        "checks": [],
    },
    "POLICY_UNCLEAR": {
        "passed": False,
        "recommendation_version": 1,
        "policy_ref": "p",
        "checks": [],
    },
    "MODEL_OUTPUT_INVALID": {"call": {**CALL, "validation": "failed", "errors": ["bad"]}},
    "ACTION_EXECUTED": {
        "idempotency_key": "support-action:wf:v1",
        "provider_operation_id": "op-1",
        "status": "succeeded",
        "amount": "20.00",
        "currency": "EUR",
    },
    "POST_ACTION_INVARIANT_FAILED": {
        "idempotency_key": "support-action:wf:v1",
        "provider_operation_id": "op-1",
        "invariant": "amount_matches",
    },
    "CUSTOMER_NOTIFIED": {"delivery_key": "d", "notification_id": "n-1", "channel": "email"},
    "COMPENSATION_SUCCEEDED": {"idempotency_key": "k", "reversal_id": "rev-1"},
    "COMPENSATION_FAILED": {"error_class": "provider_refused"},
    "RETRYABLE_ERROR": {"error_class": "timeout", "detail": "upstream timed out"},
    "PERMANENT_ERROR": {"error_class": "not_found"},
    "ESCALATE": {"reason": "reconciliation_impossible"},
    "APPROVED": {"recommendation_version": 1, "amount": "20.00"},
    "REJECTED_BY_REVIEWER": {"recommendation_version": 1, "reason": "no"},
    "CHANGES_REQUESTED": {"recommendation_version": 1, "feedback": "offer a credit instead"},
    "CANCEL_REQUESTED": {"reason": "customer withdrew"},
    "RETRY_REQUESTED": {},
    "COMPENSATE": {},
    "RESOLVED": {},
    "EFFECT_CONFIRMED": {
        "idempotency_key": "support-action:wf:v1",
        "provider_operation_id": "op-found",
        "status": "succeeded",
        "amount": "20.00",
        "currency": "EUR",
        "reconciled": True,
    },
    "EFFECT_RERUN_REQUESTED": {"note": "provider shows nothing under the key"},
    "RETRY_DUE": {"timer_id": "t", "fire_at": "2026-01-01T00:00:00+00:00"},
    "APPROVAL_EXPIRED": {"timer_id": "t", "fire_at": "2026-01-01T00:00:00+00:00"},
    "DEADLINE_EXCEEDED": {"timer_id": "t", "fire_at": "2026-01-01T00:00:00+00:00"},
}
PAYLOADS = {**REQUEST_PAYLOADS, **SUPPORT_PAYLOADS}
"""Every event name of every definition; a shared name has its support payload here."""
BY_TYPE = {"support": PAYLOADS, "request": {**PAYLOADS, **REQUEST_PAYLOADS}}


def payloads_for(workflow_type: str) -> dict[str, dict[str, Any]]:
    """Every event name, with `workflow_type`'s own payload where names are shared."""
    return BY_TYPE[workflow_type]


ROLES = {
    "APPROVED": "support_approver",
    "REJECTED_BY_REVIEWER": "support_approver",
    "CHANGES_REQUESTED": "support_approver",
    "RETRY_REQUESTED": "operator",
    "COMPENSATE": "operator",
    "RESOLVED": "operator",
    "EFFECT_CONFIRMED": "operator",
    "EFFECT_RERUN_REQUESTED": "operator",
    "CANCEL_REQUESTED": "operator",
}
_ids = itertools.count(1)


JOB_TIME = datetime(2030, 1, 1, tzinfo=UTC)


def job_envelope(
    workflow_type: str = "t",
    *,
    event_id: str = "job-1",
    workflow_id: str = "wf-1",
    occurred_at: datetime = JOB_TIME,
    **extra: Any,
) -> Envelope:
    """The envelope of a job, as the projector sends one to a stage."""
    return Envelope(
        event_id=event_id,
        type="JOB",
        workflow_type=workflow_type,
        workflow_id=workflow_id,
        tenant_id="acme",
        actor=Actor(id="projector", role="system"),
        occurred_at=occurred_at,
        **extra,
    )


def envelope(
    event_type: str,
    *,
    workflow_type: str = "support",
    workflow_id: str | None = "wf-1",
    payload: dict[str, Any] | None = None,
    role: str | None = None,
    causation_id: str | None = None,
    event_id: str | None = None,
    occurred_at: datetime | None = None,
    tenant_id: str = "acme",
    **extra: Any,
) -> Envelope:
    role = role or ROLES.get(event_type, "system")
    payload = payloads_for(workflow_type)[event_type] if payload is None else payload
    return Envelope(
        event_id=event_id or _derived_id(workflow_type, event_type, causation_id, payload),
        type=event_type,
        workflow_type=workflow_type,
        workflow_id=workflow_id,
        tenant_id=tenant_id,
        actor=Actor(id=f"{role}-1", role=role),
        causation_id=causation_id,
        occurred_at=occurred_at or datetime.now(UTC),
        payload=payload,
        **extra,
    )


def _derived_id(
    workflow_type: str, event_type: str, causation_id: str | None, payload: dict[str, Any]
) -> str:
    """The id Interlock derives for a result (from its job) or a timer firing (from its
    timer), as the projector expects; any other event gets a fresh one."""
    known = workflow_type in REGISTRY.workflow_types()
    spec = REGISTRY.latest(workflow_type).event(event_type) if known else None
    if spec is not None and spec.answers_job and causation_id is not None:
        return result_event_id(causation_id)
    if spec is not None and spec.source == "timer" and "timer_id" in payload:
        return timer_event_id(str(payload["timer_id"]))
    return f"evt-{next(_ids)}"


BRANCH_OF = {"POLICY_RETRIEVED": "policy", "ACCOUNT_INSPECTED": "account"}
"""The parallel branch whose job a support result answers."""


def result_event(
    workflow_id: str,
    open_jobs: Mapping[str, str | None],
    event_type: str,
    payload: dict[str, Any] | None = None,
) -> Envelope:
    """A support stage's result answering one of `open_jobs` (job id -> branch): the job of
    the result's branch, else any; its event id derives from the job id, as a stage's does."""
    branch = BRANCH_OF.get(event_type)
    job_id = next(
        (j for j, job_branch in open_jobs.items() if branch in (None, job_branch)),
        next(iter(open_jobs), "no-open-job"),
    )
    return Envelope(
        event_id=result_event_id(job_id),
        type=event_type,
        workflow_type="support",
        workflow_id=workflow_id,
        tenant_id="acme",
        actor=Actor(id="stage", role="service"),
        causation_id=job_id,
        occurred_at=utcnow(),
        payload=copy.deepcopy(PAYLOADS[event_type] if payload is None else payload),
    )


def external_body(type_: str, workflow_id: str, actor: dict[str, str], payload: Any) -> bytes:
    """The JSON an outside client publishes for a support workflow of tenant acme: a fresh
    event id, now, and the envelope's fields as the wire format names them."""
    body = {
        "event_id": f"ext-{uuid.uuid4()}",
        "type": type_,
        "workflow_type": "support",
        "workflow_id": workflow_id,
        "tenant_id": "acme",
        "actor": actor,
        "occurred_at": datetime.now(UTC).isoformat(),
        "payload": payload,
    }
    return json.dumps(body).encode()

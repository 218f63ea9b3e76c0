"""Valid payloads for every `request` event, and a checkpoint's worth of data to go with them.

The names the request workflow shares with support (`START`, `APPROVED`, the error and timer
events) carry request-shaped payloads here; `tests.support.payloads.payloads_for` picks the
catalogue by workflow type.
"""

from __future__ import annotations

from typing import Any

CALL = {
    "model": "recorded",
    "model_version": "recorded-1",
    "prompt_version": "request-classify-v1",
    "output": {},
    "validation": "passed",
    "latency_ms": 1.0,
}
FINGERPRINT = "a" * 64
REQUEST = {
    "source": "web_form",
    "request_type": "support",
    "subject": "Access question",
    "body": "Please create a follow-up for this synthetic request.",
    "account_tier": "standard",
    "requested_action": "create_follow_up",
}
DECISION = {
    "category": "support",
    "recommended_route": "service_desk",
    "requested_effect": "create_follow_up",
    "reason_code": "support_request",
}
VERSIONS = {"workflow": "workflow-1", "policy": "policy-1"}
ROUTE = {
    "outcome": "approval_required",
    "route": "service_desk",
    "effect": "create_follow_up",
    "policy_version": "policy-1",
    "checks": [],
    "versions": {"policy": "policy-1"},
}
APPROVAL = {
    "workflow_version": "workflow-1",
    "policy_version": "policy-1",
    "effect": "create_follow_up",
}
AUTHORIZATION = {
    "authorization_id": "auth-1",
    "basis": "route",
    "effect": "create_follow_up",
    "route": "service_desk",
    "fingerprint": FINGERPRINT,
    "versions": VERSIONS,
}
TIMER = {"timer_id": "t", "fire_at": "2026-01-01T00:00:00+00:00"}
REQUEST_PAYLOADS: dict[str, dict[str, Any]] = {
    "START": REQUEST,
    "REQUEST_VALIDATED": {"requested_action": "create_follow_up"},
    "REQUEST_UNSUPPORTED": {"requested_action": "close_account", "allowed": ["create_follow_up"]},
    "REQUEST_NORMALIZED": {"fingerprint": FINGERPRINT, "normalization_version": "normalize-1"},
    "REQUEST_ENRICHED": {"priority": False},
    "REQUEST_CLASSIFIED": {
        "decision": DECISION,
        "call": CALL,
        "versions": {"classifier": "recorded-1", "prompt": "request-classify-v1"},
    },
    "CLASSIFICATION_INVALID": {"errors": ["requested_effect: not allowed"], "call": CALL},
    "ROUTE_BLOCKED": {**ROUTE, "outcome": "blocked"},
    "ROUTED_FOR_APPROVAL": ROUTE,
    "EFFECT_AUTHORIZED": AUTHORIZATION,
    "EFFECT_EXECUTED": {
        "idempotency_key": "request-effect:wf-1:create_follow_up",
        "operation_id": "eff-1",
        "effect": "create_follow_up",
    },
    "EFFECT_CONFIRMED": {
        "idempotency_key": "request-effect:wf-1:create_follow_up",
        "operation_id": "eff-found",
        "effect": "create_follow_up",
        "reconciled": True,
    },
    "RETRYABLE_ERROR": {"error_class": "model_timeout"},
    "PERMANENT_ERROR": {"error_class": "no_recorded_answer"},
    "ESCALATE": {"reason": "stage_unavailable"},
    "APPROVED": APPROVAL,
    "RESUME": {},
    "EXECUTE_REQUESTED": {},
    "EFFECT_RERUN_REQUESTED": {},
    "COMPENSATE": {},
    "CANCEL_REQUESTED": {"reason": "asked to stop"},
    "EFFECT_COMPENSATED": {
        "idempotency_key": "request-effect:wf-1:create_follow_up",
        "reversal_id": "rev-1",
    },
    "COMPENSATION_FAILED": {"error_class": "reversal_refused"},
    "RETRY_DUE": TIMER,
    "APPROVAL_EXPIRED": TIMER,
}


def request_data() -> dict[str, Any]:
    """Everything a run records up to its approval: every guard's references are present."""
    return {
        "request": dict(REQUEST),
        "normalization": dict(REQUEST_PAYLOADS["REQUEST_NORMALIZED"]),
        "evidence": {"priority": False},
        "classification": {"decision": dict(DECISION), "call": CALL},
        "route": dict(ROUTE),
        "approval": dict(APPROVAL),
        "versions": {**VERSIONS, "normalization": "normalize-1"},
    }

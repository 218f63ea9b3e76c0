"""The support workflow's named scenarios: what to send, how to answer, what must result."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from interlock.contracts.subjects import STAGE_MAX_DELIVER
from interlock.tools.demo.runner import Script
from interlock.tools.demo.scripts import (
    approve_after_cancel,
    approve_when_asked,
    cancel_during_action,
    cancel_when_asked,
    never_answer,
    reject_when_asked,
    settle,
    stale_then_current,
)

REQUEST = {
    "subject": "Refund for a double charge",
    "body": "I was charged twice for my subscription this month.",
    "amount": "20.00",
    "currency": "EUR",
}
Ledger = dict[str, int]
Check = tuple[str, Callable[[dict[str, Any], Ledger], bool]]


@dataclass(frozen=True)
class Scenario:
    name: str
    expected: str
    script: Script
    request: dict[str, Any] = field(default_factory=lambda: dict(REQUEST))
    faults: dict[str, list[str]] = field(default_factory=dict)
    checks: tuple[Check, ...] = ()


def events(view: dict[str, Any], *, accepted: bool | None = None) -> list[str]:
    return [e["event_type"] for e in view["audit"] if accepted is None or e["accepted"] == accepted]


def rejected(view: dict[str, Any], event_type: str) -> list[dict[str, Any]]:
    return [e for e in view["audit"] if e["event_type"] == event_type and not e["accepted"]]


def review_reason(view: dict[str, Any]) -> str | None:
    review = view["execution"].get("review") or {}
    return review.get("reason")


def no_effect(view: dict[str, Any], ledger: Ledger) -> bool:
    return ledger["actions"] == 0


def one_effect(view: dict[str, Any], ledger: Ledger) -> bool:
    return ledger["actions"] == 1


SCENARIOS = (
    Scenario(
        "happy_path",
        "COMPLETED",
        approve_when_asked,
        checks=(
            (
                "exactly one refund and one notification",
                lambda v, led: led["actions"] == 1 and led["notifications"] == 1,
            ),
        ),
    ),
    Scenario(
        "policy_invalid",
        "REJECTED",
        settle,
        request={**REQUEST, "amount": "900.00"},
        checks=(
            ("nothing executed", no_effect),
            (
                "the amount check failed",
                lambda v, led: any(
                    c["name"] == "amount_within_policy" and not c["passed"]
                    for c in v["data"]["validation"]["checks"]
                ),
            ),
        ),
    ),
    Scenario(
        "reviewer_rejects", "REJECTED", reject_when_asked, checks=(("nothing executed", no_effect),)
    ),
    Scenario(
        "account_timeout_then_success",
        "COMPLETED",
        approve_when_asked,
        faults={"inspect": ["timeout", "ok"]},
        checks=(
            (
                "one durable retry of the account branch",
                lambda v, led: (
                    v["execution"]["branches"]["account"]["attempts"] == 1
                    and events(v, accepted=True).count("RETRYABLE_ERROR") == 1
                ),
            ),
            ("exactly one refund", one_effect),
        ),
    ),
    Scenario(
        "retry_exhaustion",
        "MANUAL_REVIEW",
        settle,
        faults={"inspect": ["timeout"] * 4},
        checks=(
            (
                "escalated because retries ran out",
                lambda v, led: review_reason(v) == "branch_retries_exhausted",
            ),
        ),
    ),
    Scenario(
        "low_classification_confidence",
        "MANUAL_REVIEW",
        settle,
        request={**REQUEST, "subject": "A question", "body": "Could someone call me?"},
        checks=(
            (
                "escalated for low confidence",
                lambda v, led: review_reason(v) == "low_classification_confidence",
            ),
        ),
    ),
    Scenario(
        "cancel_while_awaiting_approval",
        "CANCELLED",
        cancel_when_asked,
        checks=(("nothing executed", no_effect),),
    ),
    Scenario(
        "late_approval_after_cancel",
        "CANCELLED",
        approve_after_cancel,
        checks=(
            (
                "the late approval was refused as terminal",
                lambda v, led: any(e["reason"] == "terminal" for e in rejected(v, "APPROVED")),
            ),
            ("nothing executed", no_effect),
        ),
    ),
    Scenario(
        "stale_approval_then_current",
        "COMPLETED",
        stale_then_current,
        checks=(
            (
                "the stale approval failed the version guard",
                lambda v, led: any(
                    "!version_current" in e["guard_results"] for e in rejected(v, "APPROVED")
                ),
            ),
            (
                "the action was taken for version 2",
                lambda v, led: v["data"]["action"]["idempotency_key"].endswith(":v2"),
            ),
            ("exactly one refund", one_effect),
        ),
    ),
    Scenario(
        "lost_action_response",
        "COMPLETED",
        approve_when_asked,
        faults={"execute": ["lose_response"]},
        checks=(
            (
                "the receipt was found by key",
                lambda v, led: v["data"]["action"]["reconciled"] is True,
            ),
            ("exactly one provider effect", one_effect),
        ),
    ),
    Scenario(
        "provider_refuses_action",
        "FAILED",
        approve_when_asked,
        faults={"execute": ["refuse"]},
        checks=(
            ("failed permanently, nothing done", no_effect),
            (
                "the refusal is on record",
                lambda v, led: "PERMANENT_ERROR" in events(v, accepted=True),
            ),
        ),
    ),
    Scenario(
        "post_action_invariant_failure",
        "FAILED_COMPENSATED",
        approve_when_asked,
        faults={"execute": ["mismatch"]},
        checks=(
            (
                "one effect, reversed once",
                lambda v, led: led["actions"] == 1 and led["reversals"] == 1,
            ),
        ),
    ),
    Scenario(
        "compensation_failure",
        "MANUAL_REVIEW",
        approve_when_asked,
        # Every reversal of this refund is refused, on every delivery of the compensation: one
        # that missed a late answer and asked again meets the refusal, not a spent plan.
        faults={"execute": ["mismatch"], "reverse": ["fail"] * STAGE_MAX_DELIVER},
        checks=(
            (
                "escalated because compensation failed",
                lambda v, led: review_reason(v) == "compensation_failed",
            ),
        ),
    ),
    Scenario(
        "approval_expiry",
        "MANUAL_REVIEW",
        never_answer,
        checks=(
            (
                "escalated, never auto-approved",
                lambda v, led: review_reason(v) == "approval_expired" and led["actions"] == 0,
            ),
        ),
    ),
    Scenario(
        "invalid_model_output_repaired",
        "COMPLETED",
        approve_when_asked,
        request={**REQUEST, "subject": "[invalid-output] Refund for a double charge"},
        checks=(
            (
                "one repair attempt",
                lambda v, led: events(v, accepted=True).count("MODEL_OUTPUT_INVALID") == 1,
            ),
        ),
    ),
    Scenario(
        "notification_failure_keeps_refund",
        "MANUAL_REVIEW",
        approve_when_asked,
        faults={"notify": ["fail"]},
        checks=(
            (
                "the refund stands, nothing reversed",
                lambda v, led: (
                    led["actions"] == 1
                    and led["reversals"] == 0
                    and review_reason(v) == "notification_failed"
                ),
            ),
        ),
    ),
    Scenario(
        "cancel_during_action",
        "FAILED_COMPENSATED",
        cancel_during_action,
        faults={"execute": ["latency:1500"]},
        checks=(
            (
                "reconciled, then compensated",
                lambda v, led: led["actions"] == 1 and led["reversals"] == 1,
            ),
        ),
    ),
)

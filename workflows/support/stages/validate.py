"""validate_policy: the deterministic check of a recommendation against current policy.

Returns a typed report with every check and its evidence: all pass -> POLICY_VALID; a hard
check fails -> POLICY_INVALID (a business rejection); the policy changed since the evidence
was gathered -> POLICY_UNCLEAR (conflicting sources go to a human).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from interlock.contracts.envelope import Envelope
from interlock.contracts.jobs import JobPayload
from interlock.contracts.payloads import PolicyCheck
from interlock.services.ports import (
    PolicyDocument,
    PolicyStore,
)
from interlock.services.runtime.calls import call
from interlock.services.runtime.stage import StageResult


def checks(
    rec: dict[str, Any], request: dict[str, Any], account: dict[str, Any], policy: PolicyDocument
) -> list[PolicyCheck]:
    amount = Decimal(rec["amount"])
    requested = Decimal(request["amount"]) if request.get("amount") is not None else None
    return [
        PolicyCheck(
            name="action_allowed",
            passed=rec["action_type"] in policy.allowed_actions,
            detail=f"{rec['action_type']} in {policy.allowed_actions}",
        ),
        PolicyCheck(
            name="amount_within_policy",
            passed=amount <= policy.max_amount,
            detail=f"{amount} <= {policy.max_amount}",
        ),
        PolicyCheck(
            name="amount_not_above_request",
            passed=requested is None or amount <= requested,
            detail=f"{amount} <= {requested}",
        ),
        PolicyCheck(
            name="currency_matches_account",
            passed=rec["currency"] == account["currency"],
            detail=f"{rec['currency']} == {account['currency']}",
        ),
        PolicyCheck(
            name="account_in_good_standing",
            passed=not policy.requires_active_account or account["status"] == "active",
            detail=account["status"],
        ),
    ]


@dataclass(frozen=True)
class ValidatePolicy:
    policies: PolicyStore

    async def __call__(self, job: JobPayload, envelope: Envelope) -> StageResult:
        inputs = job.inputs
        evidence = inputs["policy"]
        current = await call(self.policies.current(evidence["category"]), "policy_store")
        if isinstance(current, StageResult):
            return current
        report = checks(inputs["recommendation"], inputs["request"], inputs["account"], current)
        fresh = PolicyCheck(
            name="policy_version_current",
            passed=current.policy_version == evidence["policy_version"],
            detail=f"evidence v{evidence['policy_version']}, current v{current.policy_version}",
        )
        passed = fresh.passed and all(c.passed for c in report)
        event = "POLICY_VALID" if passed else "POLICY_INVALID" if fresh.passed else "POLICY_UNCLEAR"
        return StageResult(
            event,
            {
                "passed": passed,
                "recommendation_version": inputs["recommendation_version"],
                "policy_ref": f"policy:{current.policy_id}:v{current.policy_version}",
                "checks": [c.model_dump(mode="json") for c in (fresh, *report)],
            },
        )

"""validate_policy: the deterministic check of a recommendation against current policy.

Returns a typed report with every check and its evidence: all pass -> POLICY_VALID; a hard
check fails -> POLICY_INVALID (a business rejection); the policy changed since the evidence
was gathered -> POLICY_UNCLEAR (conflicting sources go to a human).
"""

from __future__ import annotations

from pydantic import BaseModel

from interlock import PolicyCheck, StageContext, stage
from interlock.workflows.support.payloads import (
    AccountEvidence,
    PolicyEvidence,
    Recommendation,
    SupportRequest,
)
from interlock.workflows.support.ports import POLICIES
from interlock.workflows.support.results import PolicyInvalid, PolicyUnclear, PolicyValid
from interlock.workflows.support.systems import PolicyDocument


def checks(
    rec: Recommendation,
    request: SupportRequest,
    account: AccountEvidence,
    policy: PolicyDocument,
) -> list[PolicyCheck]:
    amount, requested = rec.amount, request.amount
    return [
        PolicyCheck(
            name="action_allowed",
            passed=rec.action_type in policy.allowed_actions,
            detail=f"{rec.action_type} in {policy.allowed_actions}",
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
            passed=rec.currency == account.currency,
            detail=f"{rec.currency} == {account.currency}",
        ),
        PolicyCheck(
            name="account_in_good_standing",
            passed=not policy.requires_active_account or account.status == "active",
            detail=account.status,
        ),
    ]


class ValidateInputs(BaseModel):
    request: SupportRequest
    recommendation: Recommendation
    recommendation_version: int
    policy: PolicyEvidence
    account: AccountEvidence


@stage(
    "validate_policy",
    reads=ValidateInputs,
    emits=(PolicyValid, PolicyInvalid, PolicyUnclear),
    ports=(POLICIES,),
    system="policy_store",
)
async def validate_policy(
    job: ValidateInputs, ctx: StageContext
) -> PolicyValid | PolicyInvalid | PolicyUnclear:
    evidence = job.policy
    current = await ctx.port(POLICIES).current(evidence.category)
    report = checks(job.recommendation, job.request, job.account, current)
    fresh = PolicyCheck(
        name="policy_version_current",
        passed=current.policy_version == evidence.policy_version,
        detail=f"evidence v{evidence.policy_version}, current v{current.policy_version}",
    )
    passed = fresh.passed and all(c.passed for c in report)
    verdict = PolicyValid if passed else PolicyInvalid if fresh.passed else PolicyUnclear
    return verdict(
        passed=passed,
        recommendation_version=job.recommendation_version,
        policy_ref=f"policy:{current.policy_id}:v{current.policy_version}",
        checks=[fresh, *report],
    )

"""retrieve_policy and inspect_account: read-only evidence, retried durably when transient."""

from __future__ import annotations

from pydantic import BaseModel

from interlock import StageContext, stage
from interlock.workflows.support.payloads import Classification, SupportRequest
from interlock.workflows.support.ports import ACCOUNTS, POLICIES
from interlock.workflows.support.results import AccountInspected, PolicyRetrieved


class PolicyInputs(BaseModel):
    classification: Classification


@stage(
    "retrieve_policy",
    reads=PolicyInputs,
    emits=(PolicyRetrieved,),
    ports=(POLICIES,),
    system="policy_store",
)
async def retrieve_policy(job: PolicyInputs, ctx: StageContext) -> PolicyRetrieved:
    policy = await ctx.port(POLICIES).current(job.classification.category)
    return PolicyRetrieved.model_validate(policy.model_dump())


class AccountInputs(BaseModel):
    request: SupportRequest


@stage(
    "inspect_account",
    reads=AccountInputs,
    emits=(AccountInspected,),
    ports=(ACCOUNTS,),
    system="account_api",
)
async def inspect_account(job: AccountInputs, ctx: StageContext) -> AccountInspected:
    account = await ctx.port(ACCOUNTS).inspect(job.request.customer_id)
    return AccountInspected.model_validate(account.model_dump(exclude={"customer_id"}))

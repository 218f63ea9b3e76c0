"""retrieve_policy and inspect_account: read-only evidence, retried durably when transient."""

from __future__ import annotations

from dataclasses import dataclass

from interlock.contracts.envelope import Envelope
from interlock.contracts.jobs import JobPayload
from interlock.services.ports import AccountApi, PolicyStore
from interlock.services.runtime.calls import call
from interlock.services.runtime.stage import StageResult


@dataclass(frozen=True)
class RetrievePolicy:
    policies: PolicyStore

    async def __call__(self, job: JobPayload, envelope: Envelope) -> StageResult:
        category = job.inputs["classification"]["category"]
        policy = await call(self.policies.current(category), "policy_store")
        if isinstance(policy, StageResult):
            return policy
        return StageResult("POLICY_RETRIEVED", policy.model_dump(mode="json"))


@dataclass(frozen=True)
class InspectAccount:
    accounts: AccountApi

    async def __call__(self, job: JobPayload, envelope: Envelope) -> StageResult:
        account = await call(
            self.accounts.inspect(job.inputs["request"]["customer_id"]), "account_api"
        )
        if isinstance(account, StageResult):
            return account
        evidence = account.model_dump(mode="json", exclude={"customer_id"})
        return StageResult("ACCOUNT_INSPECTED", evidence)

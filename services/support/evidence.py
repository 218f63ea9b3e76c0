"""retrieve_policy and inspect_account: read-only evidence, retried durably when transient."""

from __future__ import annotations

from dataclasses import dataclass

from contracts.envelope import Envelope
from contracts.jobs import JobPayload
from services.ports import (
    AccountApi,
    ExternalRejected,
    ExternalTimeout,
    ExternalUnavailable,
    PolicyStore,
)
from services.runtime.stage import StageResult


def transient(error: Exception, what: str) -> StageResult:
    kind = "timeout" if isinstance(error, ExternalTimeout) else "unavailable"
    return StageResult("RETRYABLE_ERROR", {"error_class": f"{what}_{kind}"})


@dataclass(frozen=True)
class RetrievePolicy:
    policies: PolicyStore

    async def __call__(self, job: JobPayload, envelope: Envelope) -> StageResult:
        category = job.inputs["classification"]["category"]
        try:
            policy = await self.policies.current(category)
        except (ExternalTimeout, ExternalUnavailable) as exc:
            return transient(exc, "policy_store")
        except ExternalRejected as exc:
            return StageResult("PERMANENT_ERROR", {"error_class": exc.error_class})
        return StageResult("POLICY_RETRIEVED", policy.model_dump(mode="json"))


@dataclass(frozen=True)
class InspectAccount:
    accounts: AccountApi

    async def __call__(self, job: JobPayload, envelope: Envelope) -> StageResult:
        try:
            account = await self.accounts.inspect(job.inputs["request"]["customer_id"])
        except (ExternalTimeout, ExternalUnavailable) as exc:
            return transient(exc, "account_api")
        except ExternalRejected as exc:
            return StageResult("PERMANENT_ERROR", {"error_class": exc.error_class})
        evidence = account.model_dump(mode="json", exclude={"customer_id"})
        return StageResult("ACCOUNT_INSPECTED", evidence)

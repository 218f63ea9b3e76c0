"""execute_effect: perform the authorised effect once, reconciling first (`execute_once`).

The idempotency key is `request-effect:<tenant>:<workflow id>:<effect>` — a function of the run and
the operation, never minted per attempt — so a redelivered job, a retry after a timeout or
an operator's resume all reconcile to the one effect on record. The ledger row records the
authorisation the effect executed under. An ambiguous outcome (`OutcomeUnknown`) or an
unavailable provider raises, so the job is redelivered and reconciles again; a definitive
refusal is a `PERMANENT_ERROR`.
"""

from __future__ import annotations

from pydantic import BaseModel

from interlock import EffectRequest, StageContext, execute_once, stage
from interlock.workflows.request.payloads import Authorization
from interlock.workflows.request.ports import EFFECTS
from interlock.workflows.request.results import EffectExecuted

AUTHORITY_FIELDS = {"authorization_id", "basis", "fingerprint", "versions"}


def effect_key(tenant_id: str, workflow_id: str, effect: str) -> str:
    """A workflow id is unique per tenant only, so the tenant is part of the key."""
    return f"request-effect:{tenant_id}:{workflow_id}:{effect}"


class EffectInputs(BaseModel):
    authorization: Authorization


@stage(
    "execute_effect",
    reads=EffectInputs,
    emits=(EffectExecuted,),
    ports=(EFFECTS,),
    effects=True,
    redeliver=True,
)
async def execute_effect(job: EffectInputs, ctx: StageContext) -> EffectExecuted:
    authorization = job.authorization
    key = effect_key(ctx.tenant_id, ctx.workflow_id, authorization.effect)
    request = EffectRequest(
        idempotency_key=key,
        workflow_id=ctx.workflow_id,
        effect=authorization.effect,
        authorized_by=authorization.model_dump(mode="json", include=AUTHORITY_FIELDS),
    )
    provider = ctx.port(EFFECTS)
    receipt, reconciled = await execute_once(provider, key, request)
    return EffectExecuted.model_validate(
        {
            "idempotency_key": key,
            "operation_id": receipt.operation_id,
            "effect": receipt.effect,
            "reconciled": reconciled,
        }
    )

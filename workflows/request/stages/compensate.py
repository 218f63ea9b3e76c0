"""compensate_effect: reverse the run's one effect, found by its idempotency key first when
its outcome is unknown.

The key is the one `execute_effect` used (`effect_key`), so a compensation always meets the
effect the run may have made. Nothing under the key: nothing to reverse, and the run is
compensated (`NOTHING_TO_REVERSE`). A provider that refuses the reversal, or cannot reverse
at all, answers `COMPENSATION_FAILED` with the reason, and the run returns to review with
the effect standing; a timeout or an outage raises, so the job is redelivered.
"""

from __future__ import annotations

from pydantic import BaseModel

from interlock import EffectReverser, StageContext, stage
from interlock.errors import ExternalRejected
from interlock.workflows.request.payloads import Authorization, EffectDone
from interlock.workflows.request.ports import EFFECTS
from interlock.workflows.request.results import CompensationFailed, EffectCompensated
from interlock.workflows.request.stages.execute import effect_key

NOTHING_TO_REVERSE = "none-found-by-key"
IRREVERSIBLE = "reversal_unsupported"


class CompensateInputs(BaseModel):
    authorization: Authorization
    effect: EffectDone | None = None
    """None while the effect's outcome is unknown: it is looked up by its key first."""


@stage(
    "compensate_effect",
    reads=CompensateInputs,
    emits=(EffectCompensated, CompensationFailed),
    ports=(EFFECTS,),
    effects=True,
    redeliver=True,
)
async def compensate_effect(
    job: CompensateInputs, ctx: StageContext
) -> EffectCompensated | CompensationFailed:
    provider = ctx.port(EFFECTS)
    if not isinstance(provider, EffectReverser):
        return CompensationFailed(error_class=IRREVERSIBLE, detail="the provider cannot reverse")
    if job.effect is not None:
        key, operation = job.effect.idempotency_key, job.effect.operation_id
    else:
        key = effect_key(ctx.tenant_id, ctx.workflow_id, job.authorization.effect)
        found = await provider.lookup(key)
        if found is None:
            return EffectCompensated(idempotency_key=key, reversal_id=NOTHING_TO_REVERSE)
        operation = found.operation_id
    try:
        reversal = await provider.reverse(key, operation)
    except ExternalRejected as exc:
        return CompensationFailed(error_class=exc.error_class)
    return EffectCompensated(idempotency_key=key, reversal_id=reversal)

"""execute_effect: perform the authorised effect once, reconciling first (`services.effects`).

The idempotency key is `request-effect:<tenant>:<workflow id>:<effect>` — a function of the run and
the operation, never minted per attempt — so a redelivered job, a retry after a timeout or
an operator's resume all reconcile to the one effect on record. The ledger row records the
authorisation the effect executed under. An ambiguous outcome (`OutcomeUnknown`) or an
unavailable provider raises, so the job is redelivered and reconciles again; a definitive
refusal is a `PERMANENT_ERROR`.
"""

from __future__ import annotations

from dataclasses import dataclass

from interlock import ExternalRejected
from interlock.contracts.envelope import Envelope
from interlock.contracts.jobs import JobPayload
from interlock.services.effects import execute_once
from interlock.services.ports import EffectProvider, EffectRequest
from interlock.services.runtime.calls import refused
from interlock.services.runtime.stage import StageResult

AUTHORITY_FIELDS = ("authorization_id", "basis", "fingerprint", "versions")


def effect_key(tenant_id: str, workflow_id: str, effect: str) -> str:
    """A workflow id is unique per tenant only, so the tenant is part of the key."""
    return f"request-effect:{tenant_id}:{workflow_id}:{effect}"


@dataclass(frozen=True)
class ExecuteEffect:
    effects: EffectProvider

    async def __call__(self, job: JobPayload, envelope: Envelope) -> StageResult:
        authorization = job.inputs["authorization"]
        workflow_id, effect = envelope.workflow_id or "", authorization["effect"]
        key = effect_key(envelope.tenant_id, workflow_id, effect)
        request = EffectRequest(
            idempotency_key=key,
            workflow_id=workflow_id,
            effect=effect,
            authorized_by={k: authorization[k] for k in AUTHORITY_FIELDS},
        )
        try:
            receipt, reconciled = await execute_once(self.effects, key, request)
        except ExternalRejected as exc:
            return refused(exc)
        return StageResult(
            "EFFECT_EXECUTED",
            {
                "idempotency_key": key,
                "operation_id": receipt.operation_id,
                "effect": receipt.effect,
                "reconciled": reconciled,
            },
        )

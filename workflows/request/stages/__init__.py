"""The request workflow's stage services, each a thin handler over its ports.

Only `classify_request` asks a model and only `execute_effect` changes anything outside the
workflow; validation, normalisation, enrichment, routing and approval binding are
deterministic functions of the recorded data.
"""

from __future__ import annotations

from dataclasses import dataclass

from interlock.services.ports import EffectProvider, ModelClient
from interlock.services.runtime.stage import Handler, StageWorker, stages_of
from interlock.workflows.request.stages.classify import ClassifyRequest
from interlock.workflows.request.stages.execute import ExecuteEffect
from interlock.workflows.request.stages.intake import Enrich, Normalize, Validate
from interlock.workflows.request.stages.route import BindApproval, RouteRequest

WORKFLOW_TYPE = "request"


@dataclass(frozen=True)
class RequestPorts:
    model: ModelClient
    effects: EffectProvider


EFFECTFUL = frozenset({"execute_effect"})


def stages(ports: RequestPorts) -> dict[str, StageWorker]:
    """Every request stage, by name, wired to `ports`."""
    handlers: dict[str, Handler] = {
        "validate": Validate(),
        "normalize": Normalize(),
        "enrich": Enrich(),
        "classify_request": ClassifyRequest(ports.model),
        "route": RouteRequest(),
        "bind_approval": BindApproval(),
        "execute_effect": ExecuteEffect(ports.effects),
    }
    return stages_of(WORKFLOW_TYPE, handlers, EFFECTFUL)

"""The request workflow's stages, each a thin typed handler over its ports.

Only `classify_request` asks a model and only `execute_effect` (and `compensate_effect`, which
undoes it) changes anything outside the workflow; validation, normalisation, enrichment,
routing and approval binding are deterministic functions of the recorded data.
"""

from __future__ import annotations

from interlock.workflows.request.stages.classify import classify_request
from interlock.workflows.request.stages.compensate import compensate_effect
from interlock.workflows.request.stages.execute import execute_effect
from interlock.workflows.request.stages.intake import enrich, normalize_request, validate
from interlock.workflows.request.stages.route import bind_approval, route

STAGES = (
    validate,
    normalize_request,
    enrich,
    classify_request,
    route,
    bind_approval,
    execute_effect,
    compensate_effect,
)

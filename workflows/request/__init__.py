"""The `request` workflow as a plugin: its definitions (v1 and v2 for runs in flight, v3
for new ones), its stages and the model and effect provider they call."""

from __future__ import annotations

from interlock import Plugin
from interlock.workflows.request.definition import REQUEST_V1, REQUEST_V2, REQUEST_V3
from interlock.workflows.request.ports import EFFECTS, MODEL
from interlock.workflows.request.prompts import MODEL_TASKS
from interlock.workflows.request.stages import STAGES

PLUGIN = Plugin(
    workflow_type=REQUEST_V3.workflow_type,
    definitions=(REQUEST_V1, REQUEST_V2, REQUEST_V3),
    stages=STAGES,
    ports=(MODEL, EFFECTS),
    description="Inbound requests: validate, classify, route by policy, approve, one effect.",
    model_tasks=MODEL_TASKS,
)

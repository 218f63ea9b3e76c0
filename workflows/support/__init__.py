"""The `support` workflow as a plugin: its definitions (v1 for workflows still in flight, v2
for new ones), its stages and the outside systems they call."""

from __future__ import annotations

from interlock import Plugin
from interlock.workflows.support.definition import SUPPORT_V1, SUPPORT_V2, SUPPORT_V3
from interlock.workflows.support.ports import PORTS
from interlock.workflows.support.prompts import MODEL_TASKS
from interlock.workflows.support.stages import STAGES

PLUGIN = Plugin(
    workflow_type=SUPPORT_V3.workflow_type,
    definitions=(SUPPORT_V1, SUPPORT_V2, SUPPORT_V3),
    stages=STAGES,
    ports=PORTS,
    description="Customer support: classify, gather evidence, recommend, approve, act, notify.",
    model_tasks=MODEL_TASKS,
)

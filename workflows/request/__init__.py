"""The `request` workflow as a plugin: its definition, its stage services and the model and
effect provider they call."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from interlock import Plugin
from interlock.workflows.request.definition import REQUEST_V1
from interlock.workflows.request.ports import EFFECTS, MODEL
from interlock.workflows.request.prompts import MODEL_TASKS
from interlock.workflows.request.stages import RequestPorts, stages


def _workers(adapters: Mapping[str, Any]) -> Mapping[str, Any]:
    return stages(RequestPorts(**adapters))


PLUGIN = Plugin(
    workflow_type=REQUEST_V1.workflow_type,
    definitions=(REQUEST_V1,),
    ports=(MODEL, EFFECTS),
    description="Inbound requests: validate, classify, route by policy, approve, one effect.",
    model_tasks=MODEL_TASKS,
    model_stages=frozenset({"classify_request"}),
    handlers=_workers,
)

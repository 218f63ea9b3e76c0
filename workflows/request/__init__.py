"""The `request` workflow as a plugin: its definition, its stage services and the model and
effect provider they call."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from interlock import Adapter, AdapterContext, HttpEffectConfig, HttpEffects, Plugin, Port
from interlock.services.adapters.sim import SimEffectProvider
from interlock.services.ports import EffectProvider, EffectReceipt, EffectRequest, ModelClient
from interlock.workflows.request.definition import REQUEST_V1
from interlock.workflows.request.prompts import MODEL_TASKS
from interlock.workflows.request.stages import RequestPorts, stages


def _model(ctx: AdapterContext) -> ModelClient:
    client: ModelClient = ctx.model()
    return client


MODEL: Port[ModelClient] = Port("model", default=_model, protocol=ModelClient, asks_model=True)


def _nats_effects(ctx: AdapterContext) -> EffectProvider:
    return SimEffectProvider(ctx.nats, timeout=ctx.timeout)


def _http_effects(ctx: AdapterContext) -> EffectProvider:
    config = HttpEffectConfig.model_validate(ctx.config)
    return HttpEffects[EffectRequest, EffectReceipt](config, EffectReceipt)


EFFECTS: Port[EffectProvider] = Port(
    "effects",
    default=_nats_effects,
    protocol=EffectProvider,
    adapters={
        "nats": Adapter(_nats_effects),
        "http": Adapter(_http_effects, config=HttpEffectConfig),
    },
)


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

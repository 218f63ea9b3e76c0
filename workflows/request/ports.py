"""The outside systems the request workflow's stages call: the model and the effect ledger."""

from __future__ import annotations

from interlock import (
    Adapter,
    AdapterContext,
    EffectProvider,
    EffectReceipt,
    EffectRequest,
    ModelClient,
    Port,
)
from interlock.adapters.http import HttpEffectConfig, HttpEffects
from interlock.simulated import SimEffectProvider


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

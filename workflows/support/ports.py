"""The outside systems the support workflow's stages call, with the simulators as defaults."""

from __future__ import annotations

from interlock import AdapterContext, ModelClient, Port
from interlock.simulated import (
    AccountApi,
    ActionProvider,
    Notifier,
    PolicyStore,
    SimAccountApi,
    SimActionProvider,
    SimNotifier,
    SimPolicyStore,
)


def _model(ctx: AdapterContext) -> ModelClient:
    client: ModelClient = ctx.model()
    return client


MODEL: Port[ModelClient] = Port("model", default=_model, protocol=ModelClient, asks_model=True)
ACCOUNTS: Port[AccountApi] = Port(
    "accounts", default=lambda c: SimAccountApi(c.nats, timeout=c.timeout), protocol=AccountApi
)
POLICIES: Port[PolicyStore] = Port(
    "policies", default=lambda c: SimPolicyStore(c.nats, timeout=c.timeout), protocol=PolicyStore
)
ACTIONS: Port[ActionProvider] = Port(
    "actions",
    default=lambda c: SimActionProvider(c.nats, timeout=c.timeout),
    protocol=ActionProvider,
)
NOTIFIER: Port[Notifier] = Port(
    "notifier", default=lambda c: SimNotifier(c.nats, timeout=c.timeout), protocol=Notifier
)
PORTS = (MODEL, ACCOUNTS, POLICIES, ACTIONS, NOTIFIER)

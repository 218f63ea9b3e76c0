"""The outside systems the support workflow's stages call, with the simulators as defaults."""

from __future__ import annotations

from interlock import Adapter, AdapterContext, ModelClient, Port
from interlock.workflows.support.instant import (
    InstantAccounts,
    InstantActions,
    InstantNotifier,
    InstantPolicies,
)
from interlock.workflows.support.sim import (
    SimAccountApi,
    SimActionProvider,
    SimNotifier,
    SimPolicyStore,
)
from interlock.workflows.support.systems import AccountApi, ActionProvider, Notifier, PolicyStore


def _model(ctx: AdapterContext) -> ModelClient:
    client: ModelClient = ctx.model()
    return client


MODEL: Port[ModelClient] = Port("model", default=_model, protocol=ModelClient, asks_model=True)
# `instant`: answered in process at once (`interlock bench --work none`; see `instant`).
ACCOUNTS: Port[AccountApi] = Port(
    "accounts",
    default=lambda c: SimAccountApi(c.nats, timeout=c.timeout),
    protocol=AccountApi,
    adapters={"instant": Adapter(lambda _: InstantAccounts())},
)
POLICIES: Port[PolicyStore] = Port(
    "policies",
    default=lambda c: SimPolicyStore(c.nats, timeout=c.timeout),
    protocol=PolicyStore,
    adapters={"instant": Adapter(lambda _: InstantPolicies())},
)
ACTIONS: Port[ActionProvider] = Port(
    "actions",
    default=lambda c: SimActionProvider(c.nats, timeout=c.timeout),
    protocol=ActionProvider,
    adapters={"instant": Adapter(lambda _: InstantActions())},
)
NOTIFIER: Port[Notifier] = Port(
    "notifier",
    default=lambda c: SimNotifier(c.nats, timeout=c.timeout),
    protocol=Notifier,
    adapters={"instant": Adapter(lambda _: InstantNotifier())},
)
PORTS = (MODEL, ACCOUNTS, POLICIES, ACTIONS, NOTIFIER)

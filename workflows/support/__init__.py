"""The `support` workflow as a plugin: its definitions (v1 for workflows still in flight, v2
for new ones), its stage services and the outside systems they call."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from interlock import Adapter, AdapterContext, Plugin, Port
from interlock.services.adapters.sim import (
    SimAccountApi,
    SimActionProvider,
    SimNotifier,
    SimPolicyStore,
)
from interlock.services.ports import AccountApi, ActionProvider, ModelClient, Notifier, PolicyStore
from interlock.workflows.support.definition import SUPPORT_V1, SUPPORT_V2
from interlock.workflows.support.instant import (
    InstantAccounts,
    InstantActions,
    InstantNotifier,
    InstantPolicies,
)
from interlock.workflows.support.prompts import MODEL_TASKS
from interlock.workflows.support.stages import SupportPorts, stages


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


def _workers(adapters: Mapping[str, Any]) -> Mapping[str, Any]:
    return stages(SupportPorts(**adapters))


PLUGIN = Plugin(
    workflow_type=SUPPORT_V2.workflow_type,
    definitions=(SUPPORT_V1, SUPPORT_V2),
    ports=(MODEL, ACCOUNTS, POLICIES, ACTIONS, NOTIFIER),
    description="Customer support: classify, gather evidence, recommend, approve, act, notify.",
    model_tasks=MODEL_TASKS,
    model_stages=frozenset({"classify", "generate_recommendation"}),
    handlers=_workers,
)

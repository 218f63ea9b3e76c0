"""The simulated outside systems of the built-in workflows, public for their plugins.

`interlock up` and `interlock demo` start simulators of a support desk's account API, policy
store, payment provider and notifier, and of an internal effect ledger; they answer NATS
request/reply. This module gives a plugin their protocols, the values they exchange and
the adapters that call them, to bind as its ports' defaults (`Port(default=...)`). A plugin
for real systems binds its own adapters or the generic ones (`HttpEffects`, `HttpReader`).
"""

from __future__ import annotations

from interlock.services.adapters.sim import (
    SimAccountApi,
    SimActionProvider,
    SimEffectProvider,
    SimNotifier,
    SimPolicyStore,
)
from interlock.services.ports import (
    AccountApi,
    AccountSnapshot,
    ActionProvider,
    ActionReceipt,
    ActionRequest,
    Delivery,
    Notifier,
    PolicyDocument,
    PolicyStore,
)

__all__ = [
    "AccountApi",
    "AccountSnapshot",
    "ActionProvider",
    "ActionReceipt",
    "ActionRequest",
    "Delivery",
    "Notifier",
    "PolicyDocument",
    "PolicyStore",
    "SimAccountApi",
    "SimActionProvider",
    "SimEffectProvider",
    "SimNotifier",
    "SimPolicyStore",
]

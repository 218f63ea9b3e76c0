"""The simulated outside systems of the built-in workflows, for their plugins' adapters.

`interlock up` and `interlock demo` start simulators of a support desk's account API, policy
store, payment provider and notifier, and of an internal effect ledger; they answer NATS
request/reply on the subjects named here. This module gives a plugin `SimAdapter`, the
request/reply client with Interlock's error translation that a simulated system's adapter
derives from, and `SimEffectProvider`, the effect ledger's `EffectProvider`, to bind as its
ports' defaults (`Port(default=...)`); the support plugin's own systems and their adapters are
in `interlock.workflows.support`. A plugin for real systems binds its own adapters or the
generic ones (`interlock.adapters.http`).
"""

from __future__ import annotations

from interlock.services.adapters.sim import (
    ACCOUNT_INSPECT,
    ACTION_EXECUTE,
    ACTION_LOOKUP,
    ACTION_REVERSE,
    NOTIFY_SEND,
    POLICY_CURRENT,
    POLICY_VERSION,
    SimAdapter,
    SimEffectProvider,
    reversal_id,
)

__all__ = [
    "ACCOUNT_INSPECT",
    "ACTION_EXECUTE",
    "ACTION_LOOKUP",
    "ACTION_REVERSE",
    "NOTIFY_SEND",
    "POLICY_CURRENT",
    "POLICY_VERSION",
    "SimAdapter",
    "SimEffectProvider",
    "reversal_id",
]

"""Simulators of the external systems: the account API, the versioned policy store, the
action (refund) provider, the notifier and the internal-effects provider.

One process (`run_simulator`) serves them over core NATS request/reply (the protocol is
defined in `services.adapters.sim`) and keeps realistic ledgers in PostgreSQL's `sim`
schema: idempotent effects, per-customer fault plans (timeouts, outages, lost responses,
wrong amounts, refusals) and a log of every call. The functions of `admin` seed and
inspect the ledgers directly, for the demo and tests.
"""

from interlock.simulators.admin import (
    action_count,
    calls,
    notification_count,
    plan_effect_faults,
    publish_policy,
    reversal_count,
    seed_customer,
)
from interlock.simulators.effect_ledger import effect_rows
from interlock.simulators.schema import ensure_schema
from interlock.simulators.server import run_simulator

__all__ = [
    "action_count",
    "calls",
    "effect_rows",
    "ensure_schema",
    "notification_count",
    "plan_effect_faults",
    "publish_policy",
    "reversal_count",
    "run_simulator",
    "seed_customer",
]

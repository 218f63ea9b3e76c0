"""Metrics of committed model calls: tokens and cost by workflow type, task and model.

Counted by the projector when it commits a call's record (never by the stage that made it),
so the counters add up exactly what the records hold: `interlock.model.tokens` (exported to
Prometheus as `interlock_model_tokens_total`, with `direction` input or output) and
`interlock.model.cost` (`interlock_model_cost_total`, in the price table's currency).
"""

from __future__ import annotations

from decimal import Decimal
from functools import cache

from opentelemetry import metrics
from opentelemetry.metrics import Counter

from interlock.otel.metrics import METER

TOKENS = "interlock.model.tokens"
COST = "interlock.model.cost"


@cache
def _tokens() -> Counter:
    return metrics.get_meter(METER).create_counter(
        TOKENS, unit="{token}", description="Tokens of committed model calls"
    )


@cache
def _cost() -> Counter:
    return metrics.get_meter(METER).create_counter(
        COST, unit="{currency}", description="Cost of committed model calls, by the price table"
    )


def model_spent(
    workflow_type: str, task: str, model: str, *, tokens_in: int, tokens_out: int, cost: Decimal
) -> None:
    """Count one committed model call."""
    labels = {"workflow_type": workflow_type, "task": task, "model": model}
    _tokens().add(tokens_in, {**labels, "direction": "input"})
    _tokens().add(tokens_out, {**labels, "direction": "output"})
    _cost().add(float(cost), labels)

"""Model calls as the projector keeps them: one record per attempt, appended, never replaced,
and what a workflow has spent on them.

A stage reports each model call it made in its result (`payloads.ModelCall`, under `call`);
the engine appends it to the workflow's execution as a `ModelCallRecord` numbered in commit
order, and adds its tokens and cost to the workflow's `ModelSpend`. The data keeps, under
`ACCEPTED_CALLS`, the number of the record each data key's value came from.

Bounds: a workflow keeps its first `MAX_KEPT` records (the definitions' own loop limits keep
real runs far below); later calls are still added to its spend and counted in
`ModelSpend.dropped`, so budgets and totals stay exact.

Budgets are parameters every workflow type accepts (`BUDGET_PARAMETERS`): a model step is not
dispatched when what the workflow has spent, plus the most a single call of it has cost so far,
would exceed `model_budget_tokens` (input + output tokens) or `model_budget_cost`.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

MAX_KEPT = 100
"""Records kept per workflow; beyond it calls are only added up (`ModelSpend.dropped`)."""
ACCEPTED_CALLS = "model_calls_accepted"
"""The data key holding `{data key: record seq}` for values a model call produced."""
BUDGET_TOKENS = "model_budget_tokens"
BUDGET_COST = "model_budget_cost"
BUDGET_PARAMETERS = frozenset({BUDGET_TOKENS, BUDGET_COST})
BUDGET_EXHAUSTED = "budget_exhausted"
"""The review reason of a model step refused by the budget."""

Verdict = Literal["valid", "repaired", "invalid"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Tokens(_Frozen):
    input: int = 0
    output: int = 0


class ModelCallRecord(_Frozen):
    """One attempt, as committed: what was asked, of which model, with which inputs (by
    digest), what came back and what the validation said of it."""

    seq: int
    """1-based, in commit order within the workflow."""
    task: str
    attempt: int
    """1-based among this workflow's calls of the same task."""
    state: str
    stage: str | None = None
    event_id: str
    event_type: str
    job_id: str | None = None
    prompt_version: str
    model: str
    model_version: str | None = None
    parameters: dict[str, str | int | float | bool] = {}
    input_digest: str | None = None
    input_refs: tuple[str, ...] = ()
    output: dict[str, Any] = {}
    verdict: Verdict
    errors: tuple[str, ...] = ()
    tokens: Tokens = Tokens()
    cost: Decimal = Decimal(0)
    latency_ms: float = 0.0
    trace_id: str | None = None
    at: datetime


class ModelSpend(_Frozen):
    """Everything a workflow's model calls used, kept records or not."""

    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: Decimal = Decimal(0)
    dropped: int = 0
    largest_tokens: int = 0
    """The most tokens (input + output) a single call used: the estimate of the next."""
    largest_cost: Decimal = Decimal(0)

    @property
    def tokens(self) -> int:
        return self.tokens_in + self.tokens_out

    def add(self, record: ModelCallRecord, kept: bool) -> ModelSpend:
        tokens = record.tokens.input + record.tokens.output
        return ModelSpend(
            calls=self.calls + 1,
            tokens_in=self.tokens_in + record.tokens.input,
            tokens_out=self.tokens_out + record.tokens.output,
            cost=self.cost + record.cost,
            dropped=self.dropped + (0 if kept else 1),
            largest_tokens=max(self.largest_tokens, tokens),
            largest_cost=max(self.largest_cost, record.cost),
        )


def over_budget(spend: ModelSpend, parameters: dict[str, Any]) -> str | None:
    """Why one more model call would exceed the budget in `parameters`, or None."""
    tokens, cost = parameters.get(BUDGET_TOKENS), parameters.get(BUDGET_COST)
    if tokens is not None:
        limit = int(tokens)
        if spend.tokens >= limit or spend.tokens + spend.largest_tokens > limit:
            return f"{spend.tokens} of {limit} tokens spent, a call may take {spend.largest_tokens}"
    if cost is not None:
        limit_cost = Decimal(str(cost))
        if spend.cost >= limit_cost or spend.cost + spend.largest_cost > limit_cost:
            return f"{spend.cost} of {limit_cost} spent, a call may cost {spend.largest_cost}"
    return None


def calls_view(execution: Mapping[str, Any], data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A workflow's model calls as `show`, `trace` and the console list them, in order, each
    marked `accepted` when the data holds its value."""
    accepted = set((data.get(ACCEPTED_CALLS) or {}).values())
    rows = []
    for raw in execution.get("model_calls") or ():
        record = ModelCallRecord.model_validate(raw)
        row = record.model_dump(mode="json")
        row["cost"] = float(record.cost)
        row["accepted"] = record.seq in accepted
        rows.append(row)
    return rows


def spend_view(execution: Mapping[str, Any]) -> dict[str, Any]:
    """What a workflow has spent on model calls (`ModelSpend`), with the cost as a number."""
    spend = ModelSpend.model_validate(execution.get("model_spend") or {})
    return {
        "calls": spend.calls,
        "tokens_in": spend.tokens_in,
        "tokens_out": spend.tokens_out,
        "cost": float(spend.cost),
        "dropped": spend.dropped,
    }

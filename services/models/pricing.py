"""What a model call costs: a price table per model name, applied to the tokens it reports.

The table is configuration (`INTERLOCK_MODEL_PRICES`): ``{"<model>": {"input_per_1m": "0.15",
"output_per_1m": "0.60"}}``, prices per million tokens in the installation's currency. A model
absent from the table costs nothing — the local ones (``rules``, ``recorded``) are absent by
default. `PricedModel` wraps any `ModelClient` and fills `ModelReply.cost`, so the stage records
the cost beside the tokens and the projector adds both up.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from interlock.services.ports import ModelClient, ModelReply, ModelRequest

_MILLION = Decimal(1_000_000)
_PLACES = Decimal("1e-10")
"""Costs are kept to ten decimal places (`payloads.ModelCall.cost`)."""


class Price(BaseModel):
    """One model's prices per million input and output tokens."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input_per_1m: Annotated[Decimal, Field(ge=0, max_digits=16)] = Decimal(0)
    output_per_1m: Annotated[Decimal, Field(ge=0, max_digits=16)] = Decimal(0)


def cost_of(prices: Mapping[str, Price], model: str, tokens_in: int, tokens_out: int) -> Decimal:
    """What `tokens_in` + `tokens_out` of `model` cost by `prices` (0 for an unlisted model)."""
    price = prices.get(model)
    if price is None:
        return Decimal(0)
    total = (tokens_in * price.input_per_1m + tokens_out * price.output_per_1m) / _MILLION
    return total.quantize(_PLACES)


class PricedModel:
    """A `ModelClient` that prices each reply of the client it wraps."""

    def __init__(self, client: ModelClient, prices: Mapping[str, Price]) -> None:
        self.client = client
        self._prices = dict(prices)

    async def complete(self, request: ModelRequest) -> ModelReply:
        """The wrapped client's reply, with its `cost`."""
        reply = await self.client.complete(request)
        cost = cost_of(self._prices, reply.model, reply.prompt_tokens, reply.completion_tokens)
        return reply.model_copy(update={"cost": cost})

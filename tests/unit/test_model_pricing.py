"""What a model call costs: the price table per model, applied by `PricedModel` to the tokens
a client reports, and recorded by `ask` in the call with the inputs' digest, task and trace."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from pydantic import BaseModel

from interlock import StageContext, ask
from interlock.app.childenv import child_environment
from interlock.config.durations import parse_duration
from interlock.config.settings import Settings
from interlock.contracts.model_calls import ModelSpend, over_budget
from interlock.ops.selection import parse_duration as selection_duration
from interlock.services.models.pricing import Price, PricedModel, cost_of
from interlock.services.models.recorded import RecordedModel
from interlock.services.ports import ModelReply, ModelRequest

PRICES = {"big": Price(input_per_1m=Decimal("2.50"), output_per_1m=Decimal("10"))}


class _Fixed:
    def __init__(self, output: dict[str, object], model: str = "big") -> None:
        self.output, self.model = output, model

    async def complete(self, request: ModelRequest) -> ModelReply:
        return ModelReply(
            output=self.output,
            model=self.model,
            latency_ms=3.0,
            prompt_tokens=1200,
            completion_tokens=300,
        )


class _Out(BaseModel):
    category: str


def _request(**inputs: object) -> ModelRequest:
    return ModelRequest(task="classify", prompt_version="p-1", inputs=inputs, output_schema={})


def test_a_call_costs_its_tokens_at_its_models_prices() -> None:
    assert cost_of(PRICES, "big", 1200, 300) == Decimal("0.0060000000")
    assert cost_of(PRICES, "rules", 1200, 300) == 0  # not listed: a local model costs nothing


async def test_the_priced_model_fills_the_cost_of_each_reply() -> None:
    reply = await PricedModel(_Fixed({"category": "billing"}), PRICES).complete(_request())
    assert (reply.cost, reply.prompt_tokens, reply.completion_tokens) == (
        Decimal("0.006"),
        1200,
        300,
    )


async def test_ask_records_task_cost_input_digest_and_trace_of_the_call() -> None:
    ctx = StageContext("support", "wf-1", "acme", "job-1", 1, "k")
    model = PricedModel(_Fixed({"category": "billing"}), PRICES)
    with TracerProvider().get_tracer("t").start_as_current_span("stage") as span:
        answer = await ask(model, _request(subject="s", body="b"), _Out, ctx)
        again = await ask(model, _request(body="b", subject="s"), _Out, ctx)
    call = answer.call
    assert (call.task, call.cost, call.input_refs) == (
        "classify",
        Decimal("0.006"),
        ["body", "subject"],
    )
    assert call.trace_id == format(span.get_span_context().trace_id, "032x")
    assert call.input_digest is not None
    assert len(call.input_digest) == 64
    assert call.input_digest == again.call.input_digest  # the same inputs in another order
    other = await ask(model, _request(subject="s", body="c"), _Out, ctx)
    assert other.call.input_digest != call.input_digest


async def test_a_recorded_answer_reports_the_tokens_the_fixture_gives(tmp_path: Path) -> None:
    fixture = tmp_path / "answers.json"
    answer = {"type": "decision", "value": {"category": "billing"}}
    fixture.write_text(
        json.dumps({"answers": {"c1": [{**answer, "tokens": {"input": 120, "output": 30}}]}})
    )
    request = _request().model_copy(update={"case_key": "c1"})
    reply = await RecordedModel(fixture).complete(request)
    assert (reply.prompt_tokens, reply.completion_tokens) == (120, 30)


def test_the_price_table_is_a_setting(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(
        "INTERLOCK_MODEL_PRICES",
        '{"gpt-4o-mini": {"input_per_1m": "0.15", "output_per_1m": "0.6"}}',
    )
    prices = Settings(home=tmp_path).model_prices
    assert prices == {
        "gpt-4o-mini": Price(input_per_1m=Decimal("0.15"), output_per_1m=Decimal("0.6"))
    }


def test_a_negative_price_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("INTERLOCK_MODEL_PRICES", '{"m": {"input_per_1m": "-1"}}')
    with pytest.raises(ValueError, match="input_per_1m"):
        Settings(home=tmp_path)


@pytest.mark.parametrize(
    ("spend", "budget", "stopped"),
    [
        (ModelSpend(), {"model_budget_tokens": 100}, False),  # nothing known: the first may go
        (ModelSpend(), {"model_budget_tokens": 0}, True),
        (ModelSpend(calls=1, tokens_in=40, largest_tokens=40), {"model_budget_tokens": 80}, False),
        (ModelSpend(calls=1, tokens_in=41, largest_tokens=41), {"model_budget_tokens": 80}, True),
        (
            ModelSpend(cost=Decimal("0.5"), largest_cost=Decimal("0.5")),
            {"model_budget_cost": 1},
            False,
        ),
        (
            ModelSpend(cost=Decimal("0.6"), largest_cost=Decimal("0.5")),
            {"model_budget_cost": 1},
            True,
        ),
        (ModelSpend(calls=9, tokens_in=10**6), {}, False),  # no budget, no limit
    ],
)
def test_one_more_call_is_over_budget_when_spent_plus_the_largest_call_exceeds_it(
    spend: ModelSpend, budget: dict[str, object], stopped: bool
) -> None:
    assert (over_budget(spend, budget) is not None) is stopped


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90s", 90), ("30m", 1800), ("24h", 86400), ("7d", 604800), ("2w", 1209600), ("1h30m", 5400)],
)
def test_costs_since_takes_a_duration_as_the_bulk_selections_do(text: str, seconds: int) -> None:
    assert parse_duration(text).total_seconds() == seconds
    assert parse_duration(text) == selection_duration(text)


@pytest.mark.parametrize("text", ["yesterday", "1.5h", "-1d", "10", "0s"])
def test_costs_refuses_what_is_not_a_duration(text: str) -> None:
    with pytest.raises(ValueError, match="duration"):
        parse_duration(text)


def test_a_stage_process_is_given_the_price_table(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    settings = Settings(home=tmp_path, model_prices=PRICES)
    env = child_environment(settings, "support.classify", "nats://x:y@h:1", None)
    monkeypatch.setenv("INTERLOCK_MODEL_PRICES", env["INTERLOCK_MODEL_PRICES"])
    assert Settings(home=tmp_path).model_prices == PRICES

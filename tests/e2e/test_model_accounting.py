"""AI steps you can account for, through the whole stack: a priced OpenAI-compatible model
(a local fake that reports tokens) classifies and recommends; every attempt is its own record
in `show --json`, `interlock costs` and the token and cost counters add up exactly those
records, and a model budget stops a workflow at `budget_exhausted` before the call over it."""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import nats
import pytest
from nats.aio.client import Client

from interlock.config.settings import Settings
from interlock.otel.model_metrics import COST, TOKENS
from interlock.services.models.pricing import Price, cost_of
from tests.support.cli import cli, cli_env
from tests.support.console import asgi_client, console_settings, log_in
from tests.support.fake_openai import FakeOpenAI, completion
from tests.support.inprocess import stack_in_process
from tests.support.payloads import REQUEST
from tests.support.polling import eventually
from tests.support.telemetry import Recorded, recorded
from tests.support.workflow_rows import workflow_views

pytestmark = pytest.mark.timeout(240)
MODEL = "fake-model"
PRICES = {MODEL: Price(input_per_1m=Decimal("2.50"), output_per_1m=Decimal("10.00"))}
BUDGET = 3000

INVALID = {"category": "refunds", "confidence": 0.9, "rationale": "a charge"}
CLASSIFIED = {"category": "billing", "confidence": 0.95, "rationale": "a double charge"}
RECOMMENDED = {
    "action_type": "refund",
    "amount": "20.00",
    "currency": "EUR",
    "rationale": "charged twice",
    "evidence_refs": ["policy", "account"],
}


@dataclass
class Run:
    repaired: str
    stopped: str
    env: dict[str, str]
    views: dict[str, dict[str, Any]]
    tokens: dict[tuple[tuple[str, Any], ...], float]
    cost: dict[tuple[tuple[str, Any], ...], float]


def _delta(rec: Recorded, name: str, before: dict[Any, float]) -> dict[Any, float]:
    after = rec.counter(name)
    return {k: v - before.get(k, 0) for k, v in after.items() if v - before.get(k, 0)}


async def _start(nc: Client, workflow_id: str) -> None:
    body = {
        "event_id": f"req-{uuid.uuid4()}",
        "type": "START",
        "workflow_type": "support",
        "workflow_id": workflow_id,
        "tenant_id": "acme",
        "actor": {"id": "upstream", "role": "system"},
        "occurred_at": datetime.now(UTC).isoformat(),
        "payload": REQUEST,
    }
    await nc.jetstream().publish(
        "wf.in.request.support.upstream",
        json.dumps(body).encode(),
        headers={"Nats-Msg-Id": body["event_id"]},
    )


async def _reaches(database_url: str, workflow_id: str, state: str) -> dict[str, Any]:
    async def probe() -> dict[str, Any] | None:
        view = (await workflow_views(database_url, [workflow_id]))[workflow_id]
        return view if view is not None and view["state"] == state else None

    return await eventually(probe, within=90, every=0.2, what=f"{workflow_id} in {state}")


@pytest.fixture(scope="module")
async def run(e2e_settings: Settings, module_nats: str, module_database: str) -> Run:
    rec = recorded()
    tokens_before, cost_before = rec.counter(TOKENS), rec.counter(COST)
    repaired, stopped = f"acct-{uuid.uuid4()}", f"budget-{uuid.uuid4()}"
    with FakeOpenAI(model=MODEL, api_key=None) as fake:
        settings = Settings(
            home=e2e_settings.home,
            secrets_dir=e2e_settings.secrets_dir,
            model="openai",
            openai_base_url=fake.base_url,
            openai_model=MODEL,
            model_prices=PRICES,
            parameters={"support": {"model_budget_tokens": BUDGET}},
        )
        fake.enqueue(
            completion(json.dumps(INVALID), prompt_tokens=300, completion_tokens=40),
            completion(json.dumps(CLASSIFIED), prompt_tokens=350, completion_tokens=30),
            completion(json.dumps(RECOMMENDED), prompt_tokens=400, completion_tokens=60),
        )
        async with stack_in_process(settings, module_nats, module_database, "support"):
            nc = await nats.connect(module_nats)
            try:
                await _start(nc, repaired)
                await _reaches(module_database, repaired, "AWAITING_APPROVAL")
                fake.enqueue(
                    completion(json.dumps(CLASSIFIED), prompt_tokens=2500, completion_tokens=100)
                )
                await _start(nc, stopped)
                await _reaches(module_database, stopped, "MANUAL_REVIEW")
            finally:
                await nc.close()
        assert fake.problems == []
        assert len(fake.requests) == 4  # the over-budget recommendation was never asked
    env = cli_env(
        e2e_settings.home, INTERLOCK_NATS_URL=module_nats, INTERLOCK_DATABASE_URL=module_database
    )
    views = {}
    for workflow_id in (repaired, stopped):
        code, out = await cli(env, "show", workflow_id, "--json")
        assert code == 0, out
        views[workflow_id] = json.loads(out)
    return Run(
        repaired,
        stopped,
        env,
        views,
        _delta(rec, TOKENS, tokens_before),
        _delta(rec, COST, cost_before),
    )


def _cost(tokens_in: int, tokens_out: int) -> float:
    return float(cost_of(PRICES, MODEL, tokens_in, tokens_out))


async def test_a_repaired_classification_shows_both_attempts_in_order(run: Run) -> None:
    calls = run.views[run.repaired]["model_calls"]
    assert [(c["task"], c["attempt"], c["verdict"], c["accepted"]) for c in calls] == [
        ("classify", 1, "invalid", False),
        ("classify", 2, "repaired", True),
        ("recommend", 1, "valid", True),
    ]
    first = calls[0]
    assert first["errors"]
    assert "category" in first["errors"][0]
    assert first["tokens"] == {"input": 300, "output": 40}
    assert first["cost"] == _cost(300, 40)
    assert first["model"] == MODEL
    assert first["parameters"] == {"temperature": 0, "response_format": "json_schema"}
    assert first["prompt_version"] == "support-classify-v1"
    assert len(first["input_digest"]) == 64
    assert first["input_digest"] == calls[1]["input_digest"]  # the same inputs, asked again
    assert first["latency_ms"] > 0
    (trace_id,) = {a["trace_id"] for a in run.views[run.repaired]["audit"]}
    assert {c["trace_id"] for c in calls} == {trace_id}
    assert run.views[run.repaired]["data"]["model_calls_accepted"] == {
        "classification": 2,
        "recommendation": 3,
    }


async def test_a_budgeted_workflow_stops_at_budget_exhausted_before_the_over_budget_call(
    run: Run,
) -> None:
    view = run.views[run.stopped]
    assert [c["task"] for c in view["model_calls"]] == ["classify"]
    last = view["audit"][-1]
    assert (last["accepted"], last["to_state"], last["detail"]) == (
        True,
        "MANUAL_REVIEW",
        "budget_exhausted",
    )
    assert view["execution"]["review"]["reason"] == "budget_exhausted"
    assert view["execution"]["review"]["target"] == "GENERATING_RECOMMENDATION"
    assert view["model_spend"]["tokens_in"] + view["model_spend"]["tokens_out"] == 2600


async def test_costs_add_up_exactly_the_recorded_tokens_and_prices(run: Run) -> None:
    calls = [c for v in run.views.values() for c in v["model_calls"]]
    tokens_in = sum(c["tokens"]["input"] for c in calls)
    tokens_out = sum(c["tokens"]["output"] for c in calls)
    exact = sum(
        (cost_of(PRICES, MODEL, c["tokens"]["input"], c["tokens"]["output"]) for c in calls),
        start=Decimal(0),
    )
    code, out = await cli(run.env, "costs", "--by", "workflow", "--since", "1h", "--json")
    assert code == 0, out
    report = json.loads(out)
    mine = {r["key"]: r for r in report["rows"] if r["key"] in run.views}
    assert mine[run.repaired] == {
        "key": run.repaired,
        "tenant_id": "acme",
        "calls": 3,
        "tokens_in": 1050,
        "tokens_out": 130,
        "cost": _cost(1050, 130),
    }
    assert sum(r["calls"] for r in mine.values()) == len(calls) == 4
    assert sum(r["tokens_in"] for r in mine.values()) == tokens_in
    assert sum(r["tokens_out"] for r in mine.values()) == tokens_out
    assert sum((Decimal(str(r["cost"])) for r in mine.values()), start=Decimal(0)) == exact
    assert report["total"] == {  # the module's database holds these two workflows only
        "calls": 4,
        "tokens_in": tokens_in,
        "tokens_out": tokens_out,
        "cost": float(exact),
    }
    code, out = await cli(run.env, "costs", "--by", "task", "--json")
    assert code == 0, out
    by_task = {r["key"]: r for r in json.loads(out)["rows"]}
    assert by_task["classify"]["calls"] >= 3


async def test_the_token_and_cost_counters_equal_the_records(run: Run) -> None:
    calls = [c for v in run.views.values() for c in v["model_calls"]]
    for task in ("classify", "recommend"):
        mine = [c for c in calls if c["task"] == task]
        labels = {"workflow_type": "support", "task": task, "model": MODEL}
        key_in = tuple(sorted({**labels, "direction": "input"}.items()))
        key_out = tuple(sorted({**labels, "direction": "output"}.items()))
        assert run.tokens[key_in] == sum(c["tokens"]["input"] for c in mine)
        assert run.tokens[key_out] == sum(c["tokens"]["output"] for c in mine)
        expected = sum(_cost(c["tokens"]["input"], c["tokens"]["output"]) for c in mine)
        assert run.cost[tuple(sorted(labels.items()))] == pytest.approx(expected, rel=1e-12)


async def test_costs_refuses_a_bad_option_in_one_line(run: Run) -> None:
    for bad in (("--since", "yesterday"), ("--by", "colour")):
        code, out = await cli(run.env, "costs", *bad)
        assert code == 2, out
        assert len(out.strip().splitlines()) == 1, out


async def test_costs_prints_a_table_with_the_total(run: Run) -> None:
    code, out = await cli(run.env, "costs", "--by", "task")
    assert code == 0, out
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines() if line.strip()}
    assert rows["classify"][:3] == ["3", "3150", "170"]
    assert rows["total"] == ["4", "3550", "230", "0.011175"]


async def test_the_console_workflow_page_lists_both_attempts_in_order(
    run: Run, e2e_settings: Settings, module_nats: str, module_database: str
) -> None:
    settings = console_settings(Settings(home=e2e_settings.home))
    async with asgi_client(settings, module_nats, module_database) as client:
        assert (await log_in(client, "alice")).status_code == 303
        page = await client.get(f"/workflows/acme/{run.repaired}")
    assert page.status_code == 200
    rows = re.findall(r'<tr class="model-call">(.*?)</tr>', page.text)
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in rows]
    assert [(c[0], c[1], c[4].split(":")[0], c[8]) for c in cells] == [
        ("1", "classify attempt 1", "invalid", ""),
        ("2", "classify attempt 2", "repaired", "accepted"),
        ("3", "recommend attempt 1", "valid", "accepted"),
    ]
    assert cells[0][5] == "300 + 40"


async def test_show_and_trace_list_the_attempts_in_order(run: Run) -> None:
    code, out = await cli(run.env, "show", run.repaired)
    assert code == 0, out
    lines = [line.strip() for line in out.splitlines() if "model call" in line]
    assert [line.split(" [")[0] for line in lines] == [
        "model call 1: classify attempt 1 invalid",
        "model call 2: classify attempt 2 repaired (accepted)",
        "model call 3: recommend attempt 1 valid (accepted)",
    ]
    assert "340 tokens" in lines[0]
    assert "model spend: 3 calls, 1050 tokens in, 130 out" in out
    code, out = await cli(run.env, "trace", run.repaired, "--json")
    assert code == 0, out
    traced = json.loads(out)["model_calls"]
    assert [c["seq"] for c in traced] == [1, 2, 3]
    assert traced == run.views[run.repaired]["model_calls"]

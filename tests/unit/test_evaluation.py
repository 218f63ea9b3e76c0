"""`interlock eval`: a task's golden set asked of a model under a prompt, answers checked
against the output model and field by field, and a threshold a worse prompt falls under."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from interlock import ModelTask, Prompt
from interlock.cli import app
from interlock.ops.errors import GoldenSetError
from interlock.ops.evaluation import Case, evaluate, golden_cases
from interlock.services.ports import ModelReply, ModelRequest
from interlock.workflows.support.prompts import CLASSIFY, ClassifierOutput

TASK = ModelTask(
    name="classify",
    prompts=(Prompt("good", "Classify precisely."), Prompt("terse", "Classify.")),
    output=ClassifierOutput,
)
CASES = [
    Case({"subject": "Charged twice"}, {"category": "billing"}),
    Case({"subject": "Locked out"}, {"category": "access"}),
    Case({"subject": "App crashes"}, {"category": "technical"}),
    Case({"subject": "Refund please"}, {"category": "billing"}),
]
RIGHT = {"Charged twice": "billing", "Locked out": "access", "App crashes": "technical"}


class PromptSensitive:
    """A model double whose answers depend on the prompt it is asked under: right under
    "good", "technical" for everything under any other."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def complete(self, request: ModelRequest) -> ModelReply:
        self.asked.append(request.prompt_version)
        subject = str(request.inputs["subject"])
        good = request.prompt_version == "good"
        category = RIGHT.get(subject, "billing") if good else "technical"
        output = {"category": category, "confidence": 0.9, "rationale": "r"}
        return ModelReply(output=output, model="double", latency_ms=1.0, prompt_tokens=10)


async def test_a_worse_prompt_falls_under_the_threshold() -> None:
    model = PromptSensitive()
    good = await evaluate(TASK, CASES, model, prompt_version="good", threshold=0.9)
    terse = await evaluate(TASK, CASES, model, prompt_version="terse", threshold=0.9)

    assert (good["agreement"], good["passed"]) == ({"category": 1.0}, True)
    assert (terse["agreement"], terse["passed"]) == ({"category": 0.25}, False)
    assert terse["schema_valid"] == 1.0
    assert set(model.asked) == {"good", "terse"}
    assert good["tokens"] == {"input": 40, "output": 0}


async def test_an_answer_outside_the_output_model_is_not_valid_and_agrees_with_nothing() -> None:
    class Invalid(PromptSensitive):
        async def complete(self, request: ModelRequest) -> ModelReply:
            return ModelReply(output={"category": "refund_now"}, model="double", latency_ms=1.0)

    report = await evaluate(TASK, CASES, Invalid(), prompt_version="good", threshold=0.5)
    assert (report["schema_valid"], report["agreement"], report["passed"]) == (
        0.0,
        {"category": 0.0},
        False,
    )


def test_a_bad_golden_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "golden.jsonl"
    path.write_text('{"inputs": {}, "expected": {}}\n\nnot json\n')
    with pytest.raises(GoldenSetError, match=r"golden\.jsonl:3: not a golden case"):
        golden_cases(path)


def test_eval_reports_the_rules_and_the_local_model_side_by_side() -> None:
    result = CliRunner().invoke(
        app, ["eval", "support.classify", "--model", "rules", "--model", "local", "--json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    by_model = {r["model"]: r for r in report["by_model"]}
    assert set(by_model) == {"rules", "local"}
    assert CLASSIFY.golden is not None
    cases = len(golden_cases(CLASSIFY.golden))
    for figures in by_model.values():
        assert figures["cases"] == cases
        assert figures["schema_valid"] == 1.0
        assert set(figures["agreement"]) == {"category"}
        assert figures["cost"] == 0.0
    # The trained classifier reads the broken-item refund the keyword rules split on.
    assert by_model["local"]["agreement"]["category"] > by_model["rules"]["agreement"]["category"]
    assert {"cases", "schema_valid", "agreement", "cost", "latency_ms_p50", "passed"} <= set(report)


def test_a_threshold_no_model_reaches_exits_1(tmp_path: Path) -> None:
    golden = tmp_path / "hard.jsonl"
    case = {"inputs": {"subject": "Charged twice", "body": "x"}, "expected": {"category": "access"}}
    golden.write_text(json.dumps(case) + "\n")
    args = ["eval", "support.classify", "--model", "rules", "--golden", str(golden), "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output
    assert json.loads(result.stdout)["passed"] is False


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["eval", "nosuch.classify"], "no workflow type 'nosuch'"),
        (["eval", "support.nope"], "no model task 'nope'"),
        (["eval", "support.recommend"], "ships no golden set"),
        (["eval", "support.classify", "--prompt-version", "v9"], "has no prompt 'v9'"),
        (["eval", "support.classify", "--model", "gpt"], "unknown model client"),
    ],
)
def test_a_bad_target_is_one_line_and_exit_2(args: list[str], says: str) -> None:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert says in result.output
    assert "Traceback" not in result.output

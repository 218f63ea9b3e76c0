"""The ``local`` model: a text classifier trained from the examples a plugin ships, offline
and deterministic, answering the tasks it has examples for and leaving the rest to the
plugin's rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from interlock.app.wiring import task_catalog
from interlock.services.errors import RecordedFixtureError
from interlock.services.models import LocalModel, LocalTask, model_client
from interlock.services.models.rules import RulesModel
from interlock.services.ports import ModelRequest
from interlock.workflows.support import PLUGIN
from interlock.workflows.support.definition import PARAMETERS
from interlock.workflows.support.prompts import CLASSIFY, SUPPORT_CLASSIFY_V1, ClassifierOutput
from tests.support.loose import loose

BROKEN_ITEM = {
    "subject": "Refund for a broken item",
    "body": "The kettle I bought arrived broken. I would like a refund.",
}
THRESHOLD = float(str(PARAMETERS["min_classification_confidence"]))


def _request(inputs: dict[str, str], task: str = "classify") -> ModelRequest:
    return ModelRequest(
        task=task, prompt_version=SUPPORT_CLASSIFY_V1, inputs=inputs, output_schema={}
    )


async def test_the_broken_item_refund_is_billing_with_the_confidence_to_go_on() -> None:
    rules = await model_client("rules", tasks=task_catalog(PLUGIN)).complete(_request(BROKEN_ITEM))
    local = await model_client("local", tasks=task_catalog(PLUGIN)).complete(_request(BROKEN_ITEM))

    # The keyword rules see "refund" and "broken" tie: a guess, sent to manual review.
    assert loose(rules.output["confidence"]) < THRESHOLD
    answer = ClassifierOutput.model_validate(local.output)
    assert (answer.category, answer.confidence >= THRESHOLD) == ("billing", True)
    assert local.model == "local-nb"
    assert local.model_version
    assert local.model_version.startswith("local-nb-")


async def test_a_ticket_with_no_clear_word_is_answered_without_confidence() -> None:
    vague = {"subject": "A question", "body": "Could someone call me?"}
    reply = await model_client("local", tasks=task_catalog(PLUGIN)).complete(_request(vague))
    assert loose(reply.output["confidence"]) < THRESHOLD


async def test_the_same_examples_give_the_same_answers() -> None:
    one, two = (model_client("local", tasks=task_catalog(PLUGIN)) for _ in range(2))
    first = await one.complete(_request(BROKEN_ITEM))
    second = await two.complete(_request(BROKEN_ITEM))
    assert (first.output, first.model_version) == (second.output, second.model_version)


async def test_a_task_without_examples_is_answered_by_its_rules() -> None:
    assert CLASSIFY.examples is not None
    model = LocalModel(
        {"classify": LocalTask(CLASSIFY.examples, "category")},
        RulesModel({"summarise": lambda inputs, repairing: {"summary": "short"}}),
    )
    reply = await model.complete(_request({"text": "anything"}, task="summarise"))
    assert (reply.model, reply.output) == ("rules", {"summary": "short"})


async def test_unreadable_examples_are_refused_in_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "examples.jsonl"
    bad.write_text('{"inputs": {"subject": "x"}}\n')
    model = LocalModel({"classify": LocalTask(bad, "category")}, RulesModel({}))
    with pytest.raises(RecordedFixtureError, match=r"examples\.jsonl cannot be read") as refused:
        await model.complete(_request(BROKEN_ITEM))
    assert "\n" not in str(refused.value)


def test_the_golden_set_shares_no_case_with_the_examples() -> None:
    assert CLASSIFY.examples is not None
    assert CLASSIFY.golden is not None
    examples = set(CLASSIFY.examples.read_text().splitlines())
    golden = CLASSIFY.golden.read_text()
    assert not [line for line in examples if line.split('"output"')[0] in golden]


async def test_the_plugins_test_markers_apply_to_the_local_models_answer() -> None:
    client = model_client("local", tasks=task_catalog(PLUGIN))
    marked = {**BROKEN_ITEM, "subject": "[invalid-output] Refund for a broken item"}
    first = await client.complete(_request(marked))
    repair = _request(marked).model_copy(update={"repair_errors": ["category: not allowed"]})
    repaired = await client.complete(repair)
    assert first.output["category"] == "refund_now"
    assert ClassifierOutput.model_validate(repaired.output).category == "billing"

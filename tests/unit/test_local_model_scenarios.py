"""`INTERLOCK_MODEL=local interlock demo`: every support scenario's ticket, asked of the local
model as the classify stage asks it (first ask, and the repair ask), lands where the scenario
needs it — a category the schema accepts (save the scenario's own invalid-output marker) on
the side of the confidence gate the rules put it, so each scenario takes the path it expects
with either model. The demo itself takes minutes; this pins what it depends on."""

from __future__ import annotations

import pytest

from interlock.app.wiring import task_catalog
from interlock.services.models import model_client
from interlock.services.ports import ModelClient, ModelRequest
from interlock.tools.demo.scenarios import SCENARIOS, Scenario
from interlock.workflows.support import PLUGIN
from interlock.workflows.support.definition import PARAMETERS
from interlock.workflows.support.prompts import SUPPORT_CLASSIFY_V1, ClassifierOutput

THRESHOLD = float(str(PARAMETERS["min_classification_confidence"]))
CATALOG = task_catalog(PLUGIN)
LOCAL = model_client("local", tasks=CATALOG)
RULES = model_client("rules", tasks=CATALOG)
LOW = {"low_classification_confidence"}
"""The scenarios that expect the ticket to go to review for low confidence."""


async def _classified(
    model: ModelClient, scenario: Scenario, *, repairing: bool
) -> ClassifierOutput:
    request = ModelRequest(
        task="classify",
        prompt_version=SUPPORT_CLASSIFY_V1,
        inputs={"subject": scenario.request["subject"], "body": scenario.request["body"]},
        output_schema={},
        repair_errors=["category: invalid"] if repairing else [],
    )
    reply = await model.complete(request)
    return ClassifierOutput.model_validate(reply.output)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
async def test_the_local_model_sends_each_scenario_down_the_path_it_expects(
    scenario: Scenario,
) -> None:
    repairing = "[invalid-output]" in scenario.request["subject"]
    local = await _classified(LOCAL, scenario, repairing=repairing)
    rules = await _classified(RULES, scenario, repairing=repairing)

    goes_on = scenario.name not in LOW
    assert (local.confidence >= THRESHOLD) is goes_on
    assert (rules.confidence >= THRESHOLD) is goes_on
    if goes_on:  # the policy and the refund the scenario checks follow from the category
        assert local.category == rules.category == "billing"


async def test_the_invalid_output_marker_makes_the_local_models_first_answer_invalid() -> None:
    (scenario,) = [s for s in SCENARIOS if s.name == "invalid_model_output_repaired"]
    request = ModelRequest(
        task="classify",
        prompt_version=SUPPORT_CLASSIFY_V1,
        inputs={"subject": scenario.request["subject"], "body": scenario.request["body"]},
        output_schema={},
    )

    first = await LOCAL.complete(request)

    assert first.output["category"] not in {"billing", "access", "technical"}

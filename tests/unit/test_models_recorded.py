"""`RecordedModel`, the model client that replays recorded answers: case files
answered by attempt, native fixtures by task, copies of what it recorded, and a refusal
naming the file and the problem for every malformed or ambiguous fixture."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from interlock.errors import ExternalRejected, ExternalTimeout
from interlock.services.models import RecordedFixtureError, RecordedModel
from interlock.services.ports import ModelRequest
from tests.support.model_requests import REQUEST_CLASSIFY_V1, seed_fixture

DECISION = {"category": "billing", "recommended_route": "finance", "reason_code": "billing"}


def seed_case(case_id: str, event_id: str, outcomes: list[dict[str, Any]] | None) -> dict[str, Any]:
    case: dict[str, Any] = {
        "id": case_id,
        "scenario": "test",
        "event": {"event_id": event_id, "subject": "Invoice question"},
        "expected": "completed",
    }
    if outcomes is not None:
        case["classifier"] = outcomes
    return case


def request_for(case_key: str | None, attempt: int = 1, task: str = "classify_request") -> Any:
    return ModelRequest.model_validate(
        {
            "task": task,
            "prompt_version": REQUEST_CLASSIFY_V1,
            "inputs": {},
            "output_schema": {},
            "case_key": case_key,
            "attempt": attempt,
        }
    )


async def test_seed_fixture_answers_a_timeout_then_the_decision_by_attempt(
    tmp_path: Path,
) -> None:
    outcomes: list[dict[str, Any]] = [{"type": "timeout"}, {"type": "decision", "value": DECISION}]
    path = seed_fixture(
        tmp_path,
        [seed_case("case-04", "evt-004", outcomes), seed_case("case-02", "evt-004", None)],
        classifier_version="recorded-classifier-1",
    )
    model = RecordedModel(path)

    with pytest.raises(ExternalTimeout):
        await model.complete(request_for("evt-004", attempt=1))
    second = await model.complete(request_for("evt-004", attempt=2))
    later = await model.complete(request_for("evt-004", attempt=5))

    assert second.output == later.output == DECISION
    assert (second.model, second.model_version) == ("recorded", "recorded-classifier-1")


async def test_recorded_outputs_are_copies(tmp_path: Path) -> None:
    path = seed_fixture(tmp_path, [seed_case("c", "e", [{"type": "decision", "value": DECISION}])])
    model = RecordedModel(path)

    (await model.complete(request_for("e"))).output["category"] = "changed"

    assert (await model.complete(request_for("e"))).output == DECISION
    assert model.model_version == "recorded"


async def test_native_fixture_prefers_a_task_specific_answer(tmp_path: Path) -> None:
    path = tmp_path / "answers.json"
    path.write_text(
        json.dumps(
            {
                "model_version": "replay-3",
                "answers": {
                    "wf-1": [{"type": "decision", "value": {"category": "access"}}],
                    "recommend:wf-1": [{"type": "decision", "value": {"action_type": "refund"}}],
                },
            }
        )
    )
    model = RecordedModel(path)

    classified = await model.complete(request_for("wf-1", task="classify"))
    recommended = await model.complete(request_for("wf-1", task="recommend"))

    assert classified.output == {"category": "access"}
    assert recommended.output == {"action_type": "refund"}
    assert classified.model_version == "replay-3"


@pytest.mark.parametrize("case_key", ["evt-unknown", "evt-no-classifier", None])
async def test_case_without_a_recorded_answer_is_rejected(
    tmp_path: Path, case_key: str | None
) -> None:
    path = seed_fixture(
        tmp_path,
        [
            seed_case("a", "evt-1", [{"type": "decision", "value": DECISION}]),
            seed_case("b", "evt-no-classifier", None),
        ],
    )

    with pytest.raises(ExternalRejected) as raised:
        await RecordedModel(path).complete(request_for(case_key))

    assert raised.value.error_class == "no_recorded_answer"


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{not json", "is not valid JSON"),
        ("[]", 'either "cases" or "answers"'),
        ('{"dataset": "x"}', 'either "cases" or "answers"'),
        ('{"cases": [], "answers": {}}', 'either "cases" or "answers"'),
        ('{"cases": [{"id": "c", "event": {}}]}', "cases.0.event.event_id"),
        ('{"cases": [{"id": "c", "event": {"event_id": "e"}, "classifier": []}]}', "classifier"),
        ('{"answers": {"k": [{"type": "sleep"}]}}', "answers.k.0"),
        ('{"answers": {"k": [{"type": "decision"}]}}', "value"),
        ('{"answers": {"k": [{"type": "timeout", "after": 3}]}}', "after"),
    ],
)
def test_malformed_fixture_is_refused_naming_the_file_and_the_problem(
    tmp_path: Path, content: str, problem: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)

    with pytest.raises(RecordedFixtureError) as raised:
        RecordedModel(path)

    assert str(path) in str(raised.value)
    assert problem in str(raised.value)


def test_two_cases_recording_different_outcomes_for_one_event_are_refused(
    tmp_path: Path,
) -> None:
    path = seed_fixture(
        tmp_path,
        [
            seed_case("case-a", "evt-1", [{"type": "timeout"}]),
            seed_case("case-b", "evt-1", [{"type": "decision", "value": DECISION}]),
        ],
    )

    with pytest.raises(RecordedFixtureError, match="'case-a' and 'case-b'"):
        RecordedModel(path)


def test_missing_fixture_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RecordedFixtureError, match="cannot be read"):
        RecordedModel(tmp_path / "absent.json")

"""The model clients that need no network: `RulesModel`, `RecordedModel`, the prompts and
the `model_client` factory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, get_args

import pytest

from contracts.support_payloads import ActionType, Category
from services.models import (
    REQUEST_CLASSIFY_V1,
    SUPPORT_CLASSIFY_V1,
    SUPPORT_RECOMMEND_V1,
    TEMPLATES,
    OpenAIChatModel,
    RecordedFixtureError,
    RecordedModel,
    RulesModel,
    model_client,
)
from services.models.chat_wire import Message, output_of, provider_error
from services.models.prompts import render_messages
from services.ports import ExternalRejected, ExternalTimeout, ModelRequest

CATEGORIES = set(get_args(Category))
ACTIONS = set(get_args(ActionType))


def classify(subject: str, body: str = "", repair: list[str] | None = None) -> ModelRequest:
    return ModelRequest(
        task="classify",
        prompt_version=SUPPORT_CLASSIFY_V1,
        inputs={"subject": subject, "body": body},
        output_schema={},
        repair_errors=repair or [],
    )


def recommend(
    *,
    subject: str = "Refund please",
    amount: str | None = "40.00",
    currency: str | None = "EUR",
    allowed: tuple[str, ...] = ("refund", "account_credit"),
    feedback: str | None = None,
    repair: list[str] | None = None,
) -> ModelRequest:
    return ModelRequest(
        task="recommend",
        prompt_version=SUPPORT_RECOMMEND_V1,
        inputs={
            "request": {
                "customer_id": "cus-1",
                "subject": subject,
                "body": "I was charged twice.",
                "amount": amount,
                "currency": currency,
            },
            "classification": {"category": "billing", "confidence": 0.9},
            "policy": {
                "policy_id": "billing-refunds",
                "policy_version": 3,
                "max_amount": "100.00",
                "allowed_actions": list(allowed),
                "category": "billing",
            },
            "account": {"account_ref": "acct-7", "status": "active", "currency": "EUR"},
            "revision_feedback": {"feedback": feedback} if feedback is not None else None,
        },
        output_schema={},
        repair_errors=repair or [],
    )


async def answer(request: ModelRequest) -> dict[str, Any]:
    return (await RulesModel().complete(request)).output


# --- rules: classify --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("subject", "body", "category"),
    [
        ("Refund please", "I was charged twice for my subscription.", "billing"),
        ("Can't log in", "My password reset fails and my account is locked.", "access"),
        ("App crash", "The dashboard shows an error and is very slow.", "technical"),
        ("2FA", "I lost my phone and cannot get past 2fa.", "access"),
    ],
)
async def test_one_clear_category_is_chosen_with_high_confidence(
    subject: str, body: str, category: str
) -> None:
    output = await answer(classify(subject, body))

    assert output["category"] == category
    assert output["confidence"] >= 0.8
    assert category in output["rationale"]


async def test_ticket_without_any_keyword_gets_a_low_confidence_best_guess() -> None:
    output = await answer(classify("Hello", "Just wanted to say thanks."))

    assert output["category"] in CATEGORIES
    assert output["confidence"] == 0.35


async def test_mixed_ticket_has_a_confidence_that_reflects_the_margin() -> None:
    narrow = await answer(classify("Refund", "an error"))
    wide = await answer(classify("Refund for invoice payment", "an error"))

    assert (narrow["category"], narrow["confidence"]) == ("billing", 0.5)
    assert wide["category"] == "billing"
    assert 0.5 < wide["confidence"] < 0.8


async def test_keywords_match_whole_words_only() -> None:
    output = await answer(classify("Discharged", "Debugging the buggy widget"))

    assert output["confidence"] == 0.35


async def test_classification_is_deterministic() -> None:
    request = classify("Refund", "charged twice, and the app shows an error")

    outputs = [await answer(request) for _ in range(3)]

    assert outputs[0] == outputs[1] == outputs[2]


async def test_rules_reply_names_the_model_and_reports_no_tokens() -> None:
    reply = await RulesModel().complete(classify("Refund"))

    assert (reply.model, reply.model_version) == ("rules", "rules-1")
    assert (reply.prompt_tokens, reply.completion_tokens) == (0, 0)
    assert reply.latency_ms >= 0


async def test_invalid_output_hook_is_invalid_first_and_valid_on_repair() -> None:
    first = await answer(classify("[invalid-output] Refund please"))
    repaired = await answer(classify("[invalid-output] Refund please", repair=["category"]))

    assert first["category"] == "refund_now"
    assert repaired["category"] == "billing"


async def test_invalid_output_always_hook_stays_invalid_on_repair() -> None:
    repaired = await answer(classify("[invalid-output-always] Refund", repair=["category"]))

    assert repaired["category"] not in CATEGORIES


async def test_low_confidence_hook_forces_confidence_0_4() -> None:
    output = await answer(classify("[low-confidence] Refund", "charged twice, refund"))

    assert (output["category"], output["confidence"]) == ("billing", 0.4)


async def test_request_classification_is_not_supported_by_rules() -> None:
    request = ModelRequest(
        task="classify_request", prompt_version=REQUEST_CLASSIFY_V1, inputs={}, output_schema={}
    )

    with pytest.raises(ExternalRejected) as raised:
        await RulesModel().complete(request)

    assert raised.value.error_class == "unsupported_task"


async def test_malformed_inputs_are_rejected_naming_the_field_not_its_value() -> None:
    request = classify("Refund").model_copy(update={"inputs": {"subject": ["secret-value"]}})

    with pytest.raises(ExternalRejected) as raised:
        await RulesModel().complete(request)

    assert raised.value.error_class == "invalid_model_input"
    assert "subject" in str(raised.value)
    assert "body" in str(raised.value)
    assert "secret-value" not in str(raised.value)


# --- rules: recommend -------------------------------------------------------------------


async def test_refund_of_the_requested_amount_is_proposed_even_above_the_policy_maximum() -> None:
    output = await answer(recommend(amount="250.00"))

    assert output == {
        "action_type": "refund",
        "amount": "250.00",
        "currency": "EUR",
        "rationale": output["rationale"],
        "evidence_refs": ["policy:billing-refunds:v3", "account:acct-7"],
    }


async def test_credit_is_proposed_when_the_policy_does_not_allow_refunds() -> None:
    output = await answer(recommend(allowed=("account_credit",)))

    assert (output["action_type"], output["amount"]) == ("account_credit", "40.00")


async def test_reviewer_feedback_asking_for_a_credit_is_followed() -> None:
    output = await answer(recommend(feedback="Please offer a Credit instead of cash."))

    assert output["action_type"] == "account_credit"


async def test_no_requested_amount_means_no_action_in_the_account_currency() -> None:
    output = await answer(recommend(amount=None, currency=None))

    assert (output["action_type"], output["amount"], output["currency"]) == (
        "no_action",
        "0.00",
        "EUR",
    )


async def test_amount_is_a_two_place_decimal_string() -> None:
    output = await answer(recommend(amount="12.5"))

    assert output["amount"] == "12.50"
    assert output["action_type"] in ACTIONS


async def test_invalid_recommendation_hook_is_invalid_unless_repairing() -> None:
    first = await answer(recommend(subject="[invalid-recommendation] Refund"))
    repaired = await answer(recommend(subject="[invalid-recommendation] Refund", repair=["x"]))

    assert first["action_type"] == "wire_transfer"
    assert repaired["action_type"] == "refund"


# --- recorded -----------------------------------------------------------------------------

DECISION = {"category": "billing", "recommended_route": "finance", "reason_code": "billing"}


def seed_fixture(tmp_path: Path, cases: list[dict[str, Any]], **top: Any) -> Path:
    path = tmp_path / "fixture.json"
    document = {"dataset": "test", "max_classifier_attempts": 2, **top, "cases": cases}
    path.write_text(json.dumps(document))
    return path


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


# --- prompts and the wire format ----------------------------------------------------------


def test_every_template_serves_a_task_a_model_request_can_name() -> None:
    assert set(TEMPLATES) == {SUPPORT_CLASSIFY_V1, SUPPORT_RECOMMEND_V1, REQUEST_CLASSIFY_V1}
    for template in TEMPLATES.values():
        fields = {"task": template.task, "prompt_version": template.version}
        request = ModelRequest.model_validate(fields | {"inputs": {"k": 1}, "output_schema": {}})
        messages = render_messages(request)
        assert [m["role"] for m in messages] == ["system", "user"]
        assert '"k": 1' in messages[1]["content"]


def test_prompt_version_of_another_task_is_rejected() -> None:
    request = classify("x").model_copy(update={"prompt_version": SUPPORT_RECOMMEND_V1})

    with pytest.raises(ExternalRejected) as raised:
        render_messages(request)

    assert raised.value.error_class == "prompt_task_mismatch"


def test_repair_prompt_lists_the_previous_errors_and_first_prompt_does_not() -> None:
    first = render_messages(classify("Refund"))[1]["content"]
    repair = render_messages(classify("Refund", repair=["category: bad", "confidence: missing"]))

    assert "rejected by validation" not in first
    assert "- category: bad\n- confidence: missing" in repair[1]["content"]


def test_provider_error_keeps_only_safe_type_and_code_tokens() -> None:
    body = {"error": {"type": "invalid_request_error", "code": "has spaces", "message": "p"}}

    assert provider_error(json.dumps(body).encode()) == " (invalid_request_error)"
    assert provider_error(b"not json") == ""


def test_empty_content_is_unparseable() -> None:
    assert output_of(Message(content="")) == {"_unparseable": ""}


# --- the factory --------------------------------------------------------------------------


async def test_model_client_builds_each_kind(tmp_path: Path) -> None:
    path = seed_fixture(tmp_path, [])
    openai = model_client("openai", base_url="http://127.0.0.1:9/v1", model="m", api_key="k")

    assert isinstance(model_client("rules"), RulesModel)
    assert isinstance(model_client(f"recorded:{path}"), RecordedModel)
    assert isinstance(openai, OpenAIChatModel)
    await openai.aclose()


@pytest.mark.parametrize("spec", ["gpt-4", "recorded:", "rules:x", "openai:x", ""])
def test_unknown_model_client_names_the_accepted_forms(spec: str) -> None:
    with pytest.raises(ValueError, match=r"rules, recorded:<path>, openai"):
        model_client(spec)


@pytest.mark.parametrize(("base_url", "model"), [(None, None), (None, "m"), ("http://h/v1", None)])
def test_openai_without_endpoint_or_model_names_the_environment_variables(
    base_url: str | None, model: str | None
) -> None:
    with pytest.raises(ValueError, match="INTERLOCK_OPENAI_BASE_URL") as raised:
        model_client("openai", base_url=base_url, model=model)

    for env in ("INTERLOCK_OPENAI_BASE_URL", "INTERLOCK_OPENAI_MODEL", "INTERLOCK_OPENAI_API_KEY"):
        assert env in str(raised.value)


def test_openai_base_url_that_is_not_http_is_refused_without_repeating_it() -> None:
    with pytest.raises(ValueError, match="http") as raised:
        OpenAIChatModel(base_url="ftp://user:pw-secret@host/v1", model="m")

    assert "pw-secret" not in str(raised.value)

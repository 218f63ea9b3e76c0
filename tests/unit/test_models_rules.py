"""`RulesModel`, the deterministic model client that needs no network: how it classifies a
ticket (by whole-word keywords, with a confidence from the margin) and what it recommends
(within the policy's allowed actions, following reviewer feedback), and its test hooks."""

from __future__ import annotations

from typing import Any, get_args

import pytest

from interlock.errors import ExternalRejected
from interlock.services.ports import ModelRequest
from interlock.workflows.support.payloads import ActionType, Category
from tests.support.model_requests import (
    REQUEST_CLASSIFY_V1,
    SUPPORT_RECOMMEND_V1,
    classify,
    rules_model,
)

CATEGORIES = set(get_args(Category))
ACTIONS = set(get_args(ActionType))


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
    return (await rules_model().complete(request)).output


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
    reply = await rules_model().complete(classify("Refund"))

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
        await rules_model().complete(request)

    assert raised.value.error_class == "unsupported_task"


async def test_malformed_inputs_are_rejected_naming_the_field_not_its_value() -> None:
    request = classify("Refund").model_copy(update={"inputs": {"subject": ["secret-value"]}})

    with pytest.raises(ExternalRejected) as raised:
        await rules_model().complete(request)

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

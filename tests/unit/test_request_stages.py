"""The request workflow's stages and contracts, without I/O: the transport contract and its
normalisation, the routing policy, the stage handlers over in-memory ports, reconcile-first
effects, and the recorded classifier answering a resumed case."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from interlock import StageHandler
from interlock.app.wiring import TypedHandler
from interlock.contracts.ids import fingerprint, result_event_id
from interlock.contracts.jobs import JobPayload
from interlock.errors import ExternalTimeout, OutcomeUnknown
from interlock.services.models import RecordedModel
from interlock.services.ports import ModelReply, ModelRequest
from interlock.workflows.request.payloads import InboundRequest
from interlock.workflows.request.stages.classify import classify_request
from interlock.workflows.request.stages.execute import effect_key, execute_effect
from interlock.workflows.request.stages.intake import normalize_request, validate
from interlock.workflows.request.stages.route import bind_approval, route
from tests.support.fake_ports import Ledger
from tests.support.payloads import job_envelope
from tests.support.request_payloads import AUTHORIZATION, REQUEST, request_data

ENVELOPE = job_envelope(
    "request",
    correlation_id="evt-001",
    occurred_at=datetime(2026, 6, 1, tzinfo=UTC),
    expected_version=5,
)


def handler(stage: StageHandler[Any], **adapters: object) -> TypedHandler:
    """The stage as the runtime runs it: failures become their events."""
    return TypedHandler("request", stage, adapters)


def job(stage: str, inputs: dict[str, Any], attempt: int = 1) -> JobPayload:
    return JobPayload(
        job_id="job-1", stage=stage, state="x", attempt=attempt, definition_version=1, inputs=inputs
    )


# --- the transport contract -------------------------------------------------------------


def test_a_request_is_normalised_as_it_is_validated() -> None:
    messy = {**REQUEST, "source": "  Web_Form ", "subject": " Access\n  question ", "body": "a\tb"}
    clean = InboundRequest.model_validate(messy).model_dump()
    assert (clean["source"], clean["subject"], clean["body"]) == (
        "web_form",
        "Access question",
        "a b",
    )


def test_spacing_alone_does_not_change_the_fingerprint() -> None:
    spaced = {**REQUEST, "body": "Please  create a follow-up\nfor this synthetic request. "}
    canonical = [InboundRequest.model_validate(r).model_dump() for r in (REQUEST, spaced)]
    assert fingerprint(canonical[0]) == fingerprint(canonical[1])


@pytest.mark.parametrize(
    "broken",
    [
        {"source": "email"},
        {"account_tier": "gold"},
        {"request_type": "legal"},
        {"subject": "   "},
        {"body": 42},
        {"extra": "field"},
    ],
)
def test_a_request_outside_the_transport_contract_is_refused(broken: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        InboundRequest.model_validate({**REQUEST, **broken})


def test_a_request_missing_a_field_is_refused() -> None:
    with pytest.raises(ValidationError):
        InboundRequest.model_validate({k: v for k, v in REQUEST.items() if k != "account_tier"})


# --- intake and routing -----------------------------------------------------------------


async def test_an_action_outside_the_allowlist_is_unsupported_not_malformed() -> None:
    result = await handler(validate)(
        job("validate", {"request": {**REQUEST, "requested_action": "close_account"}}), ENVELOPE
    )
    assert result.event_type == "REQUEST_UNSUPPORTED"


async def test_normalize_records_the_canonical_fingerprint() -> None:
    result = await handler(normalize_request)(job("normalize", {"request": REQUEST}), ENVELOPE)
    assert result.payload == {
        "fingerprint": fingerprint(REQUEST),
        "normalization_version": "normalize-1",
    }


def _route_inputs(**decision: str) -> dict[str, Any]:
    data = request_data()
    data["classification"]["decision"].update(decision)
    return data


async def test_a_consistent_decision_is_authorised_and_names_its_own_result() -> None:
    result = await handler(route)(job("route", _route_inputs()), ENVELOPE)
    assert result.event_type == "EFFECT_AUTHORIZED"
    assert result.payload["basis"] == "route"
    assert result.payload["authorization_id"] == result_event_id("job-1")
    assert result.payload["versions"] == {"workflow": "workflow-1", "policy": "policy-1"}


async def test_a_decision_that_contradicts_the_request_is_blocked() -> None:
    inputs = _route_inputs(
        category="billing",
        recommended_route="finance",
        requested_effect="send_internal_notification",
    )
    result = await handler(route)(job("route", inputs), ENVELOPE)
    assert result.event_type == "ROUTE_BLOCKED"
    failed = {c["name"] for c in result.payload["checks"] if not c["passed"]}
    assert failed == {"category_matches_request", "route_matches_policy", "effect_matches_request"}


async def test_an_account_review_is_routed_for_approval() -> None:
    inputs = _route_inputs(requested_effect="queue_account_review")
    inputs["request"]["requested_action"] = "queue_account_review"
    result = await handler(route)(job("route", inputs), ENVELOPE)
    assert result.event_type == "ROUTED_FOR_APPROVAL"
    assert result.payload["effect"] == "queue_account_review"


async def test_a_recorded_decision_is_revalidated_before_routing() -> None:
    result = await handler(route)(
        job("route", _route_inputs(requested_effect="delete_record")), ENVELOPE
    )
    assert result.event_type == "CLASSIFICATION_INVALID"
    assert set(result.payload) == {"errors", "versions"}  # no call was made: none recorded


async def test_binding_an_approval_authorises_exactly_the_approved_operation() -> None:
    bound = await handler(bind_approval)(job("bind_approval", request_data()), ENVELOPE)
    assert (bound.event_type, bound.payload["basis"]) == ("EFFECT_AUTHORIZED", "approval")
    moved = request_data()
    moved["approval"]["effect"] = "send_internal_notification"
    refused = await handler(bind_approval)(job("bind_approval", moved), ENVELOPE)
    assert (refused.event_type, refused.payload) == (
        "PERMANENT_ERROR",
        {"error_class": "approval_not_bindable"},
    )


# --- the classifier ---------------------------------------------------------------------


class ScriptedModel:
    def __init__(self, *outputs: dict[str, Any] | Exception) -> None:
        self.outputs = list(outputs)
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> ModelReply:
        self.requests.append(request)
        out = self.outputs.pop(0)
        if isinstance(out, Exception):
            raise out
        return ModelReply(output=out, model="scripted", model_version="s-1", latency_ms=1.0)


async def test_a_classifier_timeout_is_retryable_and_an_invalid_answer_is_not() -> None:
    bad = {**request_data()["classification"]["decision"], "requested_effect": "delete_record"}
    model = ScriptedModel(ExternalTimeout("slow"), bad)
    inputs = {"request": REQUEST, "evidence": {"priority": False}}
    first = await handler(classify_request, model=model)(job("classify_request", inputs), ENVELOPE)
    second = await handler(classify_request, model=model)(
        job("classify_request", inputs, attempt=2), ENVELOPE
    )
    assert (first.event_type, second.event_type) == ("RETRYABLE_ERROR", "CLASSIFICATION_INVALID")
    assert [r.attempt for r in model.requests] == [1, 2]
    assert {r.case_key for r in model.requests} == {"evt-001"}


async def test_a_classification_records_the_classifier_and_prompt_versions() -> None:
    model = ScriptedModel(request_data()["classification"]["decision"])
    inputs = {"request": REQUEST, "evidence": {"priority": True}}
    result = await handler(classify_request, model=model)(job("classify_request", inputs), ENVELOPE)
    assert result.event_type == "REQUEST_CLASSIFIED"
    assert result.payload["versions"] == {"classifier": "s-1", "prompt": "request-classify-v1"}


async def test_the_recorded_model_answers_a_resumed_case_from_its_decision(tmp_path: Path) -> None:
    decision = request_data()["classification"]["decision"]
    path = tmp_path / "cases.json"
    case = {"id": "c9", "event": {"event_id": "evt-009"}, "resume_decision": decision}
    path.write_text(json.dumps({"cases": [case]}), encoding="utf-8")
    request = ModelRequest(
        task="classify_request", prompt_version="p", inputs={}, output_schema={}, case_key="evt-009"
    )
    assert (await RecordedModel(path).complete(request)).output == decision


# --- effects ----------------------------------------------------------------------------


def _execute_job() -> JobPayload:
    return job("execute_effect", {"authorization": AUTHORIZATION})


async def test_an_effect_is_recorded_once_under_its_run_key_with_its_authority() -> None:
    ledger = Ledger()
    first = await handler(execute_effect, effects=ledger)(_execute_job(), ENVELOPE)
    again = await handler(execute_effect, effects=ledger)(_execute_job(), ENVELOPE)
    key = effect_key(ENVELOPE.tenant_id, "wf-1", "create_follow_up")
    assert key == f"request-effect:{ENVELOPE.tenant_id}:wf-1:create_follow_up"
    assert (ledger.calls, list(ledger.rows)) == (1, [key])
    assert ledger.rows[key].authorized_by["authorization_id"] == "auth-1"
    assert (first.payload["reconciled"], again.payload["reconciled"]) == (False, True)


async def test_two_tenants_runs_of_one_id_have_effects_of_their_own() -> None:
    ledger = Ledger()
    theirs = ENVELOPE.model_copy(update={"tenant_id": "globex"})

    await handler(execute_effect, effects=ledger)(_execute_job(), ENVELOPE)
    other = await handler(execute_effect, effects=ledger)(_execute_job(), theirs)

    assert (ledger.calls, other.payload["reconciled"]) == (2, False)


async def test_a_lost_answer_is_reconciled_by_key_never_retried_with_a_new_one() -> None:
    result = await handler(execute_effect, effects=Ledger(lose_answer=True))(
        _execute_job(), ENVELOPE
    )
    assert (result.event_type, result.payload["reconciled"]) == ("EFFECT_EXECUTED", True)
    with pytest.raises(OutcomeUnknown):
        await handler(execute_effect, effects=Ledger(lose_answer=True, record=False))(
            _execute_job(), ENVELOPE
        )

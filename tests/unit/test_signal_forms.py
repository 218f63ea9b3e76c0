"""The console's signal forms, built from each type's own payload models: what the page shows
travels hidden (bound to what was displayed), other required fields and optional text fields
are inputs; a posted form gives only the model's fields, and a redacted value never reaches
the page."""

from __future__ import annotations

from typing import Any

import pytest

from interlock.config.plugins import installed
from interlock.config.settings import Settings
from interlock.console import actions
from interlock.console.actions import forms, offered
from interlock.console.operators import Operator
from interlock.console.signal_forms import FormField, form_fields, submitted
from interlock.contracts.registry import Registry
from interlock.definition import WorkflowDefinition
from interlock.ops.signal_payloads import payload_for, signal_model

pytestmark = pytest.mark.unit
REGISTRY: Registry = installed().registry
SUPPORT_VIEW: dict[str, Any] = {
    "workflow_type": "support",
    "definition_version": REGISTRY.latest("support").version,
    "state": "AWAITING_APPROVAL",
    "data": {"recommendation_version": 3, "recommendation": {"amount": "40.00"}},
}
INVOICE_VIEW: dict[str, Any] = {
    "workflow_type": "invoice",
    "definition_version": 1,
    "state": "AWAITING_APPROVAL",
    "data": {"invoice": {"total": "1799.28", "supplier": "Acme Paper GmbH"}},
}


def definition_of(view: dict[str, Any]) -> WorkflowDefinition:
    return REGISTRY.get(view["workflow_type"], view["definition_version"])


def test_the_invoice_approve_form_carries_the_total_the_page_showed() -> None:
    fields = form_fields(definition_of(INVOICE_VIEW), INVOICE_VIEW, "APPROVED")

    assert fields == [
        FormField("total", "Total", "1799.28", hidden=True, required=True),
        FormField("comment", "Comment"),
    ]


def test_the_support_approve_form_carries_the_version_and_amount_the_page_showed() -> None:
    fields = form_fields(definition_of(SUPPORT_VIEW), SUPPORT_VIEW, "APPROVED")

    hidden = {f.name: f.value for f in fields if f.hidden}
    assert hidden == {"recommendation_version": "3", "amount": "40.00"}
    assert [f.name for f in fields if not f.hidden] == ["comment"]


def test_feedback_is_a_required_input_and_a_reason_an_optional_one() -> None:
    definition = definition_of(SUPPORT_VIEW)
    changes = form_fields(definition, SUPPORT_VIEW, "CHANGES_REQUESTED")
    rejection = form_fields(definition, SUPPORT_VIEW, "REJECTED_BY_REVIEWER")

    assert [(f.name, f.hidden, f.required) for f in changes] == [
        ("recommendation_version", True, True),
        ("feedback", False, True),
    ]
    assert [(f.name, f.hidden, f.required) for f in rejection] == [("reason", False, False)]


def test_a_posted_form_gives_the_models_fields_and_binds_to_what_was_shown() -> None:
    definition = definition_of(SUPPORT_VIEW)
    posted = {"p.recommendation_version": "2", "p.amount": "40.00", "p.comment": "", "p.x": "1"}
    given = submitted(signal_model(definition, "APPROVED"), posted)
    moved_on = {**SUPPORT_VIEW, "data": {**SUPPORT_VIEW["data"], "recommendation_version": 4}}

    assert given == {"recommendation_version": "2", "amount": "40.00"}
    # the version the page showed, not the one the workflow has now: the projector decides
    assert payload_for(definition, moved_on, "APPROVED", given=given) == {
        "recommendation_version": 2,
        "amount": "40.00",
    }


def test_only_events_a_type_declares_are_offered_and_a_redacted_value_stays_off_the_page() -> None:
    names = [a.name for a in offered(REGISTRY, INVOICE_VIEW)]
    approve = forms(REGISTRY, INVOICE_VIEW, offered(REGISTRY, INVOICE_VIEW), frozenset({"total"}))

    assert names == ["approve", "reject", "cancel"]  # invoice declares no CHANGES_REQUESTED
    assert [f.name for f in approve[0].fields] == ["comment"]


def test_the_request_types_approval_binds_the_versions_and_effect_its_task_announced() -> None:
    view = {
        "workflow_type": "request",
        "definition_version": 1,
        "state": "approval_required",
        "data": {
            "versions": {"workflow": "wf-3", "policy": "pol-7"},
            "route": {"effect": "refund", "route": "finance"},
        },
    }
    definition = definition_of(view)

    assert payload_for(definition, view, "APPROVED") == {
        "workflow_version": "wf-3",
        "policy_version": "pol-7",
        "effect": "refund",
    }
    assert [f.name for f in form_fields(definition, view, "APPROVED") if f.hidden] == [
        "workflow_version",
        "policy_version",
        "effect",
    ]


def test_a_structured_value_travels_as_json_and_is_read_back() -> None:
    definition = definition_of(SUPPORT_VIEW)
    model = signal_model(definition, "APPROVED")

    assert submitted(model, {"p.comment": '{"a": 1}', "p.amount": "3.00"}) == {
        "comment": {"a": 1},
        "amount": "3.00",
    }


async def test_the_console_watches_for_its_signals_dead_letter_as_itself(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The console may read the dead letters: a signal the projector dead-letters is reported
    with its reason, not as a decision that never came."""
    sent: dict[str, Any] = {}

    async def send_and_wait(*args: Any, **options: Any) -> dict[str, Any]:
        sent.update(options, payload=options["payload"](INVOICE_VIEW))
        return {"accepted": False, "reason": "dead_lettered", "detail": "schema_mismatch: …"}

    monkeypatch.setattr(actions, "send_and_wait", send_and_wait)
    monkeypatch.setattr(actions, "as_operator", lambda settings, url: f"operator@{url}")
    operator = Operator("dev", frozenset({"approver"}), ("invoice_approver",))
    view = {**INVOICE_VIEW, "workflow_id": "inv-1", "tenant_id": "acme"}
    form = {"action": "approve", "p.total": "1799.28", "csrf_token": "t"}

    decision = await actions.perform(
        Settings(),
        ("nats://console@broker", "postgresql://db"),
        view,
        operator,
        actions.BY_NAME["approve"],
        registry=REGISTRY,
        form=form,
    )

    assert decision["reason"] == "dead_lettered"
    assert sent["letters_url"] == "nats://console@broker"
    assert sent["payload"] == {"total": "1799.28"}


def test_an_unknown_refund_in_review_offers_confirm_rerun_and_compensate() -> None:
    view = {
        **SUPPORT_VIEW,
        "state": "MANUAL_REVIEW",
        "execution": {"effects": {"EXECUTING_ACTION": {"status": "unknown"}}},
    }

    names = [a.name for a in offered(REGISTRY, view)]
    (confirm,) = [
        f for f in forms(REGISTRY, view, offered(REGISTRY, view)) if f.name == "confirm_effect"
    ]

    assert {"confirm_effect", "rerun_effect", "compensate"} <= set(names)
    inputs = {f.name for f in confirm.fields if not f.hidden and f.required}
    assert {"idempotency_key", "provider_operation_id", "currency"} <= inputs
    assert "amount" in {f.name for f in confirm.fields}  # bound to the amount the page shows

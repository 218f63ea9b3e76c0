"""A console form is bound to what its page showed: a posted approval that does not carry the
recommendation version (or amount, or total) the page showed is refused by the console with a
clear message and never sent, so it cannot approve whatever the workflow shows by then; one
that carries them is sent with the shown values, and the projector refuses it if the
recommendation has changed since."""

from __future__ import annotations

from typing import Any

import pytest

from interlock.config.plugins import installed
from interlock.config.settings import Settings
from interlock.console import actions
from interlock.console.operators import Operator
from interlock.contracts.registry import Registry

pytestmark = pytest.mark.unit
REGISTRY: Registry = installed().registry
NOW_V2 = {
    "workflow_type": "support",
    "definition_version": REGISTRY.latest("support").version,
    "workflow_id": "ticket-1",
    "tenant_id": "acme",
    "state": "AWAITING_APPROVAL",
    "data": {"recommendation_version": 2, "recommendation": {"amount": "75.00"}},
}
APPROVER = Operator("alice", frozenset({"approver"}), ("support_approver",))


async def _post(
    monkeypatch: pytest.MonkeyPatch, form: dict[str, str], settings: Settings | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    sent: list[dict[str, Any]] = []

    async def send_and_wait(*args: Any, **options: Any) -> dict[str, Any]:
        sent.append(options["payload"](NOW_V2))
        return {"accepted": False, "reason": "guard_rejected", "detail": "version_current"}

    monkeypatch.setattr(actions, "send_and_wait", send_and_wait)
    monkeypatch.setattr(actions, "as_operator", lambda settings, url: url)
    decision = await actions.perform(
        settings or Settings(),
        ("nats://console@broker", "postgresql://db"),
        NOW_V2,
        APPROVER,
        actions.BY_NAME["approve"],
        registry=REGISTRY,
        form={"action": "approve", "csrf_token": "t", **form},
    )
    return decision, sent


async def test_an_approval_without_the_version_the_page_showed_is_refused_and_not_sent(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    decision, sent = await _post(monkeypatch, {"p.comment": "ok"})

    assert sent == []
    (line,) = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert "alice" in line
    assert "acme/ticket-1" in line
    assert decision["accepted"] is False
    assert decision["reason"] == "unbound_form"
    assert "recommendation_version" in decision["detail"]
    assert "reload" in decision["detail"]


async def test_an_approval_of_what_the_page_showed_is_sent_with_those_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    form = {"p.recommendation_version": "1", "p.amount": "40.00"}

    decision, sent = await _post(monkeypatch, form)

    assert sent == [{"recommendation_version": 1, "amount": "40.00"}]
    assert decision["reason"] == "guard_rejected"  # the projector's refusal, shown as such


async def test_a_value_the_page_redacts_is_not_expected_from_the_form(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = Settings(console_redact=frozenset({"amount"}))

    _, sent = await _post(monkeypatch, {"p.recommendation_version": "1"}, settings)

    assert sent == [{"recommendation_version": 1, "amount": "75.00"}]

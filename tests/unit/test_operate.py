"""The signal commands made by one factory: each offers its own options with the same names,
defaults and help as before, sends its event with the payload its options make, and exits
with the projector's verdict."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from interlock.cli import app, operate
from interlock.config import access
from interlock.contracts.envelope import Actor
from interlock.ops.errors import InvalidSignal, NotAccepted

VIEW = {
    "workflow_type": "support",
    "definition_version": 1,
    "state": "AWAITING_APPROVAL",
    "data": {"recommendation_version": 4, "recommendation": {"amount": "20.00"}},
}
INVOICE = {
    "workflow_type": "invoice",
    "definition_version": 1,
    "state": "AWAITING_APPROVAL",
    "data": {"invoice": {"total": "1428.00", "supplier": "Acme Paper GmbH"}},
}


class Sent:
    """What the command asked `send_and_wait` to send, and the decision it is answered with."""

    def __init__(self, decision: dict[str, Any], view: dict[str, Any] = VIEW) -> None:
        self.decision = decision
        self.view = view
        self.calls: list[dict[str, Any]] = []

    async def __call__(
        self,
        *urls_id_event: str,
        payload: Callable[[dict[str, Any]], dict[str, Any]],
        actor: Actor | Callable[[dict[str, Any]], Actor],
        tenant_id: str | None,
        admin_url: str | None = None,
    ) -> dict[str, Any]:
        nats_url, _, workflow_id, event_type = urls_id_event
        try:  # as `send_and_wait` does: nothing is sent when the payload is refused
            made, signer = payload(self.view), actor(self.view) if callable(actor) else actor
        except NotAccepted as exc:
            return {"accepted": False, "reason": exc.reason, "detail": str(exc)}
        except InvalidSignal as exc:
            return {"accepted": False, "reason": "invalid_signal", "detail": str(exc)}
        self.calls.append(
            {
                "as": nats_url,
                "workflow_id": workflow_id,
                "event": event_type,
                "payload": made,
                "actor": signer,
                "tenant": tenant_id,
                "watched_as": admin_url,
            }
        )
        return self.decision


def _run(
    monkeypatch: pytest.MonkeyPatch,
    decision: dict[str, Any],
    *argv: str,
    view: dict[str, Any] = VIEW,
) -> tuple[Sent, Result]:
    sent = Sent(decision, view)

    def with_stack(work: Callable[[Any, str, str], Coroutine[Any, Any, Any]]) -> Any:
        return asyncio.run(work(None, "nats://n", "postgresql://d"))

    monkeypatch.setattr(operate, "send_and_wait", sent)
    monkeypatch.setattr(operate, "with_stack", with_stack)
    monkeypatch.setattr(access, "as_client", lambda s, url, client: f"{client}@{url}")
    return sent, CliRunner().invoke(app, list(argv))


def _invoke(
    monkeypatch: pytest.MonkeyPatch, decision: dict[str, Any], *argv: str
) -> tuple[Sent, int]:
    sent, result = _run(monkeypatch, decision, *argv)
    return sent, result.exit_code


ACCEPTED = {"accepted": True, "from_state": "A", "to_state": "B"}


APPROVER = Actor(id="cli-approver", role="support_approver")
OPERATOR = Actor(id="cli-operator", role="operator")


@pytest.mark.parametrize(
    ("command", "event", "payload", "actor"),
    [
        ("approve wf", "APPROVED", {"recommendation_version": 4, "amount": "20.00"}, APPROVER),
        (
            "approve wf --version 3 --amount 5.00 --as ann --role boss",
            "APPROVED",
            {"recommendation_version": 3, "amount": "5.00"},
            Actor(id="ann", role="boss"),
        ),
        ("reject wf --reason no", "REJECTED_BY_REVIEWER", {"reason": "no"}, APPROVER),
        ("cancel wf", "CANCEL_REQUESTED", {"reason": ""}, OPERATOR),
        ("retry wf --as ops", "RETRY_REQUESTED", {}, Actor(id="ops", role="operator")),
    ],
)
def test_a_signal_command_sends_its_event_with_the_payload_of_its_options(
    monkeypatch: pytest.MonkeyPatch,
    command: str,
    event: str,
    payload: dict[str, Any],
    actor: Actor,
) -> None:
    sent, code = _invoke(monkeypatch, ACCEPTED, *command.split())
    assert code == 0
    sends_as = "operator@nats://n"  # the CLI's own client, never the administrator
    assert sent.calls == [
        {
            "as": sends_as,
            "workflow_id": "wf",
            "event": event,
            "payload": payload,
            "actor": actor,
            "tenant": None,
            "watched_as": "nats://n",  # the administrator watches for its dead letter
        }
    ]


def test_a_signal_command_names_the_tenant_when_asked_to(monkeypatch: pytest.MonkeyPatch) -> None:
    sent, code = _invoke(monkeypatch, ACCEPTED, "cancel", "wf", "--tenant", "globex")

    assert code == 0
    assert [call["tenant"] for call in sent.calls] == ["globex"]


@pytest.mark.parametrize(
    ("reason", "code"), [("guard_failed", 3), ("no_decision", 1), ("ambiguous_workflow", 2)]
)
def test_a_refusal_exits_3_no_decision_1_and_an_ambiguous_id_2(
    monkeypatch: pytest.MonkeyPatch, reason: str, code: int
) -> None:
    refused = {"accepted": False, "reason": reason, "detail": "d"}
    assert _invoke(monkeypatch, refused, "cancel", "wf", "--json")[1] == code


def test_options_another_command_owns_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    sent, code = _invoke(monkeypatch, ACCEPTED, "retry", "wf", "--reason", "x")
    assert code == 2
    assert sent.calls == []


@pytest.mark.parametrize(
    "options", ["--amount abc", "--amount -5", "--amount 0", "--amount NaN", "--version 0"]
)
def test_approval_options_are_checked_before_anything_is_sent(
    monkeypatch: pytest.MonkeyPatch, options: str
) -> None:
    sent, result = _run(monkeypatch, ACCEPTED, "approve", "wf", *options.split())
    assert result.exit_code == 2
    assert options.split(maxsplit=1)[0].removeprefix("--") in result.output
    assert sent.calls == []


def test_a_guard_refusal_names_the_failed_guards(monkeypatch: pytest.MonkeyPatch) -> None:
    refused = {
        "accepted": False,
        "reason": "guard_rejected",
        "detail": "APPROVED refused in AWAITING_APPROVAL",
        "guard_results": ["role_allowed", "!version_current", "!within_limit"],
        "failed_guards": ["version_current", "within_limit"],
    }
    _, result = _run(monkeypatch, refused, "approve", "wf", "--version", "7")
    assert result.exit_code == 3
    assert "failed guards: version_current, within_limit" in result.output


@pytest.mark.parametrize(("reason", "code"), [("dead_lettered", 3), ("queued", 1)])
def test_a_dead_lettered_or_queued_signal_says_so(
    monkeypatch: pytest.MonkeyPatch, reason: str, code: int
) -> None:
    _, result = _run(
        monkeypatch, {"accepted": False, "reason": reason, "detail": "d"}, "retry", "wf"
    )
    assert result.exit_code == code
    assert reason.replace("_", " ") in result.output


@pytest.mark.parametrize(
    ("command", "event", "payload", "actor"),
    [
        (
            "approve inv",
            "APPROVED",
            {"total": "1428.00"},
            Actor(id="cli-approver", role="invoice_approver"),
        ),
        (
            "approve inv --field comment=fine --as kim --role finance_controller",
            "APPROVED",
            {"total": "1428.00", "comment": "fine"},
            Actor(id="kim", role="finance_controller"),
        ),
        (
            "reject inv --reason dup",
            "REJECTED_BY_REVIEWER",
            {"reason": "dup"},
            Actor(id="cli-approver", role="invoice_approver"),
        ),
        ("retry inv", "RETRY_REQUESTED", {}, OPERATOR),
        (
            'signal inv RETRY_REQUESTED --payload {"comment":"again"} --actor ops',
            "RETRY_REQUESTED",
            {"comment": "again"},
            Actor(id="ops", role="operator"),
        ),
    ],
)
def test_a_plugin_workflow_is_signalled_with_its_own_payload_and_roles(
    monkeypatch: pytest.MonkeyPatch,
    command: str,
    event: str,
    payload: dict[str, Any],
    actor: Actor,
) -> None:
    sent, result = _run(monkeypatch, ACCEPTED, *command.split(), view=INVOICE)

    assert result.exit_code == 0, result.output
    assert [(c["event"], c["payload"], c["actor"]) for c in sent.calls] == [(event, payload, actor)]


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        ("signal inv APPROVED --field amount=5", "amount: Extra inputs are not permitted"),
        ("signal inv APPROVED --field total=abc", "total: Input should be a valid decimal"),
        ("approve inv --version 2", "recommendation_version: Extra inputs are not permitted"),
        ("signal inv NO_SUCH_EVENT", "invoice v1 declares no signal NO_SUCH_EVENT"),
        ("signal inv APPROVED --field total", "expected KEY=VALUE"),
        ("signal inv APPROVED --payload [1]", "--payload must be a JSON object"),
        ("signal inv APPROVED --payload {", "--payload is not JSON"),
    ],
)
def test_a_signal_its_model_refuses_is_one_line_exit_2_and_never_sent(
    monkeypatch: pytest.MonkeyPatch, argv: str, named: str
) -> None:
    sent, result = _run(monkeypatch, ACCEPTED, *argv.split(), view=INVOICE)

    assert result.exit_code == 2
    assert named in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert sent.calls == []


def test_a_late_approval_with_nothing_to_bind_to_is_refused_for_the_state_exit_3(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Cancelled before it showed a recommendation: no version or amount is invented; the
    approval is refused as the projector would refuse it (terminal), and never sent."""
    cancelled = {**VIEW, "state": "CANCELLED", "data": {}}
    sent, result = _run(monkeypatch, ACCEPTED, "approve", "wf", "--json", view=cancelled)

    assert result.exit_code == 3
    assert '"reason": "terminal"' in result.output
    assert sent.calls == []


def test_a_required_field_the_workflow_does_not_show_is_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    waiting = {**INVOICE, "data": {}}
    sent, result = _run(monkeypatch, ACCEPTED, "approve", "inv", view=waiting)

    assert result.exit_code == 2
    assert "APPROVED payload: total: Field required" in result.output
    assert sent.calls == []

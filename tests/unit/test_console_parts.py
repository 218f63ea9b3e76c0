"""The console's pure parts: the diagram's layout, redaction, model calls and the trace
waterfall, operators and the roles their signals carry, the actions a state offers and
the console's own secrets (the login limit: `test_login_limiter`)."""

from __future__ import annotations

import itertools
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from pydantic import SecretStr

from interlock.config.settings import ConsoleOperator, Settings
from interlock.console import banner
from interlock.console.actions import offered, signer
from interlock.console.devsecrets import ConsoleSecrets
from interlock.console.drawing import NODE_HEIGHT, layout, taken_edges
from interlock.console.operators import (
    Operator,
    Operators,
    actor_role,
    approval_limit,
    hash_password,
    parameters,
    signing_roles,
)
from interlock.console.pages.operations import bars, every_minute
from interlock.console.presenting import REDACTED, model_calls, redact, waterfall
from interlock.contracts.diagram import diagram
from interlock.workflows.support.definition import SUPPORT_V2
from tests.support.workflows import REGISTRY

pytestmark = pytest.mark.unit
APPROVER = Operator("alice", frozenset({"viewer", "approver"}), ("support_approver",))
SUPERVISOR = Operator("olga", frozenset({"operator"}), ("support_supervisor", "operator"))
VIEWER = Operator("victor", frozenset({"viewer"}), ())


def test_the_layout_draws_every_state_once_initial_on_top_and_terminals_last() -> None:
    d = diagram(SUPPORT_V2)
    drawing = layout(d, set(), "AWAITING_APPROVAL")
    boxes = {b.node.name: b for b in drawing.boxes}
    assert sorted(boxes) == sorted(SUPPORT_V2.states)
    assert boxes["REQUEST_RECEIVED"].y == min(b.y for b in drawing.boxes)
    bottom = max(b.y for b in drawing.boxes)
    assert {n for n, b in boxes.items() if b.y == bottom} == set(SUPPORT_V2.terminal_states)
    assert len(drawing.lines) == len(d.edges)
    assert all(b.x >= 0 and b.x + b.width <= drawing.width for b in drawing.boxes)
    assert all(b.y + NODE_HEIGHT <= drawing.height for b in drawing.boxes)
    for layer in {b.y for b in drawing.boxes}:
        row = sorted((b for b in drawing.boxes if b.y == layer), key=lambda b: b.x)
        assert all(a.x + a.width < b.x for a, b in itertools.pairwise(row))


def test_the_path_taken_is_the_accepted_transitions_of_the_audit() -> None:
    audit = [
        {"accepted": True, "from_state": "REQUEST_RECEIVED", "to_state": "CLASSIFYING"},
        {"accepted": False, "from_state": "CLASSIFYING", "to_state": None},
        {"accepted": True, "from_state": "CLASSIFYING", "to_state": "GATHERING_EVIDENCE"},
    ]
    taken = taken_edges(audit)
    assert taken == {("REQUEST_RECEIVED", "CLASSIFYING"), ("CLASSIFYING", "GATHERING_EVIDENCE")}
    lines = layout(diagram(SUPPORT_V2), taken, "GATHERING_EVIDENCE").lines
    assert {(ln.edge.source, ln.edge.target) for ln in lines if ln.taken} == taken
    assert lines[-1].taken  # drawn last, on top


def test_personal_values_and_secrets_are_redacted_at_any_depth() -> None:
    data = {
        "request": {"body": "my card 4242", "subject": "refund", "customer_id": "c-1"},
        "call": {"api_key": "sk-1", "tokens": {"prompt": 3}},
        "items": [{"email": "a@b.c", "amount": "2.00"}],
    }
    shown = redact(data, frozenset({"body", "subject", "email"}))
    assert shown["request"] == {"body": REDACTED, "subject": REDACTED, "customer_id": "c-1"}
    assert shown["call"] == {"api_key": REDACTED, "tokens": {"prompt": 3}}
    assert shown["items"] == [{"email": REDACTED, "amount": "2.00"}]


def test_model_calls_are_read_from_each_steps_recorded_call() -> None:
    call = {
        "model": "rules",
        "prompt_version": "p-1",
        "validation": "failed",
        "errors": ["bad"],
        "latency_ms": 2.5,
        "tokens": {"prompt": 1, "completion": 2},
        "output": {"body": "x", "category": "billing"},
    }
    data = {"classification": {"call": call}, "request": {}}
    calls = model_calls({}, data, frozenset({"body"}))
    assert calls == [
        {
            "seq": 1,
            "task": "classification",
            "attempt": 1,
            "model": "rules",
            "model_version": None,
            "prompt_version": "p-1",
            "verdict": "invalid",
            "errors": ["bad"],
            "latency_ms": 2.5,
            "tokens": {"input": 1, "output": 2},
            "cost": 0.0,
            "accepted": False,
            "output": {"body": REDACTED, "category": "billing"},
        }
    ]


def test_model_calls_list_every_attempt_the_engine_recorded_in_order() -> None:
    def record(seq: int, verdict: str) -> dict[str, object]:
        return {
            "seq": seq,
            "task": "classify",
            "attempt": seq,
            "state": "CLASSIFYING",
            "event_id": f"e{seq}",
            "event_type": "X",
            "prompt_version": "p-1",
            "model": "m",
            "output": {"body": "x"},
            "verdict": verdict,
            "tokens": {"input": 3, "output": 4},
            "cost": "0.5",
            "at": "2026-12-02T05:00:00+00:00",
        }

    execution = {"model_calls": [record(1, "invalid"), record(2, "repaired")]}
    data = {"classification": {"call": {"model": "m"}}, "model_calls_accepted": {"c": 2}}
    calls = model_calls(execution, data, frozenset({"body"}))
    assert [(c["seq"], c["verdict"], c["accepted"], c["cost"]) for c in calls] == [
        (1, "invalid", False, 0.5),
        (2, "repaired", True, 0.5),
    ]
    assert calls[0]["output"] == {"body": REDACTED}


def test_the_waterfall_puts_children_under_parents_scaled_to_the_trace() -> None:
    def span(span_id: str, parent: str | None, start: int, end: int) -> dict[str, object]:
        attributes = {"interlock.rejection_reason": "terminal"} if span_id == "c" else {}
        return {
            "span_id": span_id,
            "parent_span_id": parent,
            "name": span_id,
            "service": "s",
            "start": start,
            "end": end,
            "attributes": attributes,
        }

    rows = waterfall([span("c", "a", 500, 1000), span("a", None, 0, 1000), span("b", "a", 0, 500)])
    assert [(r["name"], r["depth"]) for r in rows] == [("a", 0), ("c", 1), ("b", 1)]
    assert rows[1]["offset"] == 50.0
    assert rows[1]["width"] == 50.0
    assert rows[1]["refused"] == "terminal"
    assert waterfall([]) == []


def test_an_operator_signs_with_the_first_of_their_roles_the_workflow_lets_act() -> None:
    params = parameters(Settings(), REGISTRY, "support", 2)
    assert actor_role(APPROVER, params, approving=True) == "support_approver"
    assert actor_role(SUPERVISOR, params, approving=True) == "support_supervisor"
    assert actor_role(SUPERVISOR, params, approving=False) == "support_supervisor"
    assert actor_role(VIEWER, params, approving=True) == "console"
    assert approval_limit(params, "support_approver") == "500.00"
    assert approval_limit(params, "operator") is None


def test_approver_limits_come_from_the_deployments_parameters() -> None:
    settings = Settings(parameters={"support": {"approver_limits": {"support_approver": "50"}}})
    assert approval_limit(parameters(settings, REGISTRY, "support", 2), "support_approver") == "50"
    view = {"workflow_type": "support", "definition_version": 2}
    actions = {a.name: a for a in offered(REGISTRY, {**view, "state": "AWAITING_APPROVAL"})}
    assert signer(settings, REGISTRY, view, APPROVER, actions["approve"]).model_dump() == {
        "id": "alice",
        "role": "support_approver",
    }


def test_the_development_operator_may_sign_for_every_installed_role() -> None:
    roles = signing_roles(Settings(), REGISTRY)
    assert {"support_supervisor", "support_approver", "operator", "request_approver"} <= set(roles)
    assert roles.index("support_supervisor") < roles.index("support_approver")


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        ("AWAITING_APPROVAL", ["approve", "reject", "request_changes", "cancel"]),
        ("MANUAL_REVIEW", ["reject", "retry", "resolve", "cancel", "compensate"]),
        ("EXECUTING_ACTION", ["cancel"]),
        ("COMPLETED", []),
    ],
)
def test_a_state_offers_the_actions_its_table_has_rows_for(state: str, expected: list[str]) -> None:
    view = {"workflow_type": "support", "definition_version": 2, "state": state}
    assert [a.name for a in offered(REGISTRY, view)] == expected


def test_roles_narrow_the_offered_actions() -> None:
    view = {"workflow_type": "support", "definition_version": 2, "state": "MANUAL_REVIEW"}
    assert [a.name for a in offered(REGISTRY, view, APPROVER)] == ["reject"]
    assert [a.name for a in offered(REGISTRY, view, VIEWER)] == []


def test_passwords_are_checked_against_their_argon2_hash() -> None:
    entry = ConsoleOperator(password_hash=SecretStr(hash_password("s3cret")))
    operators = Operators({"alice": entry})
    assert entry.password_hash.get_secret_value().startswith("$argon2id$")
    operator = operators.authenticate("alice", "s3cret")
    assert operator is not None
    assert operator.roles == frozenset({"viewer"})
    assert operators.authenticate("alice", "S3cret") is None
    assert operators.authenticate("mallory", "s3cret") is None


def test_the_consoles_secrets_are_private_and_stable(tmp_path: Path) -> None:
    secrets = ConsoleSecrets(tmp_path)
    password, key = secrets.dev_password(), secrets.session_key()
    again = ConsoleSecrets(tmp_path)
    assert (again.dev_password(), again.session_key()) == (password, key)
    assert password != key
    assert stat.S_IMODE(secrets.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(secrets.directory.stat().st_mode) == 0o700


def test_up_prints_the_development_password_only_for_the_embedded_stack(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, secrets_dir=tmp_path / "secrets")
    shown = banner(settings, embedded=True)
    assert ConsoleSecrets(tmp_path).dev_password() in shown
    assert shown.startswith("console http://127.0.0.1:8090")
    assert "no operators configured" in banner(settings, embedded=False)
    entry = ConsoleOperator(password_hash=SecretStr("$argon2id$x"))
    configured = settings.model_copy(update={"console_operators": {"a": entry}})
    assert banner(configured, embedded=True) == "console http://127.0.0.1:8090"


def test_the_activity_chart_has_a_column_for_every_minute_of_its_window() -> None:
    now = datetime.now(UTC).replace(second=0, microsecond=0)
    busy = {"minute": now - timedelta(minutes=2), "accepted": 4, "refused": 1}
    points = every_minute([busy], 5)
    assert [p["minute"] for p in points] == [now - timedelta(minutes=m) for m in (4, 3, 2, 1, 0)]
    assert [(p["accepted"], p["refused"]) for p in points] == [
        (0, 0),
        (0, 0),
        (4, 1),
        (0, 0),
        (0, 0),
    ]
    chart = bars(points, ("accepted", "refused"))
    assert chart["peak"] == 5
    assert chart["points"][2]["accepted_pct"] == 80.0

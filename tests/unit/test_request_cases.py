"""The case-file runner's pure parts: loading the case-file format with clear errors, and
deriving outcomes and counters from recorded facts (never from `expected`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from interlock.tools.demo.casefile import SHIPPED, environment, load
from interlock.tools.demo.verdicts import COUNTERS, authorised, door_outcome, run_outcome, summary
from interlock.tools.errors import FixtureError

SEED = json.loads(SHIPPED.read_text(encoding="utf-8"))


def write(tmp_path: Path, document: Any) -> Path:
    path = tmp_path / "cases.json"
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return path


def test_the_shipped_file_holds_the_eleven_request_cases() -> None:
    fixture = load(SHIPPED)
    assert [c.id for c in fixture.cases] == [f"case-{n:02d}" for n in range(1, 12)]
    assert fixture.max_classifier_attempts == 2


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ("{not json", "is not valid JSON"),
        ({"cases": []}, "cases: List should have at least 1 item"),
        (
            {"cases": [{**SEED["cases"][0], "scenario": "teleport"}]},
            "case 'case-01': cases.0.scenario",
        ),
        ({"cases": [SEED["cases"][0], SEED["cases"][0]]}, "case id 'case-01' appears twice"),
        ({"cases": [{**SEED["cases"][0], "aproval": {}}]}, "cases.0.aproval"),
        ({"cases": [{**SEED["cases"][0], "event": {}}]}, "cannot serve as the recorded classifier"),
    ],
)
def test_a_malformed_case_file_is_refused_naming_the_file_and_the_problem(
    tmp_path: Path, document: Any, problem: str
) -> None:
    path = write(tmp_path, document)
    with pytest.raises(FixtureError) as raised:
        load(path)
    assert str(path) in str(raised.value)
    assert problem in str(raised.value)


def test_a_malformed_event_is_for_the_stack_to_judge_not_the_loader(tmp_path: Path) -> None:
    case = {**SEED["cases"][9], "event": {**SEED["cases"][9]["event"], "source": "email"}}
    assert load(write(tmp_path, {"cases": [case]})).cases[0].event["source"] == "email"


def test_the_files_attempt_limit_wins_over_the_deployments_and_timings_do_not() -> None:
    fixture = load(SHIPPED).model_copy(update={"max_classifier_attempts": 3})
    env = {
        "INTERLOCK_PARAMETERS": json.dumps(
            {"request": {"max_classifier_attempts": 9, "retry_delay_scale": 1.0}}
        )
    }
    found = environment(SHIPPED, fixture, env)
    request = json.loads(found["INTERLOCK_PARAMETERS"])["request"]
    assert (request["max_classifier_attempts"], request["retry_delay_scale"]) == (3, 1.0)
    assert json.loads(found["INTERLOCK_MODELS"]) == {"request": f"recorded:{SHIPPED.resolve()}"}


# --- verdicts ---------------------------------------------------------------------------


def row(event_type: str, from_state: str, to_state: str | None, **kw: Any) -> dict[str, Any]:
    return {"event_type": event_type, "from_state": from_state, "to_state": to_state,
            "accepted": to_state is not None, "detail": None, "event_id": "e", **kw}  # fmt: skip


def view(workflow_id: str, state: str, *trail: dict[str, Any]) -> dict[str, Any]:
    return {"workflow_id": workflow_id, "state": state, "audit": list(trail)}


def test_door_verdicts_come_from_dead_letters_and_audit_reasons() -> None:
    assert door_outcome("schema_mismatch", None) == "invalid_event"
    assert (
        door_outcome(None, {"accepted": False, "reason": "idempotent_replay"})
        == "idempotent_replay"
    )
    assert (
        door_outcome(None, {"accepted": False, "reason": "idempotency_conflict"})
        == "idempotency_conflict"
    )
    assert door_outcome(None, {"accepted": True, "reason": None}) is None


def test_a_failed_run_is_named_by_the_reason_of_its_last_transition() -> None:
    stale = row("APPROVED", "approval_required", "failed", detail="approval_stale")
    failed = view("w", "failed", row("START", "received", "received"), stale)
    assert run_outcome(failed) == "approval_stale"
    assert run_outcome(view("w", "blocked")) == "policy_block"
    assert run_outcome(view("w", "enriched")) == "unsettled:enriched"


def test_a_run_cancelled_after_its_refused_command_is_named_by_the_refusal() -> None:
    """Request v3 refuses an out-of-order command without touching the run; the case runner
    then cancels it: the case's outcome is the refusal, as the case file's runner has it."""
    refused = row("EXECUTE_REQUESTED", "received", None, reason="invalid_transition")
    cancel = row("CANCEL_REQUESTED", "received", "cancelled", reason=None)
    start = row("START", "received", "received", reason=None)
    assert run_outcome(view("w", "cancelled", start, refused, cancel)) == "state_conflict"
    assert run_outcome(view("w", "cancelled", start, cancel)) == "cancelled"
    assert summary(["state_conflict"], [view("w", "cancelled", start, refused, cancel)], []) == {
        **dict.fromkeys(COUNTERS, 0),
        "cases": 1,
        "controlled_failures": 1,
    }


APPROVED_RUN = view(
    "w1",
    "completed",
    row("ROUTED_FOR_APPROVAL", "classified", "approval_required"),
    row("APPROVED", "approval_required", "approved"),
    row("EFFECT_AUTHORIZED", "approved", "executing", event_id="auth-1"),
)
RETRIED_RUN = view(
    "w2",
    "completed",
    row("RETRYABLE_ERROR", "enriched", "enriched"),
    row("RESUME", "classified", "classified"),
    row("EFFECT_AUTHORIZED", "classified", "executing", event_id="auth-2"),
)


def effect(workflow_id: str, authorization_id: str, basis: str) -> dict[str, Any]:
    authority = {"authorization_id": authorization_id, "basis": basis}
    return {"workflow_id": workflow_id, "authorized_by": authority}


def test_counters_are_counted_from_runs_and_the_ledger() -> None:
    outcomes = ["completed", "completed", "idempotent_replay", "invalid_event", "policy_block"]
    ledger = [effect("w1", "auth-1", "approval"), effect("w2", "auth-2", "route")]
    counts = summary(outcomes, [APPROVED_RUN, RETRIED_RUN], ledger)
    assert list(counts) == list(COUNTERS)
    assert counts == {
        "cases": 5, "completed": 2, "approval_required": 1, "policy_blocks": 1,
        "idempotent_replays": 1, "idempotency_conflicts": 0, "bounded_retries": 1,
        "checkpoint_resumes": 2, "controlled_failures": 1, "authorized_effects": 2,
        "unauthorized_effects": 0,
    }  # fmt: skip


@pytest.mark.parametrize(
    "forged",
    [
        effect("w1", "auth-1", "route"),
        effect("w1", "no-such-event", "approval"),
        effect("w2", "auth-2", "approval"),
        effect("w3", "auth-1", "approval"),
    ],
)
def test_an_effect_without_its_authority_on_record_is_unauthorised(forged: dict[str, Any]) -> None:
    runs = {v["workflow_id"]: v for v in (APPROVED_RUN, RETRIED_RUN)}
    assert not authorised(forged, runs.get(forged["workflow_id"]))
    assert summary([], runs.values(), [forged])["unauthorized_effects"] == 1

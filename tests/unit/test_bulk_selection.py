"""Bulk operator commands, without I/O: a selection is parsed and checked before anything is
read (one line naming the option), matches exactly the workflows it describes, and the preview
says for each what the table allows — including which effects would be attempted again, or
reversed, and under which idempotency key — or why it would be refused."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import typer

from interlock.cli.bulk import Mode, check_mode, confirmed
from interlock.contracts.envelope import Actor, utcnow
from interlock.ops.bulk import preview_migration, preview_signal, view_of
from interlock.ops.errors import InvalidSelection
from interlock.ops.selection import Selection, matches, parse_duration, reason_of, selection
from interlock.ops.signal_payloads import payload_for
from interlock.ops.signals import signal_envelope
from interlock.projector.engine import Context, Workflow
from interlock.projector.service import Projector
from interlock.projector.store.memory import InMemoryWorkflowStore
from tests.support.direct import answer, checkpoint, to_executing_action, to_gathering_evidence
from tests.support.payloads import PAYLOADS
from tests.support.workflows import REGISTRY

NOW = datetime(2026, 12, 2, 5, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90s", 90), ("15m", 900), ("2h", 7200), ("1d", 86400), ("1w", 604800), ("1h30m", 5400)],
)
def test_a_duration_is_read_in_its_units(text: str, seconds: int) -> None:
    assert parse_duration(text) == timedelta(seconds=seconds)


@pytest.mark.parametrize("text", ["", "3x", "h", "-1h", "1.5h", "0s", "2 h", "1h junk"])
def test_a_bad_duration_is_refused_naming_the_option(text: str) -> None:
    with pytest.raises(InvalidSelection, match="--since"):
        parse_duration(text)


def test_states_may_be_repeated_or_comma_separated_and_are_kept_once_in_order() -> None:
    chosen = selection("support", states=["MANUAL_REVIEW,RETRY_WAIT", "MANUAL_REVIEW"])
    assert chosen.states == ("MANUAL_REVIEW", "RETRY_WAIT")


def test_a_state_the_type_never_has_is_refused() -> None:
    with pytest.raises(InvalidSelection, match="support has no state NOPE"):
        selection("support", states=["NOPE"], known_states={"MANUAL_REVIEW"})


@pytest.mark.parametrize("limit", [0, 1001])
def test_the_limit_is_bounded(limit: int) -> None:
    with pytest.raises(InvalidSelection, match="--limit"):
        selection("support", limit=limit)


def test_the_selection_is_described_as_given_for_the_audit() -> None:
    chosen = selection(
        "support", states=["MANUAL_REVIEW"], tenant_id="acme", since="2h", reason="x"
    )
    assert chosen.describe() == {
        "type": "support",
        "state": ["MANUAL_REVIEW"],
        "tenant": "acme",
        "since_seconds": 7200,
        "reason": "x",
    }


def _row(**changes: Any) -> dict[str, Any]:
    row = {
        "workflow_type": "support",
        "tenant_id": "acme",
        "state": "MANUAL_REVIEW",
        "updated_at": NOW - timedelta(minutes=30),
        "data": {},
        "execution": {"review": {"reason": "branch_retries_exhausted"}},
    }
    return {**row, **changes}


@pytest.mark.parametrize(
    ("chosen", "row", "expected"),
    [
        (Selection("support"), _row(), True),
        (Selection("request"), _row(), False),
        (Selection("support", states=("MANUAL_REVIEW", "RETRY_WAIT")), _row(), True),
        (Selection("support", states=("RETRY_WAIT",)), _row(), False),
        (Selection("support", tenant_id="globex"), _row(), False),
        (Selection("support", since=timedelta(hours=1)), _row(), True),
        (Selection("support", since=timedelta(minutes=10)), _row(), False),
        (Selection("support", reason="branch_retries_exhausted"), _row(), True),
        (Selection("support", reason="approval_expired"), _row(), False),
    ],
)
def test_a_selection_matches_exactly_what_it_describes(
    chosen: Selection, row: dict[str, Any], expected: bool
) -> None:
    assert matches(chosen, row, NOW) is expected


def test_the_reason_is_the_review_reason_else_the_last_failure_class() -> None:
    failed = {"last_error": {"error_class": "timeout"}}
    assert reason_of(failed, {"review": {"reason": "notification_failed"}}) == (
        "notification_failed"
    )
    assert reason_of(failed, {}) == "timeout"
    assert reason_of({}, {}) is None


def _preview(wf: Workflow, event: str) -> dict[str, Any]:
    definition = REGISTRY.get(wf.workflow_type, wf.definition_version)
    view = view_of(wf)
    payload = payload_for(definition, view, event, defaults={"reason": "bulk"})
    envelope = signal_envelope(view, event, payload, Actor(id="ops-1", role="operator"))
    ctx = Context(now=utcnow(), guards=REGISTRY.guards(wf.workflow_type))
    return preview_signal(definition, wf, envelope, ctx)


async def test_a_retry_of_an_escalated_step_goes_back_to_it_with_nothing_to_reconcile() -> None:
    store = InMemoryWorkflowStore()
    projector = Projector(store, registry=REGISTRY)
    await to_gathering_evidence(projector, store, "wf-g")
    await answer(projector, store, "wf-g", "ESCALATE", {"reason": "stage_unavailable"})
    before = await checkpoint(store, "wf-g")

    preview = _preview(before, "RETRY_REQUESTED")

    assert preview["outcome"] == "accepted"
    assert (preview["state"], preview["to_state"]) == ("MANUAL_REVIEW", "GATHERING_EVIDENCE")
    assert preview["effects_to_reconcile"] == []
    assert await checkpoint(store, "wf-g") == before  # a preview changes nothing


async def test_a_cancel_after_the_refund_would_reverse_it_under_its_key() -> None:
    store = InMemoryWorkflowStore()
    projector = Projector(store, registry=REGISTRY)
    await to_executing_action(projector, store, "wf-n")
    await answer(projector, store, "wf-n", "ACTION_EXECUTED")
    await answer(projector, store, "wf-n", "PERMANENT_ERROR", PAYLOADS["PERMANENT_ERROR"])
    wf = await checkpoint(store, "wf-n")
    key = wf.execution.effects["EXECUTING_ACTION"].idempotency_key
    assert key

    cancel = _preview(wf, "CANCEL_REQUESTED")
    retry = _preview(wf, "RETRY_REQUESTED")

    assert (cancel["outcome"], cancel["to_state"]) == ("accepted", "COMPENSATING")
    assert cancel["effects_to_reconcile"] == [
        {
            "state": "EXECUTING_ACTION",
            "attempt": "compensate",
            "status": "committed",
            "idempotency_key": key,
        }
    ]
    assert (retry["outcome"], retry["reason"], retry["failed_guards"]) == (
        "refused",
        "guard_rejected",
        ["resumable"],
    )


async def test_a_retry_of_an_unknown_effect_is_refused_naming_the_key_to_settle_it_by() -> None:
    store = InMemoryWorkflowStore()
    projector = Projector(store, registry=REGISTRY)
    await to_executing_action(projector, store, "wf-u")
    unknown = {"reason": "effect_outcome_unknown", "idempotency_key": "K-1"}
    await answer(projector, store, "wf-u", "ESCALATE", unknown)

    preview = _preview(await checkpoint(store, "wf-u"), "RETRY_REQUESTED")

    assert preview["outcome"] == "refused"
    assert preview["effects_to_reconcile"] == []
    [effect] = preview["unknown_effects"]
    assert (effect["state"], effect["idempotency_key"]) == ("EXECUTING_ACTION", "K-1")


async def test_a_migration_preview_names_the_refusal_of_the_graph() -> None:
    store = InMemoryWorkflowStore()
    projector = Projector(store, registry=REGISTRY)
    await to_executing_action(projector, store, "wf-m")
    wf = await checkpoint(store, "wf-m")
    definition = REGISTRY.get("support", wf.definition_version)

    out_of_effect = preview_migration(definition, definition, wf, None)
    unknown_version_state = preview_migration(definition, definition, wf, "NO_SUCH_STATE")

    assert (out_of_effect["outcome"], out_of_effect["reason"]) == ("refused", "migration_refused")
    assert unknown_version_state["outcome"] == "refused"


class _Stdin(io.StringIO):
    def __init__(self, text: str, *, tty: bool) -> None:
        super().__init__(text)
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


def test_a_selection_without_dry_run_or_yes_is_refused_off_a_terminal() -> None:
    with pytest.raises(typer.Exit) as exited:
        check_mode(Mode(dry_run=False, yes=False, json_output=False, pace=5), _Stdin("", tty=False))
    assert exited.value.exit_code == 2


def test_dry_run_and_yes_exclude_each_other() -> None:
    with pytest.raises(typer.Exit) as exited:
        check_mode(Mode(dry_run=True, yes=True, json_output=False, pace=5), _Stdin("", tty=True))
    assert exited.value.exit_code == 2


def test_on_a_terminal_the_operator_confirms_by_typing_the_count() -> None:
    check_mode(Mode(dry_run=False, yes=False, json_output=False, pace=5), _Stdin("", tty=True))
    assert confirmed(3, _Stdin("3\n", tty=True))
    assert not confirmed(3, _Stdin("y\n", tty=True))
    assert not confirmed(3, _Stdin("", tty=True))

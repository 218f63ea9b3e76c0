"""What a person reads in a terminal: ids whole (they are pasted into `show`), timestamps in
ISO-8601 with their offset."""

from __future__ import annotations

import pytest
from rich.console import Console

from interlock.app import terminal
from interlock.tools.demo import fixture
from interlock.tools.demo.fixture import CaseResult, FixtureReport
from interlock.tools.demo.verdicts import COUNTERS

LONG_ID = "support-acme-7f3a9c2e-5b1d-4e8f-a0c6-1d2e3f4a5b6c-escalation-ticket-1042"


@pytest.fixture
def narrow(monkeypatch: pytest.MonkeyPatch) -> Console:
    screen = Console(width=80, record=True, force_terminal=False)
    monkeypatch.setattr(terminal, "console", screen)
    return screen


def test_a_listing_never_cuts_an_id_and_shows_offsets(narrow: Console) -> None:
    terminal.workflows(
        [
            {
                "workflow_id": LONG_ID,
                "workflow_type": "support",
                "state": "AWAITING_APPROVAL",
                "version": 7,
                "updated_at": "2026-11-30T21:44:05.123456+00:00",
            }
        ]
    )
    text = narrow.export_text()
    assert LONG_ID in text
    assert "2026-11-30T21:44:05+00:00" in text


def test_a_workflows_audit_shows_offsets(narrow: Console) -> None:
    entry = {
        "event_type": "START",
        "from_state": None,
        "to_state": "CLASSIFYING",
        "accepted": True,
        "reason": None,
        "actor": {"id": "crm", "role": "upstream"},
        "state_version": 1,
        "occurred_at": "2026-11-30T21:44:05.123456+00:00",
    }
    view = {
        "workflow_id": LONG_ID,
        "workflow_type": "support",
        "definition_version": 2,
        "state": "CLASSIFYING",
        "version": 1,
        "execution": {},
        "data": {},
        "audit": [entry],
    }
    terminal.workflow(view)
    text = narrow.export_text()
    assert LONG_ID in text
    assert "21:44:05.123+00:00" in text


def test_the_demo_case_table_keeps_ids_whole_and_sets_notices_apart(narrow: Console) -> None:
    case = CaseResult("case-01", "refund", "COMPLETED", "COMPLETED", LONG_ID)
    fixture.show(FixtureReport([case], dict.fromkeys(COUNTERS, 0)))
    assert LONG_ID in narrow.export_text()
    fixture.show(FixtureReport([], {}, skipped="components are already running elsewhere"))
    assert narrow.export_text().startswith("\nrequest cases skipped")

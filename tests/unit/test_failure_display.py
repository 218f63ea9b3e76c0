"""Where an operator reads why a stage failed: `interlock show` prints the workflow's last
stage failure and marks the audit rows that reported one; `interlock trace` marks the stage's
failing span with its error class and redacted message."""

from __future__ import annotations

from typing import Any

import pytest
from rich.console import Console

from interlock.app import terminal
from interlock.ops.traceview import render

LAST_ERROR = {
    "state": "GREETING",
    "stage": "greet",
    "event": "PERMANENT_ERROR",
    "error_class": "value_error",
    "system": "greet",
    "message": "ValueError: boom",
}


def entry(event_type: str, error_class: str | None = None) -> dict[str, Any]:
    return {
        "event_type": event_type,
        "from_state": "GREETING",
        "to_state": "FAILED",
        "accepted": True,
        "reason": None,
        "actor": {"id": "greet-service", "role": "service"},
        "state_version": 2,
        "occurred_at": "2030-01-01T00:00:00+00:00",
        "error_class": error_class,
    }


@pytest.fixture
def screen(monkeypatch: pytest.MonkeyPatch) -> Console:
    recording = Console(width=200, record=True, force_terminal=False)
    monkeypatch.setattr(terminal, "console", recording)
    return recording


def test_show_prints_the_last_stage_failure_and_marks_its_audit_row(screen: Console) -> None:
    terminal.workflow(
        {
            "workflow_id": "wf-8624",
            "workflow_type": "hello",
            "definition_version": 1,
            "state": "FAILED",
            "version": 3,
            "execution": {},
            "data": {"last_error": LAST_ERROR},
            "audit": [entry("START"), entry("PERMANENT_ERROR", "value_error")],
        }
    )

    text = screen.export_text()
    assert (
        "last error: PERMANENT_ERROR in GREETING (stage greet, system greet): value_error: "
        "ValueError: boom"
    ) in text
    assert "PERMANENT_ERROR (value_error)" in text


def test_trace_marks_the_failing_stage_span() -> None:
    span = {
        "span_id": "s1",
        "parent_span_id": None,
        "name": "stage greet",
        "service": "interlock-stage",
        "start": 0,
        "end": 2_000_000,
        "status": "error",
        "attributes": {
            "interlock.error_class": "value_error",
            "interlock.error": "ValueError: boom",
        },
    }

    (line,) = render({"spans": [span]})

    assert line.endswith("[failed: value_error: ValueError: boom]")

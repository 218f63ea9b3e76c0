"""A reminder is the state's announcement again, from the workflow's current data (pure)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from interlock.contracts.progress import WaitRule
from interlock.relay.reminders import reminder

NOW = datetime(2026, 12, 2, 12, tzinfo=UTC)
RULE = WaitRule(
    workflow_type="invoice",
    state="APPROVAL_ESCALATED",
    owner_role="finance_controller",
    deadline_s=60.0,
    every_s=60.0,
    max_reminders=3,
    announcement="approval_escalated",
    fields=(("supplier", "invoice.supplier"), ("total", "invoice.total")),
)
ROW = {
    "tenant_id": "acme",
    "id": "wf-1",
    "workflow_type": "invoice",
    "state": "APPROVAL_ESCALATED",
    "version": 7,
    "definition_version": 2,
    "correlation_id": None,
    "data": json.dumps({"invoice": {"supplier": "Acme Paper GmbH", "total": "1480.00"}}),
    "review": None,
    "updated_at": datetime(2026, 12, 1, tzinfo=UTC),
    "sent": 1,
    "expires_at": None,
}


def test_the_second_reminder_carries_the_announcement_fields_and_its_number() -> None:
    message = reminder(RULE, ROW, NOW)
    assert message.type == "APPROVAL_ESCALATED"
    assert message.workflow_id == "wf-1"
    assert message.expected_version == 7
    assert message.payload == {
        "workflow_id": "wf-1",
        "state": "APPROVAL_ESCALATED",
        "state_version": 7,
        "definition_version": 2,
        "supplier": "Acme Paper GmbH",
        "total": "1480.00",
        "reminder": 2,
        "owner_role": "finance_controller",
        "waiting_since": "2026-12-01T00:00:00+00:00",
    }


def test_a_reminder_has_one_event_id_per_wait_and_number() -> None:
    again = reminder(RULE, ROW, NOW).event_id
    assert reminder(RULE, ROW, datetime(2027, 1, 1, tzinfo=UTC)).event_id == again
    assert reminder(RULE, {**ROW, "sent": 2}, NOW).event_id != again
    assert reminder(RULE, {**ROW, "version": 8}, NOW).event_id != again

"""Audit rows inserted with SQL: a workflow's accepted decisions, for tests of what is counted
from the audit trail (the outcome SLOs) without driving the projector there."""

from __future__ import annotations

from typing import Any

import asyncpg

Step = tuple[str, str | None, str, float]
"""(event type, from state, to state, seconds ago)."""


async def trail(
    db: asyncpg.Connection,
    wid: str,
    steps: list[Step],
    tenant: str = "acme",
    at: int = -1,
    **extra: Any,
) -> None:
    """A workflow's accepted audit rows, oldest first (`extra`: columns of row `at`)."""
    for n, (event, source, target, ago) in enumerate(steps):
        last = extra if n == at % len(steps) else {}
        await db.execute(
            """
            INSERT INTO audit (tenant_id, workflow_id, workflow_type, event_id, event_type,
                               from_state, to_state, accepted, actor_id, actor_role,
                               state_version, occurred_at, recorded_at, detail, error_class)
            VALUES ($1, $2, 'support', $3, $4, $5, $6, true, 'a', 'r', $7,
                    now() - make_interval(secs => $8), now() - make_interval(secs => $8), $9, $10)
            """,
            tenant,
            wid,
            f"{wid}-{n}",
            event,
            source,
            target,
            n + 1,
            ago,
            last.get("detail"),
            last.get("error_class"),
        )


START: Step = ("START", None, "REQUEST_RECEIVED", 600)
MOVED: Step = ("INTAKE_DONE", "REQUEST_RECEIVED", "CLASSIFYING", 590)
TO_APPROVAL: Step = ("POLICY_PASSED", "VALIDATING_POLICY", "AWAITING_APPROVAL", 500)
APPROVED: Step = ("APPROVED", "AWAITING_APPROVAL", "EXECUTING_ACTION", 200)
EXECUTED: Step = ("ACTION_EXECUTED", "EXECUTING_ACTION", "NOTIFYING_CUSTOMER", 150)
DONE: Step = ("CUSTOMER_NOTIFIED", "NOTIFYING_CUSTOMER", "COMPLETED", 100)

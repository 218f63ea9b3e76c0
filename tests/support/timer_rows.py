"""Timer rows and the firings read back: shared by the timer service's integration tests,
and a workflow waiting on a retry timer, armed through a real projector.

Timer rows are inserted with SQL; firings are read back from the WF_IN stream with
`get_msg`, so each test sees exactly what the projector's consumer would.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import asyncpg
from nats.js import JetStreamContext
from nats.js.api import RawStreamMsg

from interlock.contracts import subjects
from interlock.projector.service import Projector
from interlock.projector.store.port import WorkflowStore
from tests.support.payloads import PAYLOADS, REQUEST, envelope
from tests.support.streams import messages_of

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


class FakeClock:
    """A clock that only moves when the test says so."""

    def __init__(self, now: datetime = T0) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


async def arm(
    db: asyncpg.Connection,
    timer_id: str,
    fire_at: datetime,
    *,
    status: str = "armed",
    branch: str | None = None,
    headers: dict[str, str] | None = None,
) -> None:
    await db.execute(
        """INSERT INTO timers (id, workflow_id, workflow_type, tenant_id, kind, event_type,
                               fire_at, branch, status, armed_version, headers)
           VALUES ($1, 'wf-' || $1, 'support', 'acme', 'retry', 'RETRY_DUE',
                   $2, $3, $4, 3, $5::jsonb)""",
        timer_id,
        fire_at,
        branch,
        status,
        json.dumps(headers or {}),
    )


async def status_of(db: asyncpg.Connection, timer_id: str) -> str:
    return str(await db.fetchval("SELECT status FROM timers WHERE id = $1", timer_id))


async def stream_messages(js: JetStreamContext) -> list[RawStreamMsg]:
    """Every message WF_IN holds, in stream order."""
    return await messages_of(js, subjects.STREAM_IN)


async def retry_waiting_workflow(
    projector: Projector, store: WorkflowStore, workflow_id: str
) -> dict[str, Any]:
    """START a support workflow, fail its classify job retryably; returns the retry timer."""
    started = await projector.handle(envelope("START", workflow_id=workflow_id, payload=REQUEST))
    assert started.to_state == "CLASSIFYING"
    stored = await store.load("acme", workflow_id)
    assert stored is not None
    [job_id] = stored.workflow.execution.open_jobs
    failed = await projector.handle(
        envelope(
            "RETRYABLE_ERROR",
            workflow_id=workflow_id,
            payload=PAYLOADS["RETRYABLE_ERROR"],
            causation_id=job_id,
        )
    )
    assert failed.to_state == "RETRY_WAIT"
    stored = await store.load("acme", workflow_id)
    assert stored is not None
    return stored.workflow.execution.timers["retry"].model_dump()


def firing_payload(timer: dict[str, Any]) -> dict[str, Any]:
    """The payload of a firing of `timer` (as `retry_waiting_workflow` returns it)."""
    return {"timer_id": timer["id"], "fire_at": timer["fire_at"].isoformat()}

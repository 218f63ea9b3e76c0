"""Timer rows and the firings read back: shared by the timer service's integration tests.

Timer rows are inserted with SQL; firings are read back from the WF_IN stream with
`get_msg`, so each test sees exactly what the projector's consumer would.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import asyncpg
from nats.js import JetStreamContext
from nats.js.api import RawStreamMsg

from contracts import subjects
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

"""The running timer service waking and backing off, against real PostgreSQL and real
JetStream: a newly armed near timer wakes it from a long sleep, and a failing publish keeps
the timer armed while it retries with growing delays until the stream exists.
"""

from __future__ import annotations

import asyncio
import logging
import time
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest
from nats.aio.client import Client
from nats.js import JetStreamContext

from interlock.messaging.streams import provision
from interlock.relay.timers import TimerService
from tests.support.timer_rows import T0, FakeClock, arm, status_of, stream_messages
from tests.support.waiting import until
from tests.support.workflows import STAGES

pytestmark = pytest.mark.timeout(30)


async def _waiting_for_notifications(db: asyncpg.Connection) -> bool:
    """Whether the running service has finished its pass and sleeps (its last query was the
    next-due lookup and it is idle)."""
    return bool(
        await db.fetchval(
            """SELECT count(*) > 0 FROM pg_stat_activity
               WHERE datname = current_database() AND application_name = 'interlock-timers'
                 AND state = 'idle' AND query LIKE '%min(fire_at)%'"""
        )
    )


async def test_a_new_near_timer_wakes_the_running_service(
    database_url: str, js: JetStreamContext, db: asyncpg.Connection
) -> None:
    service = TimerService(database_url, js, poll_interval=30.0)
    stop = asyncio.Event()
    running = asyncio.create_task(service.run(stop))
    try:
        await until(lambda: _waiting_for_notifications(db), bool)
        started = time.monotonic()
        await arm(db, "t-near", datetime.now(UTC) + timedelta(seconds=0.3))

        await until(lambda: status_of(db, "t-near"), lambda s: s == "published", 2.0)

        assert time.monotonic() - started >= 0.3
        assert len(await stream_messages(js)) == 1
    finally:
        stop.set()
        await asyncio.wait_for(running, 5)


async def test_a_publish_failure_keeps_the_timer_armed_and_backs_off(
    database_url: str,
    nc: Client,
    db: asyncpg.Connection,
    caplog: pytest.LogCaptureFixture,
) -> None:
    js = nc.jetstream()  # no streams yet: every publish finds no responders
    await arm(db, "t-blocked", T0)
    service = TimerService(database_url, js, clock=FakeClock(T0 + timedelta(seconds=1)))
    stop = asyncio.Event()
    caplog.set_level(logging.WARNING, logger="interlock.timers")
    running = asyncio.create_task(service.run(stop))
    try:
        await until(lambda: asyncio.sleep(0, len(caplog.records)), lambda n: n >= 4)
        failures = caplog.records[:4]
        assert all("NoStreamResponseError" in r.getMessage() for r in failures)
        # Jittered delays of at least 0.05, 0.1 and 0.2 s separate the first four attempts.
        assert failures[3].created - failures[0].created >= 0.35
        assert await status_of(db, "t-blocked") == "armed"

        await provision(js, STAGES)
        await until(lambda: status_of(db, "t-blocked"), lambda s: s == "published")
    finally:
        stop.set()
        await asyncio.wait_for(running, 5)
    assert len(await stream_messages(js)) == 1

"""The open-job sweeper: a lost job message can delay a workflow, never strand it.

The projector's state says which jobs a workflow waits for (`execution.open_jobs`). A job
message can still be lost after the broker acknowledged it (a broker that acknowledged
before its disk had it, a stream purged by hand, a consumer that stopped redelivering), and
then nothing would ever answer. So, for every workflow that has made no progress for
`after` seconds while it waits for a job, the sweeper copies the job's latest outbox row into
the outbox again: the relay publishes it under a new message id, the stage does the job under
the same job id, and its result carries the same event id. A job that was merely slow is
therefore done twice at worst and decided once (the stage skips a job the workflow, as
committed, no longer lists; an effect is reconciled by its idempotency key; the projector drops a
processed event id). A copy is made at most once per `after` seconds per job. A paused
workflow is left alone.

Rows of jobs that are still open are kept by the relay's pruning (`relay.store.PRUNE`),
so there is always a row to copy.
"""

from __future__ import annotations

import asyncio
import logging

import asyncpg

from interlock.contracts.errors import StoreUnavailable
from interlock.messaging.waiting import wait_any
from interlock.otel import metrics
from interlock.relay.paused import not_paused
from interlock.relay.store import UNAVAILABLE, close_quietly

log = logging.getLogger("interlock.sweeper")

# The latest outbox row of each open job of a workflow idle for `after` seconds, copied
# when that row is itself older than `after` and already relayed (so a job is re-dispatched
# at most once per period, and copies never pile up behind a broker outage).
REDISPATCH = f"""
WITH idle AS (
    SELECT w.id AS workflow_id, j.job_id
    FROM workflows w,
         LATERAL jsonb_object_keys(
             CASE jsonb_typeof(w.execution -> 'open_jobs')
                 WHEN 'object' THEN w.execution -> 'open_jobs' ELSE '{{}}'::jsonb END
         ) AS j(job_id)
    WHERE w.updated_at < now() - make_interval(secs => $1)
      AND {not_paused("w", "id")}
    ORDER BY w.updated_at
    LIMIT $2
),
latest AS (
    SELECT DISTINCT ON (i.job_id) o.subject, o.headers, o.body, o.workflow_id, o.created_at,
                                  o.txid, o.id
    FROM idle i
    JOIN outbox o ON o.workflow_id = i.workflow_id
                 AND convert_from(o.body, 'UTF8')::jsonb ->> 'event_id' = i.job_id
    ORDER BY i.job_id, o.id DESC
)
INSERT INTO outbox (subject, headers, body, workflow_id)
SELECT l.subject, l.headers, l.body, l.workflow_id FROM latest l
WHERE l.created_at < now() - make_interval(secs => $1)
  AND EXISTS (SELECT 1 FROM relay_cursor c WHERE (l.txid, l.id) <= (c.txid, c.last_id))
RETURNING workflow_id
"""


async def redispatch(database_url: str, after: float, limit: int = 500) -> list[str]:
    """One pass: re-dispatch the open jobs of workflows idle for `after` seconds; returns the
    workflow ids (one per job copied). Raises `StoreUnavailable`."""
    try:
        connection = await asyncpg.connect(database_url, timeout=10)
        try:
            rows = await connection.fetch(REDISPATCH, after, limit)
        finally:
            await close_quietly(connection)
    except UNAVAILABLE as exc:
        raise StoreUnavailable(f"sweeper: database unavailable: {exc!r}") from exc
    return [str(r["workflow_id"]) for r in rows]


class Sweeper:
    """Runs `redispatch` every `after / 4` seconds (at least once a second)."""

    def __init__(self, database_url: str, after: float) -> None:
        self._url = database_url
        self._after = after
        self._every = max(1.0, after / 4)

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                copied = await redispatch(self._url, self._after)
            except StoreUnavailable as exc:
                log.warning("%s; sweeping again later", exc)
            else:
                if copied:
                    metrics.jobs_redispatched(len(copied))
                    log.warning(
                        "re-dispatched %d job(s) idle for %.0fs: %s",
                        len(copied),
                        self._after,
                        ", ".join(sorted(set(copied))[:10]),
                    )
            await wait_any([stop], self._every)

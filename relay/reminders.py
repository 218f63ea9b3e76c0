"""Reminders of waits on a person: an overdue review or approval is announced again.

A definition declares its waits on a person (`HumanWait`: state, owner role, deadline,
reminder period, at most `max_reminders`). Once a workflow has waited in such a state past the
deadline (counted from its last move), the relay publishes the state's announcement again on
`wf.out.<type>.<name>` (and its tenant's `wf.tenant.<tenant>.<type>.<name>`), built from the
workflow's current data as the projector built it, with
`reminder: n`, `owner_role` and `overdue_since`; then every reminder period, up to the maximum.

Reminders are never events: the projector does not see them, so they cannot change a decision
or a replay. They are durable: a reminder's count is written in the transaction that adds its
outbox row (`human_wait_reminders`, migration 0012), so a restart sends only what is due, and a
pass sends at most `batch` of them. A wait that begins at a newer state version counts afresh;
the count of a workflow that moved on is forgotten. A paused workflow's waits are not reminded
until it is resumed (`relay.paused`): its announcements are held back meanwhile, and a reminder
must not go out before the announcement it repeats.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import asyncpg

from interlock.contracts import subjects
from interlock.contracts.envelope import Actor, Envelope
from interlock.contracts.ids import derive
from interlock.contracts.progress import WaitRule
from interlock.otel import metrics
from interlock.relay.paused import not_paused

log = logging.getLogger("interlock.reminders")

REMINDERS = Actor(id="reminders", role="system")

# The rules as a relation: one row per declared (type, state) with its resolved parameters.
RULES = """unnest($1::text[], $2::text[], $3::float8[], $4::float8[], $5::int[], $6::text[])
    AS b(workflow_type, state, deadline, every, most, expiry)"""

# Waits whose next reminder is due: reminder n+1 at deadline + n * every after the last move.
DUE = f"""
SELECT w.tenant_id, w.id, w.workflow_type, w.state, w.version, w.definition_version,
       w.correlation_id, w.data::text AS data, w.execution -> 'review' AS review,
       w.trace_headers::text AS headers, w.updated_at, coalesce(r.reminders, 0) AS sent,
       (SELECT min(t.fire_at) FROM timers t
        WHERE t.tenant_id = w.tenant_id AND t.workflow_id = w.id AND t.status = 'armed'
          AND t.kind = b.expiry) AS expires_at
FROM workflows w
JOIN {RULES} ON b.workflow_type = w.workflow_type AND b.state = w.state
LEFT JOIN human_wait_reminders r
       ON r.tenant_id = w.tenant_id AND r.workflow_id = w.id AND r.state_version = w.version
WHERE coalesce(r.reminders, 0) < b.most AND {not_paused("w", "id")}
  AND w.updated_at + make_interval(secs => b.deadline + coalesce(r.reminders, 0) * b.every)
      <= now()
ORDER BY w.updated_at, w.id
LIMIT $7
"""

# Count reminder `$5` of the wait at state version `$4`, only if it is the next one (a
# concurrent pass that counted it first wins) and the workflow still waits at that version.
CLAIM = """
INSERT INTO human_wait_reminders AS r
       (tenant_id, workflow_id, state, state_version, reminders, last_reminded_at)
SELECT $1, $2, $3, $4, $5, now()
WHERE EXISTS (SELECT 1 FROM workflows w WHERE w.tenant_id = $1 AND w.id = $2 AND w.version = $4)
ON CONFLICT (tenant_id, workflow_id) DO UPDATE
SET state = EXCLUDED.state, state_version = EXCLUDED.state_version,
    reminders = EXCLUDED.reminders, last_reminded_at = EXCLUDED.last_reminded_at
WHERE r.state_version <> EXCLUDED.state_version OR r.reminders = EXCLUDED.reminders - 1
RETURNING 1
"""

PUBLISH = """
INSERT INTO outbox (subject, headers, body, tenant_id, workflow_id)
VALUES ($1, $2::jsonb, $3, $4, $5)
"""

# The counts of workflows that are no longer in the wait they were counted for.
FORGET = """
DELETE FROM human_wait_reminders r
WHERE NOT EXISTS (SELECT 1 FROM workflows w WHERE w.tenant_id = r.tenant_id
                  AND w.id = r.workflow_id AND w.version = r.state_version)
"""

# Per declared (type, state): workflows waiting, the oldest wait and how many are overdue.
WAITS = f"""
SELECT w.workflow_type, w.state, count(*) AS n,
       coalesce(max(extract(epoch FROM now() - w.updated_at)), 0)::float8 AS oldest,
       count(*) FILTER (WHERE w.updated_at + make_interval(secs => b.deadline) <= now())
           AS overdue
FROM workflows w
JOIN {RULES} ON b.workflow_type = w.workflow_type AND b.state = w.state
GROUP BY w.workflow_type, w.state
"""


def rule_columns(rules: Sequence[WaitRule]) -> list[list[Any]]:
    """The rules as the six arrays `RULES` unnests."""
    return [
        [r.workflow_type for r in rules],
        [r.state for r in rules],
        [r.deadline_s for r in rules],
        [r.every_s for r in rules],
        [r.max_reminders for r in rules],
        [r.expiry_timer for r in rules],
    ]


def lookup(data: Any, path: str) -> Any:
    """The value at a dotted `path` in `data` (None where the path ends), as the projector's
    announcements read it."""
    for part in path.split("."):
        if not isinstance(data, dict):
            return None
        data = data.get(part)
    return data


def reminder(rule: WaitRule, row: Mapping[str, Any], now: datetime) -> Envelope:
    """Reminder number `sent + 1` of the wait in `row`: the state's announcement again."""
    n = int(row["sent"]) + 1
    data = json.loads(row["data"])
    payload: dict[str, Any] = {
        "workflow_id": row["id"],
        "state": row["state"],
        "state_version": row["version"],
        "definition_version": row["definition_version"],
        **{name: lookup(data, path) for name, path in rule.fields},
        "reminder": n,
        "owner_role": rule.owner_role,
        "waiting_since": row["updated_at"].isoformat(),
    }
    if row["expires_at"] is not None:
        payload["expires_at"] = row["expires_at"].isoformat()
    review = json.loads(row["review"]) if row["review"] else None
    if review is not None:
        payload["review"] = review
    tenant, workflow_id = row["tenant_id"], row["id"]
    return Envelope(
        event_id=derive("reminder", tenant, workflow_id, row["version"], rule.announcement, n),
        type=rule.announcement.upper(),
        workflow_type=row["workflow_type"],
        workflow_id=workflow_id,
        tenant_id=tenant,
        actor=REMINDERS,
        causation_id=derive("out", tenant, workflow_id, row["version"], rule.announcement),
        correlation_id=row["correlation_id"],
        occurred_at=now,
        expected_version=row["version"],
        payload=payload,
    )


async def remind_due(
    connection: asyncpg.Connection, rules: Sequence[WaitRule], batch: int
) -> list[tuple[str, str]]:
    """Send every due reminder (at most `batch`), each counted in the transaction that adds
    its outbox row; returns the (type, state) of each one sent."""
    by_pair = {(r.workflow_type, r.state): r for r in rules}
    sent: list[tuple[str, str]] = []
    now = await connection.fetchval("SELECT now()")
    for row in await connection.fetch(DUE, *rule_columns(rules), batch):
        rule = by_pair[(row["workflow_type"], row["state"])]
        try:
            message = reminder(rule, row, now)
        except ValueError as exc:  # the envelope's validation error
            # One workflow whose ids cannot make an envelope must not hold up the others;
            # the error's kind is logged, never the values.
            log.error("no reminder for workflow %s: %s", row["id"], type(exc).__name__)
            continue
        async with connection.transaction():
            claimed = await connection.fetchval(
                CLAIM, row["tenant_id"], row["id"], row["state"], row["version"], row["sent"] + 1
            )
            if not claimed:
                continue
            for subject in (
                subjects.out(rule.workflow_type, rule.announcement),
                subjects.tenant_out(row["tenant_id"], rule.workflow_type, rule.announcement),
            ):
                await connection.execute(
                    PUBLISH,
                    subject,
                    row["headers"],
                    message.to_bytes(),
                    row["tenant_id"],
                    row["id"],
                )
        metrics.human_wait_reminder(rule.workflow_type, rule.state)
        sent.append((rule.workflow_type, rule.state))
    await connection.execute(FORGET)
    return sent

"""What must hold after any amount of chaos, checked from the database and the simulators'
ledgers once the stack is quiet. Each check returns the workflow ids that break it.

- lost: a request the broker acknowledged never became a workflow, or an effect the audit
  says happened is not on the provider's ledger;
- stuck: a workflow neither terminal nor in a waiting state that a signal or timer moves,
  a job open longer than the sweeper's bound, or outbox rows never published (by the
  projector after its commit, or by the relay);
- duplicate_effects: more effects on a ledger than the workflow's accepted results account
  for (one per authorised intent);
- unauthorized_effects: an effect without an accepted approval and policy validation before
  it (support), without an authorisation on record (request), or after the workflow was
  committed as cancelled;
- audit_gaps: accepted audit rows whose versions are not exactly 1..n, or an accepted event
  id twice;
- dlq_good: a well-formed message in a dead-letter stream.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from interlock.config.plugins import installed
from interlock.contracts.envelope import parse_envelope
from interlock.contracts.errors import MalformedMessage

EFFECT_RESULTS = {
    "support": ("ACTION_EXECUTED", "POST_ACTION_INVARIANT_FAILED"),
    "request": ("EFFECT_EXECUTED",),
}


@dataclass
class Findings:
    lost: set[str] = field(default_factory=set)
    stuck: set[str] = field(default_factory=set)
    duplicate_effects: set[str] = field(default_factory=set)
    unauthorized_effects: set[str] = field(default_factory=set)
    audit_gaps: set[str] = field(default_factory=set)
    dlq_good: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {
            "lost": len(self.lost),
            "duplicate_effects": len(self.duplicate_effects),
            "unauthorized_effects": len(self.unauthorized_effects),
            "audit_gaps": len(self.audit_gaps),
            "stuck": len(self.stuck),
            "dlq_good": len(self.dlq_good),
        }

    def broken(self) -> list[str]:
        ids: set[str] = set()
        for found in (
            self.lost,
            self.stuck,
            self.duplicate_effects,
            self.unauthorized_effects,
            self.audit_gaps,
        ):
            ids |= found
        return sorted(ids | set(self.dlq_good))


@dataclass(frozen=True)
class Started:
    """A workflow the driver's request was acknowledged for."""

    workflow_id: str
    workflow_type: str
    customer_id: str | None


async def check(
    engine: AsyncEngine,
    started: list[Started],
    dead_letters: Iterable[tuple[int, bytes]],
    *,
    sweep_after: float,
) -> Findings:
    found = Findings()
    ids = [s.workflow_id for s in started]
    rows = {r["id"]: r for r in await _rows(engine, WORKFLOWS, ids=ids)}
    audit: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in await _rows(engine, AUDIT, ids=ids):
        audit[row["workflow_id"]].append(row)
    for s in started:
        found_row = rows.get(s.workflow_id)
        if found_row is None:
            found.lost.add(s.workflow_id)
            continue
        if not _settled(found_row):
            found.stuck.add(s.workflow_id)
        if _gapped(audit[s.workflow_id]):
            found.audit_gaps.add(s.workflow_id)
    for row in await _rows(engine, OLD_OPEN_JOBS, ids=ids, seconds=sweep_after * 2):
        found.stuck.add(row["id"])
    for row in await _rows(engine, UNRELAYED):
        found.stuck.add(row["workflow_id"] or "outbox")
    await _effects(engine, started, audit, found)
    for letter_id, body in dead_letters:
        try:
            parse_envelope(body)
        except MalformedMessage:
            continue
        found.dlq_good.append(f"dlq:{letter_id}")
    return found


WORKFLOWS = (
    "SELECT id, workflow_type, state, definition_version FROM workflows WHERE id = ANY(:ids)"
)
AUDIT = """
SELECT workflow_id, event_id, event_type, to_state, accepted, state_version, recorded_at
FROM audit WHERE workflow_id = ANY(:ids) ORDER BY id
"""
OLD_OPEN_JOBS = """
SELECT id FROM workflows
WHERE id = ANY(:ids)
  AND jsonb_typeof(execution -> 'open_jobs') = 'object'
  AND execution -> 'open_jobs' <> '{}'::jsonb
  AND updated_at < now() - make_interval(secs => :seconds)
"""
UNRELAYED = """
SELECT DISTINCT o.workflow_id FROM outbox o
WHERE o.published_at IS NULL AND NOT EXISTS (SELECT 1 FROM relay_cursor c
                  WHERE (o.txid, o.id) <= (c.txid, c.last_id))
"""
ACTIONS = """
SELECT customer_id, idempotency_key, created_at FROM sim.actions
WHERE customer_id = ANY(:customers)
"""
EFFECTS = """
SELECT workflow_id, idempotency_key, authorized_by, created_at FROM sim.effects
WHERE workflow_id = ANY(:ids)
"""


async def _rows(engine: AsyncEngine, sql: str, **params: Any) -> list[dict[str, Any]]:
    async with engine.connect() as conn:
        result = await conn.execute(text(sql), params)
        return [dict(r._mapping) for r in result]


def _settled(row: dict[str, Any]) -> bool:
    """Terminal, or in a state that a signal or a timer moves on."""
    definition = installed().registry.get(row["workflow_type"], row["definition_version"])
    return definition.is_terminal(row["state"]) or row["state"] in definition.waiting_states


def _gapped(rows: list[dict[str, Any]]) -> bool:
    accepted = [r for r in rows if r["accepted"]]
    versions = [r["state_version"] for r in accepted]
    twice = any(n > 1 for n in Counter(r["event_id"] for r in accepted).values())
    return twice or versions != list(range(1, len(versions) + 1))


async def _effects(
    engine: AsyncEngine,
    started: list[Started],
    audit: dict[str, list[dict[str, Any]]],
    found: Findings,
) -> None:
    by_customer = {s.customer_id: s.workflow_id for s in started if s.customer_id}
    effects: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in await _rows(engine, ACTIONS, customers=list(by_customer)):
        effects[by_customer[row["customer_id"]]].append(row)
    ids = [s.workflow_id for s in started if s.workflow_type == "request"]
    for row in await _rows(engine, EFFECTS, ids=ids):
        effects[row["workflow_id"]].append(row)
    for s in started:
        done = effects.get(s.workflow_id, [])
        history = audit.get(s.workflow_id, [])
        recorded = [
            r
            for r in history
            if r["accepted"] and r["event_type"] in EFFECT_RESULTS.get(s.workflow_type, ())
        ]
        if len(done) > 1:  # one authorised intent per workflow in every scenario driven
            found.duplicate_effects.add(s.workflow_id)
        if recorded and not done:
            found.lost.add(s.workflow_id)
        if any(not _authorised(s.workflow_type, effect, history) for effect in done):
            found.unauthorized_effects.add(s.workflow_id)


def _authorised(workflow_type: str, effect: dict[str, Any], history: list[dict[str, Any]]) -> bool:
    accepted = [r for r in history if r["accepted"]]
    cancelled_at = _first(r["recorded_at"] for r in accepted if r["to_state"] == "CANCELLED")
    if cancelled_at is not None and effect["created_at"] > cancelled_at:
        return False
    if workflow_type == "request":
        wanted = (effect.get("authorized_by") or {}).get("authorization_id")
        return any(r["event_id"] == wanted for r in accepted)
    events = [r["event_type"] for r in accepted]
    return "APPROVED" in events and "POLICY_VALID" in events


def _first(values: Iterable[datetime]) -> datetime | None:
    return next(iter(values), None)

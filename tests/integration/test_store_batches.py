"""Group commit on PostgreSQL (`projector.store.batching`): decisions ready together are
committed by one statement, each with its own compare-and-set and answer, and what they write
is exactly what committing them one at a time writes."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator

import asyncpg
import pytest

from interlock.projector.errors import ConcurrencyConflict, DuplicateEvent
from interlock.projector.store.postgres import PostgresWorkflowStore, open_store
from tests.support.decisions import TRACE, Start, event, started, step

_ROWS = {
    "workflows": "SELECT id, state, version, data, execution FROM workflows",
    "audit": "SELECT workflow_id, event_id, event_type, from_state, to_state, accepted,"
    " state_version FROM audit",
    "history": "SELECT workflow_id, event_id, event, accepted, from_version, inputs, outcome"
    " FROM history",
    "processed": "SELECT workflow_id, event_id FROM processed_events",
    "outbox": "SELECT workflow_id, subject, body FROM outbox",
}


@pytest.fixture
async def store(database_url: str) -> AsyncIterator[PostgresWorkflowStore]:
    opened = await open_store(database_url, size=4)
    yield opened
    await opened.close()


_TABLES = ("workflows", "audit", "history", "processed_events", "outbox", "timers")


async def _rows(db: asyncpg.Connection) -> dict[str, list[tuple[str, ...]]]:
    """What the decisions wrote, table by table (their own ids and times left out)."""
    found = {}
    for table, query in _ROWS.items():
        found[table] = sorted(tuple(str(v) for v in row.values()) for row in await db.fetch(query))
    return found


def _starts(prefix: str, count: int) -> list[Start]:
    return [started(f"{prefix}{n}", event_id=f"{prefix}req-{n}") for n in range(count)]


async def test_decisions_ready_together_share_a_statement_and_each_is_written(
    store: PostgresWorkflowStore,
) -> None:
    starts = _starts("wf-", 12)
    before = store.batches.statements

    created = await asyncio.gather(
        *(store.create(s.decision, s.event, s.fingerprint, TRACE) for s in starts)
    )

    assert created == [True] * 12
    # Ready together (none waited for anything before its commit): one statement.
    assert store.batches.statements - before == 1
    moves = [step(s.workflow, state="CANCELLED") for s in starts]
    before = store.batches.statements
    await asyncio.gather(
        *(
            store.commit(m, event(s.workflow.workflow_id), TRACE)
            for s, m in zip(starts, moves, strict=True)
        )
    )
    assert store.batches.statements - before == 1
    for s in starts:
        loaded = await store.load("acme", s.workflow.workflow_id)
        assert loaded is not None
        assert (loaded.workflow.state, loaded.workflow.version) == ("CANCELLED", 2)


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_any_split_into_batches_writes_what_one_at_a_time_writes(
    store: PostgresWorkflowStore, db: asyncpg.Connection, seed: int
) -> None:
    """The same decisions committed one at a time, then (the tables emptied) in random
    groups: the same rows."""
    rng = random.Random(seed)
    count = 10
    starts = _starts("wf-", count)
    moves = [step(s.workflow, state="CANCELLED") for s in starts]
    cancels = [event(s.workflow.workflow_id, event_id="cancel") for s in starts]

    for s in starts:
        assert await store.create(s.decision, s.event, s.fingerprint, TRACE)
    for move, cancel in zip(moves, cancels, strict=True):
        await store.commit(move, cancel, TRACE)
    one_at_a_time = await _rows(db)
    await db.execute(f"TRUNCATE {', '.join(_TABLES)}")

    order = list(range(count))
    rng.shuffle(order)
    statements = store.batches.statements
    while order:
        group = order[: rng.randint(1, len(order))]
        order = order[len(group) :]
        created = await asyncio.gather(
            *(store.create(starts[i].decision, starts[i].event, starts[i].fingerprint, TRACE)
              for i in group)
        )  # fmt: skip
        assert all(created)
        await asyncio.gather(*(store.commit(moves[i], cancels[i], TRACE) for i in group))

    assert store.batches.statements - statements < 2 * count  # some went together
    assert await _rows(db) == one_at_a_time


async def test_a_duplicate_in_a_batch_fails_only_its_own_decision(
    store: PostgresWorkflowStore, db: asyncpg.Connection
) -> None:
    starts = _starts("wf-", 4)
    for s in starts:
        await store.create(s.decision, s.event, s.fingerprint, TRACE)
    first = step(starts[0].workflow)
    await store.commit(first, event("wf-0", event_id="seen"), TRACE)
    blocker = step(starts[3].workflow)
    statements = store.batches.statements

    # Queued behind a commit in flight: the duplicate and two good ones share a statement.
    results = await asyncio.gather(
        store.commit(blocker, event("wf-3"), TRACE),
        store.commit(step(first.workflow), event("wf-0", event_id="seen"), TRACE),
        store.commit(step(starts[1].workflow), event("wf-1"), TRACE),
        store.commit(step(starts[2].workflow), event("wf-2"), TRACE),
        return_exceptions=True,
    )

    assert [results[0], results[2], results[3]] == [None, None, None]
    assert isinstance(results[1], DuplicateEvent)
    # Told apart inside the statement: nothing is sent again one decision at a time (an
    # attacker reusing a decided id would otherwise fail every commit batched with it).
    assert store.batches.statements - statements <= 2  # one per lane at most
    versions = dict(await db.fetch("SELECT id, version FROM workflows ORDER BY id"))
    assert versions == {"wf-0": 2, "wf-1": 2, "wf-2": 2, "wf-3": 2}


async def test_a_lost_race_in_a_batch_fails_only_its_own_decision(
    store: PostgresWorkflowStore,
) -> None:
    starts = _starts("wf-", 3)
    for s in starts:
        await store.create(s.decision, s.event, s.fingerprint, TRACE)
    stale = step(starts[1].workflow)
    await store.commit(stale, event("wf-1"), TRACE)  # wf-1 moves to v2 first

    results = await asyncio.gather(
        store.commit(step(starts[0].workflow), event("wf-0"), TRACE),
        store.commit(stale, event("wf-1"), TRACE),  # decided on v1 again: lost the race
        store.commit(step(starts[2].workflow), event("wf-2"), TRACE),
        return_exceptions=True,
    )

    assert [results[0], results[2]] == [None, None]
    assert isinstance(results[1], ConcurrencyConflict)

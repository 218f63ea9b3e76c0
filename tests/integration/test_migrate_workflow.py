"""`interlock migrate-workflow` against PostgreSQL: a support workflow started under v1 is
moved to v2 as an operator's act (audited with the operator, kept in the history, its new
jobs signed), carries on under v2 with the projector, and its history still replays; moves
the graph forbids, unknown versions and unknown workflows are refused with exit 3."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import asyncpg
from typer.testing import CliRunner

from interlock.cli import app
from interlock.projector.engine import Accepted, Context, resolve
from interlock.projector.replay import replay
from interlock.projector.service import Projector, first_checkpoint, validated
from interlock.projector.store.histories import read_histories
from interlock.projector.store.postgres import PostgresWorkflowStore
from interlock.projector.store.types import NO_TRACE
from tests.support.decisions import T0
from tests.support.direct import accepted, answer, checkpoint
from tests.support.payloads import PAYLOADS, envelope
from tests.support.workflows import REGISTRY


async def _v1_at_retrieving_policy(store: PostgresWorkflowStore, projector: Projector) -> None:
    v1 = REGISTRY.get("support", 1)
    request = validated(v1, envelope("START", workflow_id="wf-1", payload=PAYLOADS["START"]))
    ctx = Context(now=T0)
    decision = resolve(v1, first_checkpoint(v1, request), request, ctx)
    assert isinstance(decision, Accepted)
    assert await store.create(decision, request, "fp", NO_TRACE, ctx)
    await accepted(answer(projector, store, "wf-1", "CLASSIFICATION_SUCCEEDED"))
    assert (await checkpoint(store, "wf-1")).state == "RETRIEVING_POLICY"


async def _migrate(cli: CliRunner, *args: str) -> tuple[int, dict[str, Any]]:
    """The command run as from a shell (its own event loop, so in a thread of its own)."""
    done = await asyncio.to_thread(cli.invoke, app, ["migrate-workflow", "--json", *args])
    assert done.exception is None or isinstance(done.exception, SystemExit), done.exception
    return done.exit_code, json.loads(done.stdout)


async def test_a_v1_workflow_moved_to_v2_carries_on_under_v2_and_replays(
    store: PostgresWorkflowStore, cli: CliRunner, database_url: str
) -> None:
    projector = Projector(store, registry=REGISTRY)
    await _v1_at_retrieving_policy(store, projector)

    code, moved = await _migrate(
        cli, "wf-1", "--to-version", "2", "--state", "GATHERING_EVIDENCE", "--as", "ops-ann"
    )

    assert code == 0, moved
    assert (moved["from_version"], moved["to_version"], moved["state"]) == (
        1,
        2,
        "GATHERING_EVIDENCE",
    )
    wf = await checkpoint(store, "wf-1")
    assert (wf.state, wf.definition_version) == ("GATHERING_EVIDENCE", 2)
    db = await asyncpg.connect(database_url)
    try:
        audit = await db.fetchrow(
            "SELECT event_type, actor_id, actor_role, definition_version FROM audit "
            "WHERE workflow_id = 'wf-1' ORDER BY id DESC LIMIT 1"
        )
        jobs = await db.fetch(
            "SELECT body FROM outbox WHERE workflow_id = 'wf-1' AND subject LIKE 'wf.job.%' "
            "ORDER BY id DESC LIMIT 2"
        )
    finally:
        await db.close()
    assert dict(audit) == {
        "event_type": "WORKFLOW_MIGRATED",
        "actor_id": "ops-ann",
        "actor_role": "operator",
        "definition_version": 2,
    }
    bodies = [json.loads(j["body"])["payload"] for j in jobs]
    assert {b["stage"] for b in bodies} == {"retrieve_policy", "inspect_account"}
    assert all(b["signature"] for b in bodies)

    for result in ("POLICY_RETRIEVED", "ACCOUNT_INSPECTED"):
        await accepted(answer(projector, store, "wf-1", result))
    assert (await checkpoint(store, "wf-1")).state == "GENERATING_RECOMMENDATION"
    (history,) = await read_histories(database_url)
    replayed = replay(history, REGISTRY)
    assert (replayed.events, replayed.divergences) == (5, ())


async def test_moves_the_graph_forbids_are_refused_with_their_reason(
    store: PostgresWorkflowStore, cli: CliRunner
) -> None:
    await _v1_at_retrieving_policy(store, Projector(store, registry=REGISTRY))

    refused = {
        args: await _migrate(cli, *args)
        for args in (
            ("wf-1", "--to-version", "2"),
            ("wf-1", "--to-version", "2", "--state", "AWAITING_APPROVAL"),
            ("wf-1", "--to-version", "2", "--state", "EXECUTING_ACTION"),
            ("wf-1", "--to-version", "9"),
            ("wf-nobody", "--to-version", "2"),
        )
    }

    assert {code for code, _ in refused.values()} == {3}
    reasons = [outcome["reason"] for _, outcome in refused.values()]
    assert reasons == [
        "migration_refused",
        "migration_refused",
        "migration_refused",
        "unknown_version",
        "unknown_workflow",
    ]
    details = [outcome["detail"] for _, outcome in refused.values()]
    assert "no state RETRIEVING_POLICY" in details[0]
    assert "gate" in details[1]
    assert "effect" in details[2]
    wf = await checkpoint(store, "wf-1")
    assert (wf.state, wf.definition_version, wf.version) == ("RETRIEVING_POLICY", 1, 2)

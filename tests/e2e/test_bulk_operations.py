"""Bulk repair through the whole stack: the demo's review queue (its workflows in MANUAL_REVIEW
or RETRY_WAIT) retried as one selection. `--dry-run` prints what would happen to each — the
state it would re-enter, the effects that would be reconciled and under which key, or why it
would be refused — and sends nothing; without `--yes` the selection is refused; `--yes`
applies it, paced, with progress, and the operator's log holds each workflow with the operator
and the selection. Pause and resume go through the CLI too."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

import asyncpg
import pytest

from interlock.config.settings import Settings
from interlock.tools.demo import run_demo
from interlock.tools.demo.scenarios import SCENARIOS
from tests.support.cli import cli_env, cli_streams
from tests.support.inprocess import stack_in_process
from tests.support.workflow_rows import workflow_views

pytestmark = pytest.mark.timeout(400)

REVIEW_QUEUE = (
    "retry_exhaustion",
    "low_classification_confidence",
    "compensation_failure",
    "notification_failure_keeps_refund",
)
SELECTION = ("--type", "support", "--state", "MANUAL_REVIEW,RETRY_WAIT")


async def _review_queue(settings: Settings, nats_url: str, database_url: str) -> list[str]:
    """The demo's review scenarios run to their end (on the running stack); their ids."""
    chosen = [s for s in SCENARIOS if s.name in REVIEW_QUEUE]
    outcomes = await run_demo(settings, nats_url, database_url, chosen, quiet=True)
    assert {o.actual for o in outcomes} == {"MANUAL_REVIEW"}, outcomes
    return [o.workflow_id for o in outcomes]


async def _interlock(
    settings: Settings, nats_url: str, database_url: str, *args: str
) -> tuple[int, str, str]:
    # The CLI as an operator runs it: the broker's address, without the administrator's name.
    broker = urlsplit(nats_url)
    env = cli_env(
        settings.home,
        INTERLOCK_NATS_URL=f"nats://{broker.hostname}:{broker.port}",
        INTERLOCK_DATABASE_URL=database_url,
    )
    return await cli_streams(env, *args, within=180)


async def _views(database_url: str, queue: list[str]) -> dict[str, dict[str, Any]]:
    found = await workflow_views(database_url, queue)
    return {wf: view for wf, view in found.items() if view is not None}


def _key(view: dict[str, Any]) -> str:
    return str(view["execution"]["effects"]["EXECUTING_ACTION"]["idempotency_key"])


async def test_a_bulk_retry_of_the_review_queue_is_previewed_confirmed_applied_and_audited(
    e2e_settings: Settings, module_nats: str, module_database: str
) -> None:
    urls = (e2e_settings, module_nats, module_database)
    async with stack_in_process(*urls, "support"):
        await _previewed_confirmed_applied(*urls, await _review_queue(*urls))


async def _previewed_confirmed_applied(
    e2e_settings: Settings, module_nats: str, module_database: str, queue: list[str]
) -> None:
    urls = (e2e_settings, module_nats, module_database)
    before = await _views(module_database, queue)

    code, out, err = await _interlock(*urls, "retry", *SELECTION, "--dry-run", "--json")
    assert code == 0, (out, err)
    preview = json.loads(out)
    assert preview["selected"] == len(queue)
    by_id = {p["workflow_id"]: p for p in preview["workflows"]}
    assert set(by_id) == set(queue)
    assert {p["state"] for p in by_id.values()} == {"MANUAL_REVIEW"}
    for p in by_id.values():
        assert p["outcome"] in {"accepted", "refused"}
        assert "effects_to_reconcile" in p
    # Retrying never repeats an effect: where a refund stands, the table refuses the retry
    # and the preview names the refund's key (the cancel below reverses it under that key).
    refunded = [wf for wf in queue if before[wf]["execution"].get("effects")]
    assert refunded, before
    for wf in refunded:
        assert by_id[wf]["outcome"] == "refused", by_id[wf]
        assert by_id[wf]["failed_guards"] == ["resumable"]
        assert by_id[wf]["effects"] == [
            {
                "state": "EXECUTING_ACTION",
                "status": "committed",
                "idempotency_key": _key(before[wf]),
            }
        ]
    accepted = sorted(wf for wf, p in by_id.items() if p["outcome"] == "accepted")
    assert accepted, preview
    assert await workflow_views(module_database, queue) == before  # a preview sends nothing

    code, _, err = await _interlock(*urls, "retry", *SELECTION)
    assert code == 2
    assert "--yes" in err
    assert len(err.strip().splitlines()) == 1

    code, out, err = await _interlock(*urls, "retry", *SELECTION, "--yes", "--json")
    assert code == 0, err
    applied = {p["workflow_id"]: p for p in json.loads(out)["workflows"]}
    for wf in accepted:
        assert applied[wf]["applied"]["accepted"] is True, applied[wf]
        assert applied[wf]["applied"]["to_state"] == by_id[wf]["to_state"]
    assert f"[{len(queue)}/{len(queue)}]" in err  # progress on stderr

    after = await _views(module_database, queue)
    for wf in accepted:
        retried = [a for a in after[wf]["audit"] if a["event_type"] == "RETRY_REQUESTED"]
        assert [(a["accepted"], a["actor"]["id"]) for a in retried] == [(True, "cli-operator")]
    log = await _operator_log(module_database)
    assert sorted(r["workflow_id"] for r in log) == sorted(queue)
    for row in log:
        assert (row["operator"], row["action"]) == ("cli-operator", "RETRY_REQUESTED")
        assert row["selection"] == {"type": "support", "state": ["MANUAL_REVIEW", "RETRY_WAIT"]}
        expected = "accepted" if row["workflow_id"] in accepted else "skipped"
        assert row["outcome"] == expected

    # What is left in review with a refund standing: a cancel would reverse it, by its key.
    code, out, _ = await _interlock(*urls, "cancel", *SELECTION, "--dry-run", "--json")
    assert code == 0, out
    cancels = {p["workflow_id"]: p for p in json.loads(out)["workflows"]}
    for wf in refunded:
        assert cancels[wf]["to_state"] == "COMPENSATING"
        assert cancels[wf]["effects_to_reconcile"] == [
            {
                "state": "EXECUTING_ACTION",
                "attempt": "compensate",
                "status": "committed",
                "idempotency_key": _key(before[wf]),
            }
        ]
    code, out, _ = await _interlock(*urls, "cancel", *SELECTION, "--dry-run")
    assert code == 0
    assert f"compensate EXECUTING_ACTION under key {_key(before[refunded[0]])}" in out


async def test_pause_paused_and_resume_through_the_cli(
    e2e_settings: Settings, module_nats: str, module_database: str
) -> None:
    urls = (e2e_settings, module_nats, module_database)
    code, out, _ = await _interlock(*urls, "pause", "--type", "support", "--tenant", "acme")
    assert code == 0, out
    code, out, _ = await _interlock(*urls, "paused", "--json")
    [shown] = json.loads(out)["paused"]
    assert (shown["workflow_type"], shown["tenant_id"], shown["workflow_id"]) == (
        "support",
        "acme",
        None,
    )
    assert shown["paused_at"]
    code, out, _ = await _interlock(*urls, "resume", "--type", "support", "--json")
    assert (code, json.loads(out)["resumed"]) == (0, 1)
    code, _, err = await _interlock(*urls, "resume", "--type", "support")
    assert code == 1
    assert "nothing paused" in err
    code, _, err = await _interlock(*urls, "pause", "--type", "nope")
    assert code == 2


async def _operator_log(database_url: str) -> list[dict[str, Any]]:
    connection = await asyncpg.connect(database_url)
    try:
        rows = await connection.fetch(
            "SELECT operator, action, selection::text AS selection, workflow_id, outcome"
            " FROM operator_log WHERE action = 'RETRY_REQUESTED' ORDER BY id"
        )
    finally:
        await connection.close()
    return [{**dict(r), "selection": json.loads(r["selection"])} for r in rows]

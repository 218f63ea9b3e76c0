"""`interlock eval --shadow` against PostgreSQL: support workflows whose classify and recommend
stages really ran with the rules model (the stage on the job the projector dispatched), then
the recorded calls are asked again of a candidate. The inputs are rebuilt from the histories
(checked against each call's digest: a call whose inputs do not match is never asked), the
answers compared with the recorded accepted ones and with what the approver signed, and the
gate exits 1 under a threshold the candidate cannot reach."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import asyncpg
from typer.testing import CliRunner

from interlock import StageContext
from interlock.app.wiring import task_catalog
from interlock.cli import app
from interlock.contracts.jobs import JOB_EVENT_TYPE, JobPayload
from interlock.contracts.urls import asyncpg_dsn
from interlock.ops.evaluation import golden_cases
from interlock.projector.service import Projector
from interlock.projector.store.postgres import PostgresWorkflowStore
from interlock.services.models import model_client
from interlock.workflows.support import PLUGIN
from interlock.workflows.support.prompts import CLASSIFY
from tests.support.direct import accepted, answer, checkpoint
from tests.support.payloads import REQUEST, envelope
from tests.support.workflows import REGISTRY

RULES = model_client("rules", tasks=task_catalog(PLUGIN))
STAGES = {s.name: s for s in PLUGIN.stages}


async def _last_job(database_url: str, workflow_id: str, stage: str) -> JobPayload:
    """The job the projector last wrote to the outbox for `stage` (no relay runs here)."""
    conn = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        bodies = await conn.fetch(
            "SELECT body FROM outbox WHERE workflow_id = $1 ORDER BY id DESC", workflow_id
        )
    finally:
        await conn.close()
    for row in bodies:
        sent = json.loads(bytes(row["body"]))
        if sent["type"] == JOB_EVENT_TYPE and sent["payload"]["stage"] == stage:
            return JobPayload.model_validate(sent["payload"])
    raise AssertionError(f"no {stage} job for {workflow_id}")


async def _run_stage(
    projector: Projector, store: PostgresWorkflowStore, database_url: str, wf: str, stage: str
) -> dict[str, Any]:
    """Run the real stage on its dispatched job with the rules model; decide its result."""
    job = await _last_job(database_url, wf, stage)
    ctx = StageContext(
        workflow_type="support",
        workflow_id=wf,
        tenant_id="acme",
        job_id=job.job_id,
        attempt=job.attempt,
        idempotency_key=f"support:acme:{wf}:{stage}",
        adapters={"model": RULES},
        repair=job.repair,
    )
    result = await STAGES[stage](job.inputs, ctx)
    payload = result.model_dump(mode="json")
    await accepted(answer(projector, store, wf, result.event_name(), payload))
    return payload


async def _classified(
    projector: Projector, store: PostgresWorkflowStore, database_url: str, wf: str, ticket: Any
) -> None:
    request = {**REQUEST, "subject": ticket["subject"], "body": ticket["body"]}
    await accepted(projector.handle(envelope("START", workflow_id=wf, payload=request)))
    await _run_stage(projector, store, database_url, wf, "classify")


async def _approved(
    projector: Projector, store: PostgresWorkflowStore, database_url: str, wf: str
) -> str:
    """A workflow classified and recommended by the stages, then approved: the amount signed."""
    await _classified(projector, store, database_url, wf, REQUEST)
    for result in ("POLICY_RETRIEVED", "ACCOUNT_INSPECTED"):
        await accepted(answer(projector, store, wf, result))
    await _run_stage(projector, store, database_url, wf, "generate_recommendation")
    await accepted(answer(projector, store, wf, "POLICY_VALID"))
    data = (await checkpoint(store, wf)).data
    amount = str(data["recommendation"]["amount"])
    approval = {"recommendation_version": 1, "amount": amount}
    await accepted(projector.handle(envelope("APPROVED", workflow_id=wf, payload=approval)))
    assert (await checkpoint(store, wf)).state == "EXECUTING_ACTION"
    return amount


async def _eval(cli: CliRunner, *args: str) -> tuple[int, dict[str, Any]]:
    """The command run as from a shell (its own event loop, so in a thread of its own)."""
    done = await asyncio.to_thread(cli.invoke, app, ["eval", *args, "--shadow", "--json"])
    assert done.exception is None or isinstance(done.exception, SystemExit), done.exception
    return done.exit_code, json.loads(done.stdout)


async def test_shadow_runs_ask_the_recorded_inputs_again_and_gate_the_candidate(
    store: PostgresWorkflowStore, cli: CliRunner, database_url: str
) -> None:
    projector = Projector(store, registry=REGISTRY)
    assert CLASSIFY.golden is not None
    tickets = [case.inputs for case in golden_cases(CLASSIFY.golden)]
    for n, ticket in enumerate(tickets):
        await _classified(projector, store, database_url, f"wf-{n}", ticket)
    # A result whose recorded call was not made on the job's inputs: never asked again.
    await accepted(projector.handle(envelope("START", workflow_id="wf-canned", payload=REQUEST)))
    await accepted(answer(projector, store, "wf-canned", "CLASSIFICATION_SUCCEEDED"))

    code, same = await _eval(cli, "support.classify", "--model", "rules", "--threshold", "1")
    assert code == 0, same
    assert (same["cases"], same["schema_valid"], same["agreement"]) == (
        len(tickets),
        1.0,
        {"category": 1.0},
    )
    assert same["source"] == "shadow"
    assert same["skipped"] == {"unmatched": 1}

    code, local = await _eval(cli, "support.classify", "--model", "local", "--threshold", "1")
    assert code == 1, local
    assert local["passed"] is False
    assert local["cases"] == len(tickets)
    assert local["schema_valid"] == 1.0
    assert 0.5 < local["agreement"]["category"] < 1.0
    assert local["models"] == ["local-nb"]

    code, lenient = await _eval(
        cli, "support.classify", "--model", "local", "--threshold", "0.5", "--since", "1h"
    )
    assert code == 0, lenient
    assert lenient["agreement"] == local["agreement"]

    table = await asyncio.to_thread(
        cli.invoke, app, ["eval", "support.classify", "--shadow", "--model", "local"]
    )
    assert table.exit_code == 0, table.output
    assert "shadow run over 21 workflows' recorded calls" in table.stdout
    assert "not asked again: 1 unmatched" in table.stdout


async def test_shadow_runs_compare_with_what_the_approver_signed(
    store: PostgresWorkflowStore, cli: CliRunner, database_url: str
) -> None:
    projector = Projector(store, registry=REGISTRY)
    await _approved(projector, store, database_url, "wf-approved")

    code, found = await _eval(cli, "support.recommend", "--model", "rules", "--threshold", "1")

    assert code == 0, found
    assert found["cases"] == 1
    assert found["agreement"] == {"amount": 1.0}
    assert found["approved_agreement"] == {"amount": 1.0}
    assert found["approved_cases"] == {"amount": 1}


async def test_a_shadow_run_with_nothing_recorded_fails_the_gate(cli: CliRunner) -> None:
    code, found = await _eval(cli, "support.classify", "--model", "local")

    assert code == 1
    assert (found["cases"], found["passed"]) == (0, False)


async def test_since_without_shadow_is_refused_in_one_line(cli: CliRunner) -> None:
    done = await asyncio.to_thread(
        cli.invoke, app, ["eval", "support.classify", "--since", "1h", "--json"]
    )

    assert done.exit_code == 2
    assert "--since goes with --shadow" in done.stderr

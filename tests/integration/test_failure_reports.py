"""A failing stage says why, through PostgreSQL: the stage runtime's report of a `ValueError`
is decided by the projector, and its class and redacted message are in the audit row (`show
--json`, `show`), in `data.last_error` and on the console's workflow page, with the workflow
id; and through the broker, the real stage service fails the job at once (no redeliveries)
and logs why."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from interlock import ModelReply, ModelRequest, Result, StageContext, stage
from interlock.app.runners import components
from interlock.app.runtime import Runtime
from interlock.app.wiring import typed
from interlock.config.secrets import Secrets
from interlock.config.settings import Settings
from interlock.contracts.jobs import JobPayload
from interlock.ops.queries import open_reader, workflow_view
from interlock.projector.service import Projector
from interlock.projector.store.postgres import open_store
from interlock.services.models.rules import RulesModel
from tests.support.cli import cli, cli_env
from tests.support.console import console_settings, signed_in
from tests.support.direct import accepted, answer, checkpoint
from tests.support.harness import Harness
from tests.support.payloads import PAYLOADS, envelope, job_envelope
from tests.support.polling import eventually
from tests.support.workflows import REGISTRY

WF = "wf-buggy-8624"


class Anything(BaseModel):
    model_config = ConfigDict(extra="allow")


class Never(Result):
    __event__ = "NEVER"


def buggy(name: str) -> object:
    @stage(name, reads=Anything, emits=(Never,))
    async def run(inputs: Anything, ctx: StageContext) -> Never:
        raise ValueError("boom")

    return run


@pytest.fixture
def settings(tmp_path: object) -> Settings:
    return console_settings(Settings(home=tmp_path))


async def test_a_stage_raising_value_error_is_explained_in_audit_data_and_console(
    settings: Settings, nats_url: str, database_url: str, tmp_path: Path
) -> None:
    store = await open_store(database_url, size=2)
    try:
        projector = Projector(store, registry=REGISTRY)
        start = envelope("START", workflow_id=WF, payload=PAYLOADS["START"])
        await accepted(projector.handle(start))
        wf = await checkpoint(store, WF)
        ((job_id, open_job),) = wf.execution.open_jobs.items()
        job = JobPayload(
            job_id=job_id,
            stage=open_job.stage,
            state=wf.state,
            definition_version=wf.definition_version,
        )
        sent = job_envelope(
            "support", event_id=job_id, workflow_id=WF, occurred_at=datetime.now(UTC)
        )
        definition = REGISTRY.get("support", wf.definition_version)
        handler = typed("support", buggy(open_job.stage), {}, (definition,))  # type: ignore[arg-type]
        report = await handler(job, sent)
        await accepted(answer(projector, store, WF, report.event_type, dict(report.payload)))
    finally:
        await store.close()

    engine = open_reader(database_url)
    try:
        view = await workflow_view(engine, WF)
    finally:
        await engine.dispose()
    assert view is not None
    failed = view["audit"][-1]
    assert (failed["event_type"], failed["error_class"], failed["error_message"]) == (
        "PERMANENT_ERROR",
        "value_error",
        "ValueError: boom",
    )
    assert [a["error_class"] for a in view["audit"][:-1]] == [None]
    assert view["data"]["last_error"]["message"] == "ValueError: boom"
    assert view["data"]["last_error"]["stage"] == open_job.stage
    async with signed_in(settings, nats_url, database_url, "victor") as client:
        page = (await client.get(f"/workflows/acme/{WF}")).text
    assert WF in page
    assert "value_error: ValueError: boom" in page
    assert 'id="last-error"' in page
    env = cli_env(tmp_path, INTERLOCK_DATABASE_URL=database_url, INTERLOCK_NATS_URL=nats_url)
    code, shown = await cli(env, "show", WF, "--json")
    assert code == 0
    assert json.loads(shown)["audit"][-1]["error_class"] == "value_error"
    code, printed = await cli(env, "show", WF)
    assert code == 0
    assert "value_error: ValueError: boom" in printed
    assert "PERMANENT_ERROR (value_error)" in printed


@pytest.fixture
async def failing_classifier(
    h: Harness,
    nats_url: str,
    database_url: str,
    session_secrets: Secrets,
    monkeypatch: pytest.MonkeyPatch,
) -> AsyncIterator[Harness]:
    """The projector, the relay and the real `support.classify` stage service, whose model
    has a bug: every call raises `ValueError("boom")`."""

    async def buggy(self: RulesModel, request: ModelRequest) -> ModelReply:
        raise ValueError("boom")

    monkeypatch.setattr(RulesModel, "complete", buggy)
    runtime = Runtime(Settings(secrets_dir=session_secrets.directory), nats_url, database_url)
    stop = asyncio.Event()
    tasks = [
        asyncio.ensure_future(components()[name](runtime, stop))
        for name in ("relay", "support.classify")
    ]
    try:
        yield h
    finally:
        stop.set()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait_for(task, 15)


async def test_through_the_broker_a_buggy_stage_fails_at_once_and_says_why(
    failing_classifier: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    h = failing_classifier
    workflow_id = "wf-real-bug"
    with caplog.at_level(logging.ERROR, logger="interlock.stage"):
        await h.publish(envelope("START", workflow_id=workflow_id, payload=PAYLOADS["START"]))
        # Within 25 s: five redeliveries with backoff before an escalation took 31 s.
        view = await eventually(
            lambda: _in_state(h, workflow_id, "FAILED"), within=25.0, what="FAILED"
        )

    assert [a["event_type"] for a in view["audit"]] == ["START", "PERMANENT_ERROR"]
    failed = view["audit"][-1]
    assert (failed["event_type"], failed["error_class"], failed["error_message"]) == (
        "PERMANENT_ERROR",
        "value_error",
        "ValueError: boom",
    )
    assert view["data"]["last_error"]["system"] == "model"
    logged = [r.getMessage() for r in caplog.records if "ValueError: boom" in r.getMessage()]
    assert logged
    assert workflow_id in logged[0]
    assert "in buggy" in logged[0]  # the frames of the traceback


async def _in_state(h: Harness, workflow_id: str, state: str) -> dict[str, Any] | None:
    view = await h.find(workflow_id)
    return view if view is not None and view["state"] == state else None

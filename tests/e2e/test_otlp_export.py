"""OTLP export end to end: components as real processes export with the real OTLP/HTTP
exporter to a receiver in another process, which decodes them with opentelemetry-proto."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import nats
import pytest

from interlock.app.bootstrap import supervised
from interlock.app.composition import default_stack
from interlock.config.settings import Settings
from interlock.contracts import subjects
from interlock.contracts.envelope import Actor, Envelope, utcnow
from interlock.contracts.ids import workflow_id_for
from interlock.ops import queries
from interlock.projector.store.database import database_pool
from tests.support.payloads import REQUEST
from tests.support.polling import eventually

pytestmark = pytest.mark.timeout(180)
MESSAGING = ("messaging.system", "messaging.destination.name", "messaging.operation.type")


@pytest.fixture
def receiver(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    out = tmp_path / "spans.jsonl"
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.otlp_receiver", str(out)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        port = process.stdout.readline().strip()
        yield f"http://127.0.0.1:{port}", out
    finally:
        process.terminate()
        process.wait(10)


async def _publish(js: Any, subject: str, event: Envelope) -> None:
    # Plain, untraced publishes: the components' spans are the whole story.
    await js.publish(subject, event.to_bytes(), headers={subjects.HEADER_MSG_ID: event.event_id})


async def _one_workflow(nats_url: str, database_url: str) -> dict[str, Any]:
    event_id = f"otlp-{uuid.uuid4()}"
    workflow_id = workflow_id_for("support", "acme", event_id)
    nc = await nats.connect(nats_url)
    engine = database_pool(database_url, pool_size=1)

    def in_state(state: str) -> Callable[[], Awaitable[dict[str, Any] | None]]:
        async def probe() -> dict[str, Any] | None:
            view = await queries.workflow_view(engine, workflow_id)
            return view if view and view["state"] == state else None

        return probe

    try:
        js = nc.jetstream()
        await _publish(
            js,
            subjects.request("support", "upstream"),
            Envelope(
                event_id=event_id,
                type="START",
                workflow_type="support",
                tenant_id="acme",
                actor=Actor(id="crm", role="upstream"),
                occurred_at=utcnow(),
                payload=REQUEST,
            ),
        )

        view = await eventually(in_state("AWAITING_APPROVAL"), within=60, what="approval requested")
        await _publish(
            js,
            subjects.signal("support", "approvals"),
            Envelope(
                event_id=f"otlp-ok-{uuid.uuid4()}",
                type="APPROVED",
                workflow_type="support",
                workflow_id=workflow_id,
                tenant_id="acme",
                actor=Actor(id="alice", role="support_approver"),
                occurred_at=utcnow(),
                payload={
                    "recommendation_version": view["data"]["recommendation_version"],
                    "amount": view["data"]["recommendation"]["amount"],
                },
            ),
        )

        return await eventually(in_state("COMPLETED"), within=60, what="completion")
    finally:
        await engine.dispose()
        await nc.drain()


def _jobs_published_by_their_decisions(spans: list[dict[str, Any]]) -> None:
    """Each stage consumed a job whose PRODUCER span the projector's publish after its commit
    made, a child of the decision that wrote the job, with the relay's messaging attributes."""
    by_id = {s["span_id"]: s for s in spans}
    stages = [s for s in spans if s["name"].startswith("stage ")]
    assert len(stages) >= 5
    for stage in stages:
        job = by_id[stage["parent_span_id"]]
        subject = job["name"].removesuffix(" publish")
        assert subject == f"wf.job.support.{stage['name'].removeprefix('stage ')}"
        assert (job["kind"], job["service"]) == ("SPAN_KIND_PRODUCER", "interlock-projector")
        assert by_id[job["parent_span_id"]]["name"].startswith("projector decide ")
        attributes = job["attributes"]
        assert {k: attributes[k] for k in MESSAGING} == {
            "messaging.system": "nats",
            "messaging.destination.name": subject,
            "messaging.operation.type": "send",
        }
        outbox_id = int(attributes["interlock.outbox_id"])
        assert attributes["messaging.message.id"].endswith(f"-{outbox_id}")


async def test_spans_reach_an_otlp_receiver_with_their_parent_links(
    receiver: tuple[str, Path],
    e2e_settings: Settings,
    module_nats: str,
    module_database: str,
) -> None:
    endpoint, out = receiver
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
        patch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
        patch.setenv("OTEL_BSP_SCHEDULE_DELAY", "200")
        patch.setenv("INTERLOCK_LOCAL_TRACES", "false")
        async with supervised(e2e_settings, module_nats, module_database, default_stack("support")):
            view = await _one_workflow(module_nats, module_database)
    # The components flushed their exporters when they stopped.
    spans = [json.loads(line) for line in out.read_text().splitlines()]
    first, approval = list(dict.fromkeys(a["trace_id"] for a in view["audit"]))
    request_trace = [s for s in spans if s["trace_id"] == first]
    ids = {s["span_id"] for s in request_trace}
    assert all(s["parent_span_id"] in ids for s in request_trace if s["parent_span_id"])
    assert [s["name"] for s in request_trace if not s["parent_span_id"]] == [
        "projector decide START"
    ]
    services = {s["service"] for s in request_trace}
    assert {"interlock-projector", "interlock-support.classify"} <= services
    _jobs_published_by_their_decisions(request_trace)
    decided = [
        s for s in spans if s["trace_id"] == approval and s["name"] == "projector decide APPROVED"
    ]
    assert len(decided) == 1
    assert decided[0]["links"] == [first]  # the untraced approval links to the request's trace

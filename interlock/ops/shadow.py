"""Shadow runs: the cases of `interlock eval --shadow`, rebuilt from recorded histories.

A recorded model call keeps the digest of its inputs (`input_digest`), not the inputs. The
exact inputs are rebuilt the way they were first built: the workflow's history is decided
again by the engine (`replay.redecided`), which yields the job the projector dispatched, with
the inputs it read from the workflow's data at that version; the plugin's stage then runs on
that job with a model client that only captures the request the stage makes and stops it. A
case is kept only when the captured inputs have the recorded digest — otherwise the stage
today would not ask what it asked then, and the case is counted as `unmatched`, never
guessed. Nothing but the model port is bound: a stage that reaches another system before
asking (or acts on the outside world, `effects`) is counted `unreplayable`, and nothing
outside is called.

Each case expects the fields of the recorded accepted answer to the same inputs (the last
valid or repaired one) and, where the task names them (`ModelTask.approved`), the values a
person settled in the workflow's data afterwards. The inputs stay in memory: nothing of them
is logged or reported.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from interlock._sdk.models import ModelTask, input_digest
from interlock._sdk.plugin import Plugin
from interlock._sdk.stages import StageContext, StageLike
from interlock.contracts.jobs import JOB_EVENT_TYPE, JobPayload
from interlock.contracts.model_calls import ACCEPTED_CALLS, ModelCallRecord
from interlock.contracts.registry import Registry
from interlock.ops.errors import RequestCaptured
from interlock.ops.evaluation import Case
from interlock.projector.engine import Workflow
from interlock.projector.replay import redecided
from interlock.projector.store.histories import read_histories
from interlock.projector.store.records import HistoryRecord
from interlock.services.ports import ModelReply, ModelRequest

MAX_WORKFLOWS = 1_000
"""The most recent workflows a shadow run reads, at most."""


@dataclass
class ShadowCases:
    cases: list[Case] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    """Recorded calls not asked again, by why: `unmatched`, `unreplayable`, `no_job`."""
    workflows: int = 0


class _Capture:
    async def complete(self, request: ModelRequest) -> ModelReply:
        raise RequestCaptured(request)


@dataclass(frozen=True)
class Dispatched:
    """A job a decision dispatched, with what its stage context is built from."""

    job: JobPayload
    correlation_id: str | None
    workflow_type: str
    tenant_id: str
    workflow_id: str


async def shadow_cases(
    database_url: str,
    plugin: Plugin,
    registry: Registry,
    task: ModelTask,
    *,
    since: datetime | None = None,
    fields: Sequence[str] = (),
    limit: int = MAX_WORKFLOWS,
) -> ShadowCases:
    """The cases of `task` recorded in the histories of `plugin`'s workflows that decided
    something since `since`, comparing `fields` of the recorded answers (all when empty)."""
    histories = await read_histories(
        database_url, workflow_type=plugin.workflow_type, since=since, limit=limit
    )
    stages = {s.name: s for s in plugin.stages}
    found = ShadowCases()
    for history in histories:
        jobs, final = _replayed(history, registry)
        if final is None:
            continue
        calls = [
            r
            for r in final.execution.model_calls
            if r.task == task.name and (since is None or r.at >= since)
        ]
        found.workflows += bool(calls)
        pointers = set((final.data.get(ACCEPTED_CALLS) or {}).values())
        for first, answer in _by_inputs(calls):
            dispatched = jobs.get(first.job_id or "")
            handler = stages.get(first.stage or "")
            if dispatched is None or handler is None:
                found.skipped["no_job"] += 1
                continue
            request = await captured_request(handler, dispatched)
            if request is None:
                found.skipped["unreplayable"] += 1
            elif input_digest(request.inputs) != first.input_digest:
                found.skipped["unmatched"] += 1
            else:
                expected = _fields(answer.output, fields) if answer is not None else {}
                # What a person settled is about the answer the workflow went on with.
                went_on = answer is not None and answer.seq in pointers
                approved = _approved(final.data, task.approved) if went_on else {}
                found.cases.append(Case(dict(request.inputs), expected, approved, request.case_key))
    return found


def _replayed(
    history: Sequence[HistoryRecord], registry: Registry
) -> tuple[dict[str, Dispatched], Workflow | None]:
    """The jobs the history's decisions dispatched, by id, and the workflow they ended at."""
    jobs: dict[str, Dispatched] = {}
    final: Workflow | None = None
    for _, _, decision in redecided(history, registry):
        if not decision.accepted:
            continue
        final = decision.workflow
        for message in decision.messages:
            if message.envelope.type == JOB_EVENT_TYPE:
                job = JobPayload.model_validate(message.envelope.payload)
                jobs[job.job_id] = Dispatched(
                    job,
                    message.envelope.correlation_id,
                    final.workflow_type,
                    final.tenant_id,
                    final.workflow_id,
                )
    return jobs, final


def _by_inputs(
    calls: Sequence[ModelCallRecord],
) -> list[tuple[ModelCallRecord, ModelCallRecord | None]]:
    """Per distinct inputs, the first call given them and the last answer accepted for them."""
    first: dict[str, ModelCallRecord] = {}
    accepted: dict[str, ModelCallRecord] = {}
    for record in calls:
        first.setdefault(record.input_digest or "", record)
        if record.verdict != "invalid":
            accepted[record.input_digest or ""] = record
    return [(record, accepted.get(digest)) for digest, record in first.items()]


async def captured_request(handler: StageLike, dispatched: Dispatched) -> ModelRequest | None:
    """The request `handler` makes on the job, with only its model ports bound; None when it
    makes none (it reached another port, failed, or answered without asking)."""
    if handler.effects:
        return None  # a stage that acts on the outside world is never run again here
    job = dispatched.job
    ctx = StageContext(
        workflow_type=dispatched.workflow_type,
        workflow_id=dispatched.workflow_id,
        tenant_id=dispatched.tenant_id,
        job_id=job.job_id,
        attempt=job.attempt,
        idempotency_key="",
        adapters={p.name: _Capture() for p in handler.ports if p.asks_model},
        correlation_id=dispatched.correlation_id,
        repair=job.repair,
    )
    try:
        await handler(job.inputs, ctx)
    except RequestCaptured as asked:
        return asked.request
    except Exception:  # any other way out: no request to shadow
        return None
    return None


def compared_fields(task: ModelTask, golden: Sequence[Case] = ()) -> tuple[str, ...]:
    """The output fields a shadow run compares: the golden set's expected fields, else the
    label the local model learns, else the fields a person settles; none means every field."""
    expected = sorted({f for case in golden for f in case.expected})
    if expected:
        return tuple(expected)
    if task.label is not None:
        return (task.label,)
    return tuple(task.approved)


def _fields(output: Mapping[str, Any], fields: Sequence[str]) -> dict[str, Any]:
    return {k: v for k, v in output.items() if not fields or k in fields}


def _approved(data: Mapping[str, Any], paths: Mapping[str, str]) -> dict[str, Any]:
    found = {}
    for name, path in paths.items():
        value: Any = data
        for part in path.split("."):
            value = value.get(part) if isinstance(value, Mapping) else None
        if value is not None:
            found[name] = value
    return found

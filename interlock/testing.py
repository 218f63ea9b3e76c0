"""`WorkflowTestEnv`: run a plugin's workflow in-process, without a broker or a database.

The real transition engine and projector decide every event against an in-memory store; an
in-memory bus delivers each dispatched job to the plugin's stage (bound to the adapters the
test gives), and a fake clock fires timers when the test advances it. What the real runtime
refuses is refused here too (its errors are in `interlock.errors`): a plugin the runtime
would not load raises `PluginError` when the env is built (`interlock.validate`: the graph
check, guards nobody provides, stages against the definition), an unknown event raises
`MalformedMessage`, a guard refusal or a stale result comes back as a rejected
`EventOutcome`. A stage fails as under the runtime: an exception the stage worker would have
redelivered is redelivered (at once: the broker's backoff is not waited for), and after the
runtime's last delivery the job submits what the stage worker would (`RETRYABLE_ERROR` where
a redelivered stage's state retries durably, else `ESCALATE`); nothing a stage raises
escapes `run`.

```python
async def test_greets() -> None:
    env = WorkflowTestEnv(PLUGIN, adapters={"greeter": FakeGreeter()})
    wf = await env.start({"name": "Ada"})
    await env.run()
    assert await env.state(wf) == "GREETED"
```
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import asdict
from datetime import UTC, datetime, timedelta

from interlock._sdk.plugin import Plugin
from interlock.app.wiring import worker
from interlock.config.plugins import validate
from interlock.contracts import subjects
from interlock.contracts.envelope import Actor, Envelope, parse_envelope
from interlock.contracts.jobs import JobPayload
from interlock.contracts.registry import Registry
from interlock.projector.door import OccurredWindow
from interlock.projector.engine.model import Workflow as Checkpoint
from interlock.projector.service import EventOutcome, Projector
from interlock.projector.store.memory import InMemoryWorkflowStore
from interlock.projector.store.records import AuditRecord
from interlock.relay.timers import firing
from interlock.services.runtime.results import result_event
from interlock.services.runtime.stage import StageResult, StageWorker, after_failure

__all__ = ["EventOutcome", "WorkflowTestEnv"]

UPSTREAM = Actor(id="test-upstream", role="upstream")


class WorkflowTestEnv:
    """One plugin's workflows, decided and run in this process (see the module's example).

    `adapters`: port name -> adapter for the stages (fakes, or real clients of a test server);
    `parameters`: overrides of definition parameters, as `INTERLOCK_PARAMETERS` would give.
    Raises `PluginError` for a plugin the runtime would refuse to load.
    """

    def __init__(
        self,
        plugin: Plugin,
        *,
        adapters: Mapping[str, object] | None = None,
        parameters: Mapping[str, object] | None = None,
        tenant_id: str = "test",
        now: datetime | None = None,
    ) -> None:
        validate(plugin)
        self.plugin = plugin
        self.tenant_id = tenant_id
        self.now = now or datetime(2030, 1, 1, tzinfo=UTC)
        self.store = InMemoryWorkflowStore(clock=lambda: self.now)
        self.registry = Registry(
            plugin.definitions,
            guards={plugin.workflow_type: plugin.guard_predicates()},
            keys={plugin.workflow_type: plugin.workflow_key} if plugin.workflow_key else None,
        )
        self.projector = Projector(
            self.store,
            registry=self.registry,
            clock=lambda: self.now,
            rand=lambda: 0.5,
            parameters={plugin.workflow_type: dict(parameters or {})},
            # Timestamps are bounded around the harness's own clock, not the wall clock.
            occurred_window=OccurredWindow(clock=lambda: self.now),
        )
        bound, definitions = dict(adapters or {}), plugin.definitions
        self._stages = {
            s.name: worker(plugin.workflow_type, s, bound, definitions) for s in plugin.stages
        }
        self.published: list[Envelope] = []
        """Everything the workflows announced on `wf.out.…`, in order."""
        self._delivered = 0

    # --- driving -------------------------------------------------------------------------

    async def start(self, payload: Mapping[str, object], *, event_id: str | None = None) -> str:
        """Send the start request; the new workflow's id (the request is not yet worked on:
        call `run`)."""
        definition = self.registry.latest(self.plugin.workflow_type)
        outcome = await self.send(definition.start_event, payload, event_id=event_id)
        return outcome.workflow_id

    async def send(
        self,
        event_type: str,
        payload: Mapping[str, object],
        *,
        workflow_id: str | None = None,
        actor: Actor = UPSTREAM,
        event_id: str | None = None,
    ) -> EventOutcome:
        """Decide one request or signal as the projector would."""
        return await self.projector.handle(
            Envelope(
                event_id=event_id or str(uuid.uuid4()),
                type=event_type,
                workflow_type=self.plugin.workflow_type,
                workflow_id=workflow_id,
                tenant_id=self.tenant_id,
                actor=actor,
                occurred_at=self.now,
                payload=dict(payload),
            )
        )

    async def run(self, *, max_steps: int = 1000) -> list[EventOutcome]:
        """Deliver every message the workflows committed (jobs run their stage and their
        result is decided) until nothing is left; the outcomes of the results, in order."""
        outcomes: list[EventOutcome] = []
        for _ in range(max_steps):
            pending = self.store.outbox()[self._delivered :]
            if not pending:
                return outcomes
            self._delivered += 1
            subject = pending[0].subject
            if subject.startswith(f"{subjects.JOB_PREFIX}."):
                outcomes.append(await self.deliver(pending[0].body))
            elif subject.startswith(f"{subjects.OUT_PREFIX}."):
                self.published.append(parse_envelope(pending[0].body))
        raise RuntimeError(f"still busy after {max_steps} messages: a loop without a bound?")

    async def advance(self, seconds: float) -> list[EventOutcome]:
        """Move the clock on, fire the timers now due, then `run`."""
        self.now += timedelta(seconds=seconds)
        outcomes = []
        for timer in self.store.timers():
            if timer.status == "armed" and timer.fire_at <= self.now:
                # the timer service's own firing, from the row it would read
                row = {**asdict(timer), "headers": json.dumps(dict(timer.headers)), "seal": "x"}
                fired = parse_envelope(firing(row, self.now).body)
                outcomes.append(await self.projector.handle(fired))
        return [*outcomes, *await self.run()]

    async def deliver(self, job_message: bytes) -> EventOutcome:
        """Run the stage on one job message (as the bus would, again if it already did;
        redelivered while it fails, as the broker would) and decide its result."""
        job_envelope = parse_envelope(job_message)
        job = JobPayload.model_validate(job_envelope.payload)
        stage = self._stages.get(job.stage)
        if stage is None:
            raise LookupError(f"{self.plugin.workflow_type} has no stage {job.stage!r}")
        result = await self._delivered_until_answered(stage, job, job_envelope)
        return await self.projector.handle(
            result_event(stage, job_envelope, job, result, occurred_at=self.now)
        )

    async def _delivered_until_answered(
        self, stage: StageWorker, job: JobPayload, job_envelope: Envelope
    ) -> StageResult:
        """The stage's result for the job, redelivered as the broker would while it fails;
        the runtime's answer after the last delivery (`after_failure`)."""
        delivered = 0
        while True:
            delivered += 1
            try:
                return await stage.handler(job, job_envelope)
            except Exception as exc:
                given_up = after_failure(stage, exc, job, job_envelope, delivered)
                if given_up is not None:
                    return given_up

    # --- what a test reads back --------------------------------------------------------

    async def workflow(self, workflow_id: str) -> Checkpoint:
        """The workflow's checkpoint (state, version, data, execution)."""
        stored = await self.store.load(self.tenant_id, workflow_id)
        if stored is None:
            raise LookupError(f"no workflow {workflow_id}")
        return stored.workflow

    async def state(self, workflow_id: str) -> str:
        return (await self.workflow(workflow_id)).state

    async def data(self, workflow_id: str) -> dict[str, object]:
        return dict((await self.workflow(workflow_id)).data)

    def audit(self, workflow_id: str) -> list[AuditRecord]:
        """Every decided event of the workflow, accepted and refused, in order."""
        return self.store.audit(workflow_id, self.tenant_id)

    def armed_timers(self, workflow_id: str) -> list[str]:
        return [
            t.kind for t in self.store.timers(workflow_id, self.tenant_id) if t.status == "armed"
        ]

"""Wiring of stage handlers to their adapters: the one place ports meet implementations.

A workflow type's plugin declares its ports with a default adapter; this binds each port to
an adapter and turns the plugin's stages into the stage workers the runtime serves.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nats.aio.client import Client
from pydantic import ValidationError

from interlock._sdk.plugin import Plugin
from interlock._sdk.ports import AdapterContext
from interlock._sdk.stages import StageContext, StageLike
from interlock.app.bindings import chosen
from interlock.app.runtime import Runtime
from interlock.config.plugins import installed
from interlock.contracts.definition import WorkflowDefinition
from interlock.contracts.envelope import Envelope
from interlock.contracts.jobs import JobPayload
from interlock.services.errors import (
    ExternalRejected,
    ExternalTimeout,
    ExternalUnavailable,
    OutcomeUnknown,
    invalid_fields,
)
from interlock.services.models import LocalTask, PromptTemplate, TaskCatalog, model_client
from interlock.services.models.pricing import PricedModel
from interlock.services.ports import ModelClient
from interlock.services.runtime.calls import refused, transient
from interlock.services.runtime.failing import error_class, report, retryable
from interlock.services.runtime.stage import Handler, StageResult, StageWorker

log = logging.getLogger("interlock.stage")


def model_from_settings(rt: Runtime, plugin: Plugin) -> ModelClient:
    """The model client for `plugin`'s stages (its workflow type's entry in `models`, else
    `model`), serving the model tasks the plugin declares."""
    s = rt.settings
    client: ModelClient = model_client(
        s.models.get(plugin.workflow_type, s.model),
        tasks=task_catalog(plugin),
        base_url=s.openai_base_url,
        model=s.openai_model,
        api_key=s.openai_api_key.get_secret_value() if s.openai_api_key else None,
        timeout=s.model_timeout,
    )
    return PricedModel(client, s.model_prices)


def task_catalog(plugin: Plugin) -> TaskCatalog:
    """The prompts and rules of the model tasks `plugin` declares, as the model clients take
    them."""
    return TaskCatalog(
        templates={
            p.version: PromptTemplate(version=p.version, task=t.name, instructions=p.instructions)
            for t in plugin.model_tasks
            for p in t.prompts
        },
        rules={t.name: t.rules for t in plugin.model_tasks if t.rules is not None},
        local={
            t.name: LocalTask(examples=t.examples, label=t.label, faults=t.faults)
            for t in plugin.model_tasks
            if t.examples is not None and t.label is not None
        },
    )


def stage_handlers(rt: Runtime, nc: Client, workflow_type: str) -> dict[str, StageWorker]:
    """The stages of `workflow_type`, wired to the configured model and external systems."""
    plugin = installed().plugin(workflow_type)
    adapters = bind(plugin, rt, nc)
    first = rt.settings.stage_redelivery_s
    return {
        s.name: worker(workflow_type, s, adapters, plugin.definitions, redelivery_s=first)
        for s in plugin.stages
    }


def worker(
    workflow_type: str,
    stage: StageLike,
    adapters: Mapping[str, Any],
    definitions: Sequence[WorkflowDefinition] = (),
    *,
    redelivery_s: float = 1.0,
) -> StageWorker:
    """The stage worker serving a typed stage, its ports bound to `adapters` (the runtime's
    and `interlock.testing`'s alike); a failed job is first redelivered after `redelivery_s`."""
    handler = TypedHandler(
        workflow_type, stage, _bound(stage, adapters), {d.version: d for d in definitions}
    )
    return StageWorker(
        workflow_type,
        stage.name,
        handler,
        effects=stage.effects,
        exhausted=handler.exhausted,
        redelivery_s=redelivery_s,
    )


def bind(plugin: Plugin, rt: Runtime, nc: Client) -> dict[str, Any]:
    """Every port of `plugin` bound to its adapter: the generic one `INTERLOCK_ADAPTERS`
    picks by kind, else the plugin's default, built with the port's configuration."""
    found: dict[str, Any] = {}
    for port in plugin.ports:
        configured = rt.settings.adapters.get(plugin.workflow_type, {}).get(port.name, {})
        build, config = chosen(port, configured, plugin.workflow_type)
        ctx = AdapterContext(
            workflow_type=plugin.workflow_type,
            port=port.name,
            nats=nc,
            timeout=rt.settings.external_timeout,
            config=config,
            model=lambda: model_from_settings(rt, plugin),
            home=rt.settings.home.resolve(),
        )
        found[port.name] = build(ctx)
    return found


def typed(
    workflow_type: str,
    stage: StageLike,
    adapters: Mapping[str, Any],
    definitions: Sequence[WorkflowDefinition] = (),
) -> Handler:
    """The runtime's handler for a typed stage, bound to the adapters of its ports; its
    workflow type's `definitions` say which failure event a job's state takes."""
    return TypedHandler(
        workflow_type, stage, _bound(stage, adapters), {d.version: d for d in definitions}
    )


def _bound(stage: StageLike, adapters: Mapping[str, Any]) -> dict[str, Any]:
    """The adapters of `stage`'s ports; one not given fails when the stage asks for it
    (`StageContext.port`), as in a test that fakes only what its stage calls."""
    return {p.name: adapters[p.name] for p in stage.ports if p.name in adapters}


@dataclass(frozen=True)
class TypedHandler:
    """Runs a typed stage on a job: its result, or the failure event a port's error stands
    for (transient -> `RETRYABLE_ERROR` unless the stage is redelivered instead, refused ->
    `PERMANENT_ERROR`), or that an unexpected exception stands for (see `unexpected`)."""

    workflow_type: str
    stage: StageLike
    adapters: Mapping[str, Any]
    definitions: Mapping[int, WorkflowDefinition] = field(default_factory=dict)

    async def __call__(self, job: JobPayload, envelope: Envelope) -> StageResult:
        stage = self.stage
        ctx = StageContext(
            workflow_type=self.workflow_type,
            workflow_id=envelope.workflow_id or "",
            tenant_id=envelope.tenant_id,
            job_id=job.job_id,
            attempt=job.attempt,
            idempotency_key=f"{self.workflow_type}:{envelope.tenant_id}:{envelope.workflow_id}:"
            f"{stage.name}",
            adapters=self.adapters,
            correlation_id=envelope.correlation_id,
            repair=job.repair,
        )
        try:
            result = await stage(job.inputs, ctx)
        except (ExternalTimeout, ExternalUnavailable) as exc:
            if stage.redeliver:
                raise
            return transient(exc, stage.system or stage.name)
        except ExternalRejected as exc:
            return refused(exc, stage.system or stage.name)
        except ValidationError as exc:
            self._report(exc, job, envelope)
            # The fields, never their values: a validation error's text quotes them.
            failed = {"error_class": "invalid_stage_inputs", "system": stage.system or stage.name}
            failed["detail"] = f"ValidationError: {invalid_fields(exc)}"
            return StageResult("PERMANENT_ERROR", failed)
        except Exception as exc:
            return self.unexpected(exc, job, envelope)
        return StageResult(result.event_name(), result.model_dump(mode="json"))

    def unexpected(self, exc: Exception, job: JobPayload, envelope: Envelope) -> StageResult:
        """An exception the stage did not declare transient is a bug or a refusal that will
        recur: redelivering it five times only delays the failure. It becomes the job's
        `PERMANENT_ERROR` (its class as `error_class`, its redacted message as `detail`), or
        `ESCALATE` where the job's state takes no `PERMANENT_ERROR`. Raised for redelivery,
        as before: a `retryable` exception, and any exception of a stage that acts on the
        outside world (`effects`, `redeliver`), whose redelivery reconciles the effect by
        its key instead of declaring an effect that may have happened failed."""
        stage = self.stage
        event = self._failure_event(job)
        if retryable(exc) or stage.effects or stage.redeliver or event is None:
            raise exc
        text = self._report(exc, job, envelope)
        if event == "ESCALATE":
            return StageResult(event, {"reason": "stage_failed", "detail": text})
        system = stage.system or stage.name
        return StageResult(
            event, {"error_class": error_class(exc), "detail": text, "system": system}
        )

    def exhausted(self, exc: Exception, job: JobPayload) -> StageResult | None:
        """A redelivered stage's transient failure (`ExternalTimeout`, `ExternalUnavailable`)
        that outlasted its deliveries: the `RETRYABLE_ERROR` it would have reported without
        `redeliver`, where the job's state takes one, so the state's durable retry
        (`Workflow.retrying`) takes over. None otherwise (the stage escalates; an effect whose
        outcome is unknown always does, with its key)."""
        if not isinstance(exc, ExternalTimeout | ExternalUnavailable):
            return None
        if isinstance(exc, OutcomeUnknown):
            return None
        definition = self.definitions.get(job.definition_version)
        if definition is None or not definition.transitions_from(job.state, "RETRYABLE_ERROR"):
            return None
        return transient(exc, self.stage.system or self.stage.name)

    def _report(self, exc: Exception, job: JobPayload, envelope: Envelope) -> str:
        """Log the failure (workflow id, redacted message, frames) and mark the span."""
        what = f"{self.stage.name} fails job {job.job_id}"
        wf_id = envelope.workflow_id
        return report(log, logging.ERROR, what, exc, workflow_id=wf_id, inputs=job.inputs)

    def _failure_event(self, job: JobPayload) -> str | None:
        """`PERMANENT_ERROR` if the job's state takes it (or the definition is not known
        here), else `ESCALATE` if it takes that, else None."""
        definition = self.definitions.get(job.definition_version)
        if definition is None:
            return "PERMANENT_ERROR"
        for event in ("PERMANENT_ERROR", "ESCALATE"):
            if definition.transitions_from(job.state, event):
                return event
        return None

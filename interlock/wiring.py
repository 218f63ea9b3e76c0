"""Wiring of stage handlers to their adapters: the one place ports meet implementations."""

from __future__ import annotations

from nats.aio.client import Client

from interlock.runtime import Runtime
from interlock.services.adapters.sim import (
    SimAccountApi,
    SimActionProvider,
    SimEffectProvider,
    SimNotifier,
    SimPolicyStore,
)
from interlock.services.models import model_client
from interlock.services.ports import ModelClient
from interlock.services.request import RequestPorts
from interlock.services.request import stages as request_stages
from interlock.services.runtime.stage import StageWorker
from interlock.services.support import SupportPorts
from interlock.services.support import stages as support_stages


def model_from_settings(rt: Runtime, workflow_type: str | None = None) -> ModelClient:
    """The model client for `workflow_type`'s stages: its entry in `models`, else `model`."""
    s = rt.settings
    client: ModelClient = model_client(
        s.models.get(workflow_type or "", s.model),
        base_url=s.openai_base_url,
        model=s.openai_model,
        api_key=s.openai_api_key.get_secret_value() if s.openai_api_key else None,
        timeout=s.model_timeout,
    )
    return client


def stage_handlers(rt: Runtime, nc: Client, workflow_type: str) -> dict[str, StageWorker]:
    """The stages of `workflow_type`, wired to the configured model and external systems."""
    builders = {"support": _support_stages, "request": _request_stages}
    if workflow_type not in builders:
        raise ValueError(f"no stage services for workflow type {workflow_type!r}")
    return builders[workflow_type](rt, nc)


def _support_stages(rt: Runtime, nc: Client) -> dict[str, StageWorker]:
    timeout = rt.settings.external_timeout
    ports = SupportPorts(
        model=model_from_settings(rt, "support"),
        accounts=SimAccountApi(nc, timeout=timeout),
        policies=SimPolicyStore(nc, timeout=timeout),
        actions=SimActionProvider(nc, timeout=timeout),
        notifier=SimNotifier(nc, timeout=timeout),
    )
    return support_stages(ports)


def _request_stages(rt: Runtime, nc: Client) -> dict[str, StageWorker]:
    effects = SimEffectProvider(nc, timeout=rt.settings.external_timeout)
    return request_stages(RequestPorts(model=model_from_settings(rt, "request"), effects=effects))

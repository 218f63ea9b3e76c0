"""What each component process is given: exactly the settings it reads (read back the same
by the child), the keys only it may hold, the model and the effects its stages are
wired to."""

from __future__ import annotations

from pathlib import Path

import pytest

from interlock.app import wiring
from interlock.app.childenv import child_environment, settings_of
from interlock.app.runners import components
from interlock.app.runtime import Runtime
from interlock.config import access
from interlock.config.components import model_stages
from interlock.config.settings import Settings
from interlock.services.runtime.stage import StageWorker
from tests.support.workflows import REGISTRY


@pytest.fixture(autouse=True)
def _own_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Credentials a test makes stay in its own directory."""
    monkeypatch.setenv("INTERLOCK_SECRETS_DIR", str(tmp_path / "secrets"))


def _child_settings(component: str, parent: Settings, monkeypatch: pytest.MonkeyPatch) -> Settings:
    env = child_environment(parent, component, "nats://x:y@h:1", "postgresql://r:p@h/db")
    for key in Settings.model_fields:
        monkeypatch.delenv(f"INTERLOCK_{key.upper()}", raising=False)
    for key, value in env.items():
        if key.startswith("INTERLOCK_"):
            monkeypatch.setenv(key, value)
    return Settings()


@pytest.mark.parametrize("component", ["projector", "relay", "gateway", "support.classify"])
def test_a_child_reads_back_exactly_the_settings_it_is_given(
    component: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    parent = Settings.model_validate(
        {
            "parameters": {"support": {"approval_sla_seconds": 6}},
            "openai_api_key": "sk-1",
            "gateway_senders": {
                "t": {
                    "secret": "whsec_AAAA",
                    "roles": ["support_approver"],
                    "tenants": ["acme"],
                    "actors": ["*"],
                }
            },
            "stage_workers": 3,
            "insecure_nats": True,
            "occurred_at_future_s": 60.0,
            "event_loop": "asyncio",
        }
    )
    child = _child_settings(component, parent, monkeypatch)
    assert child.event_loop == "asyncio"  # every component runs on the loop it is told

    for name in settings_of(component):
        if name != "home":
            assert getattr(child, name) == getattr(parent, name), name
    assert child.home == parent.home.resolve()
    if component == "projector":  # the bound on occurred_at is the projector's to apply
        assert (child.occurred_at_future_s, "occurred_at_future_s" in settings_of(component)) == (
            60.0,
            True,
        )


def test_the_projector_is_given_the_client_policies(monkeypatch: pytest.MonkeyPatch) -> None:
    child = _child_settings("projector", Settings(), monkeypatch)

    assert child.clients == access.client_policies(Settings())


def test_the_model_stages_are_the_stages_wired_to_a_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = object()
    monkeypatch.setattr(wiring, "model_from_settings", lambda rt, plugin: model)
    rt = Runtime(Settings(), "nats://h:1")
    wired = {
        f"{workflow_type}.{name}"
        for workflow_type in REGISTRY.workflow_types()
        for name, stage in wiring.stage_handlers(rt, None, workflow_type).items()  # type: ignore[arg-type]
        if model in _bound(stage.handler)
    }

    assert wired == model_stages()


def _bound(handler: object) -> list[object]:
    """The adapters a stage's handler is bound to."""
    return list(getattr(handler, "adapters", {}).values())


def test_only_the_projector_holds_the_job_signing_key() -> None:
    envs = {
        name: child_environment(Settings(), name, "nats://x:y@h:1", None)
        for name in ("projector", "relay", "gateway", "support.execute_action")
    }

    assert "PRIVATE KEY" in envs["projector"]["INTERLOCK_JOB_SIGNING_KEY"]
    holders = {name for name, env in envs.items() if "INTERLOCK_JOB_SIGNING_KEY" in env}
    assert holders == {"projector"}
    assert "PUBLIC KEY" in envs["support.execute_action"]["INTERLOCK_JOB_PUBLIC_KEY"]


def test_every_setting_reaches_the_components_that_read_it() -> None:
    """A setting no component is given would be silently ignored under `up`. The URLs, the
    client policies, the job-signing and sender-claim keys are handed to the components that
    need them in their own form; where the credentials live stays with the supervisor (and the
    console, which keeps its session key there and sends as the CLI's client); the streams'
    replica count is the provisioning's (`up`, `run` and `migrate` apply it before any
    component)."""
    given = {name for component in components() for name in settings_of(component)}

    assert set(Settings.model_fields) - given == {
        "nats_url",
        "database_url",
        "clients",
        "job_signing_key",
        "job_public_key",
        "gateway_claims_key",
        "gateway_claims_public_key",
        "stage_host",  # how `up` and `bench` compose the stack, read by them
        "projector_host",
        "stream_replicas",
    }
    assert "secrets_dir" in settings_of("console")


def test_the_stages_with_effects_are_the_ones_that_act_and_keep_their_heartbeat() -> None:
    rt = Runtime(Settings(), "nats://h:1")
    workers = {
        f"{workflow_type}.{name}": worker
        for workflow_type in REGISTRY.workflow_types()
        for name, worker in wiring.stage_handlers(rt, None, workflow_type).items()  # type: ignore[arg-type]
    }

    effectful = {name for name, worker in workers.items() if worker.effects}
    assert effectful == {
        "request.compensate_effect",
        "request.execute_effect",
        "support.compensate",
        "support.execute_action",
        "support.notify_customer",
    }
    assert {w.heartbeat_s for w in workers.values()} == {StageWorker.heartbeat_s}

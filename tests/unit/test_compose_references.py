"""The docker-compose deployment against the code: every registered component and every
stage deployed and nothing unknown, services named, checked and restarted consistently, the
demo's parameters its own — and every setting and OTel variable it names one the code reads,
pointing at the services and collector ports that exist."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import opentelemetry.sdk.environment_variables as otel_variables
import pytest

from interlock.app.runners import components
from interlock.config.access import database_role
from interlock.config.settings import Settings
from interlock.contracts.urls import nats_servers
from interlock.tools.demo import demo_environment
from tests.support.compose_files import (
    COMPOSE,
    DOCKERFILE,
    collector,
    command,
    component_services,
    compose,
    environment,
    interlock_services,
    published_ports,
    services,
)
from tests.support.workflows import STAGES

_VARIABLE = re.compile(r"\$(?:\$|\{(?P<name>\w+)(?::?-(?P<default>[^}]*))?\}|(?P<bare>\w+))")


def with_defaults(value: str) -> str:
    """`value` as Compose interpolates it when no variable is set: each `${VAR:-default}`."""

    def substitute(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name = match.group("name") or match.group("bare")
        assert match.group("default") is not None, f"{value!r}: ${name} has no default"
        return match.group("default")

    return _VARIABLE.sub(substitute, value)


# --- Interlock components ----------------------------------------------------------------


def test_every_deployed_component_is_registered() -> None:
    known = components()
    unknown = {n: c for n, c in component_services().items() if c not in known}
    assert not unknown, f"`interlock service NAME` would refuse these: {unknown}"


def test_every_registered_component_is_deployed() -> None:
    missing = set(components()) - set(component_services().values())
    assert not missing, f"no compose service runs {sorted(missing)}"


def test_every_stage_of_every_definition_is_deployed() -> None:
    stages = {f"{workflow_type}.{stage}" for workflow_type, stage in STAGES}
    missing = stages - set(component_services().values())
    assert not missing, f"stages without a compose service: {sorted(missing)}"


def test_the_gateway_is_deployed_on_port_8080() -> None:
    gateway = services()["gateway"]
    assert command(gateway) == ["service", "gateway"]
    assert 8080 in published_ports(gateway)


@pytest.mark.parametrize(("service", "component"), sorted(component_services().items()))
def test_component_service_is_named_checked_and_restarted_consistently(
    service: str, component: str
) -> None:
    svc = services()[service]
    assert service == re.sub(r"[._]", "-", component)
    assert svc["healthcheck"]["test"] == ["CMD", "interlock", "health", component]
    assert environment(svc)["OTEL_SERVICE_NAME"] == f"interlock-{component}"
    assert svc["restart"] == "unless-stopped"
    conditions = {k: v["condition"] for k, v in svc["depends_on"].items()}
    assert conditions["migrate"] == "service_completed_successfully"
    assert conditions["nats"] == conditions["postgres"] == "service_healthy"


def test_migrate_runs_once_before_the_components() -> None:
    migrate = services()["migrate"]
    assert command(migrate) == ["migrate"]
    assert migrate["restart"] == "no"


def test_demo_parameters_are_the_demos_own() -> None:
    assert compose()["x-demo-parameters"] == demo_environment()


# --- settings and environment ------------------------------------------------------------


def test_every_interlock_variable_is_a_settings_field() -> None:
    prefix = str(Settings.model_config.get("env_prefix", "")).upper()
    fields = {prefix + name.upper() for name in Settings.model_fields}
    text = COMPOSE.read_text(encoding="utf-8") + DOCKERFILE.read_text(encoding="utf-8")
    unknown = set(re.findall(r"\bINTERLOCK_[A-Z0-9_]+", text)) - fields
    assert not unknown, f"not Settings fields: {sorted(unknown)}"


@pytest.mark.parametrize("service", sorted(interlock_services()))
def test_interlock_environment_is_accepted_by_settings(
    service: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {k: with_defaults(v) for k, v in environment(services()[service]).items()}
    for key in Settings.model_fields:
        monkeypatch.delenv(f"INTERLOCK_{key.upper()}", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    loaded = Settings()
    assert urlsplit(loaded.nats_url or "").hostname in services()
    if loaded.database_url is not None:
        assert urlsplit(loaded.database_url).hostname in services()


def test_the_cluster_seeds_shown_in_the_header_name_the_cluster_nodes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (seeds,) = re.findall(r"INTERLOCK_NATS_URL=(\S+)", COMPOSE.read_text(encoding="utf-8"))[-1:]
    monkeypatch.setenv("INTERLOCK_NATS_URL", seeds)
    monkeypatch.setenv("INTERLOCK_STREAM_REPLICAS", "3")
    loaded = Settings()
    hosts = [urlsplit(seed).hostname or "" for seed in nats_servers(loaded.nats_url or "")]
    assert hosts == ["nats-1", "nats-2", "nats-3"]
    assert all(services()[host]["profiles"] == ["cluster"] for host in hosts)


def test_only_migrate_holds_the_administrators_database_url() -> None:
    postgres = {k: with_defaults(v) for k, v in environment(services()["postgres"]).items()}
    raw = environment(services()["migrate"])["INTERLOCK_DATABASE_URL"]
    assert "${POSTGRES_PASSWORD" in raw, "the password must come from the variable"
    url = urlsplit(with_defaults(raw))
    assert (url.hostname, url.port) == ("postgres", 5432)
    assert (url.username, url.password) == (
        postgres["POSTGRES_USER"],
        postgres["POSTGRES_PASSWORD"],
    )
    assert url.path == "/" + postgres["POSTGRES_DB"]


@pytest.mark.parametrize(("service", "component"), sorted(component_services().items()))
def test_a_component_connects_as_its_own_database_role_or_not_at_all(
    service: str, component: str
) -> None:
    raw = environment(services()[service]).get("INTERLOCK_DATABASE_URL")
    role = database_role(component)
    if role is None:
        assert raw is None, f"{service} has no business with the database"
        return
    assert raw is not None
    url = urlsplit(with_defaults(raw))
    assert (url.hostname, url.username, url.password) == ("postgres", role, None)


def test_otel_variables_are_standard_sdk_variables() -> None:
    standard = {name for name in dir(otel_variables) if name.startswith("OTEL_")}
    used = set(re.findall(r"\bOTEL_[A-Z0-9_]+", COMPOSE.read_text(encoding="utf-8")))
    assert used, "no OTEL_* variable configured"
    assert not used - standard, f"not OpenTelemetry SDK variables: {sorted(used - standard)}"


@pytest.mark.parametrize("service", sorted(interlock_services()))
def test_otlp_export_reaches_the_collector_port_of_its_protocol(service: str) -> None:
    env = environment(services()[service])
    endpoint = urlsplit(env["OTEL_EXPORTER_OTLP_ENDPOINT"])
    protocol = env.get("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")  # the SDK's default
    receiver = collector()["receivers"]["otlp"]["protocols"][
        "grpc" if protocol == "grpc" else "http"
    ]
    assert endpoint.hostname == "otel-collector"
    assert endpoint.port == int(receiver["endpoint"].rsplit(":", 1)[1])

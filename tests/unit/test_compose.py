"""The docker-compose deployment is a valid Compose file that deploys every component, wired
consistently: what it names exists (services, volumes, settings, OTel variables, collector
components), and what the code defines (components, stages) is deployed."""

from __future__ import annotations

import json
import re
import shlex
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import opentelemetry.sdk.environment_variables as otel_variables
import pytest
import yaml

from interlock.components import components
from interlock.demo import DEMO_ENV
from interlock.settings import Settings
from interlock.streams import all_stages

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
COLLECTOR = ROOT / "otel" / "collector.yaml"
NATS_CONF = ROOT / "deploy" / "nats.conf"
DOCKERFILE = ROOT / "Dockerfile"
SCHEMA = ROOT / "tests" / "data" / "compose-spec" / "compose-spec.json"

Mapping = dict[str, Any]


@cache
def compose() -> Mapping:
    loaded: Mapping = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    return loaded


@cache
def collector() -> Mapping:
    loaded: Mapping = yaml.safe_load(COLLECTOR.read_text(encoding="utf-8"))
    return loaded


def services() -> dict[str, Mapping]:
    found: dict[str, Mapping] = compose()["services"]
    return found


def command(service: Mapping) -> list[str]:
    value = service.get("command", [])
    return shlex.split(value) if isinstance(value, str) else [str(v) for v in value]


def environment(service: Mapping) -> dict[str, str]:
    value = service.get("environment") or {}
    if isinstance(value, list):
        value = dict(item.partition("=")[::2] for item in value)
    return {str(k): str(v) for k, v in value.items()}


def component_services() -> dict[str, str]:
    """Compose service name -> the component its `interlock service NAME` runs."""
    return {
        name: command(svc)[1]
        for name, svc in services().items()
        if command(svc)[:1] == ["service"] and len(command(svc)) == 2
    }


def interlock_services() -> dict[str, Mapping]:
    """Every service run from the Interlock image (the components and `migrate`)."""
    return {name: svc for name, svc in services().items() if "build" in svc}


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


def mounts(service: Mapping) -> list[tuple[str, str]]:
    """(source, target) of each volume; the source is empty for an anonymous volume."""
    found = []
    for volume in service.get("volumes", []):
        if isinstance(volume, dict):
            found.append((str(volume.get("source", "")), str(volume["target"])))
        else:
            parts = str(volume).split(":")
            found.append((parts[0], parts[1]) if len(parts) > 1 else ("", parts[0]))
    return found


def published_ports(service: Mapping) -> set[int]:
    ports: set[int] = set()
    for port in service.get("ports", []):
        if isinstance(port, dict):
            ports.add(int(port["published"]))
        else:
            ports.add(int(str(port).split(":")[-2]))
    return ports


# --- the Compose file itself -------------------------------------------------------------


def test_compose_file_is_valid_under_the_compose_specification() -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    errors = sorted(validator_class(schema).iter_errors(compose()), key=lambda e: e.json_path)
    assert not errors, "\n".join(f"{e.json_path}: {e.message}" for e in errors)


def test_compose_file_has_no_obsolete_version_key() -> None:
    assert "version" not in compose()


def test_depends_on_names_services_whose_condition_can_be_met() -> None:
    problems = []
    for name, svc in services().items():
        needs = svc.get("depends_on", {})
        conditions = needs if isinstance(needs, dict) else {target: {} for target in needs}
        for target, spec in conditions.items():
            condition = (spec or {}).get("condition", "service_started")
            if target not in services():
                problems.append(f"{name} depends on undefined service {target}")
            elif condition == "service_healthy" and "healthcheck" not in services()[target]:
                problems.append(f"{name} waits for {target} to be healthy; it has no check")
            elif condition == "service_completed_successfully" and services()[target].get(
                "restart", "no"
            ) not in ("no", "on-failure"):
                problems.append(f"{name} waits for {target} to complete; it restarts forever")
    assert not problems


def test_named_volumes_are_declared_and_bind_mounts_exist() -> None:
    declared = set(compose().get("volumes") or {})
    problems = []
    for name, svc in services().items():
        for source, _ in mounts(svc):
            if not source:
                continue
            if source.startswith((".", "/", "~")):
                if not (ROOT / source).exists():
                    problems.append(f"{name} mounts missing file {source}")
            elif source not in declared:
                problems.append(f"{name} mounts undeclared volume {source}")
    assert not problems


def test_how_to_ports_are_published_on_the_host() -> None:
    expected = {
        "nats": 4222,
        "postgres": 5432,
        "jaeger": 16686,
        "otel-collector": 4317,
        "gateway": 8080,
    }
    for name, port in expected.items():
        assert port in published_ports(services()[name]), name


def test_infrastructure_health_checks_ask_the_servers_themselves() -> None:
    nats_check = " ".join(services()["nats"]["healthcheck"]["test"])
    postgres_check = " ".join(services()["postgres"]["healthcheck"]["test"])
    assert ":8222/healthz" in nats_check
    assert "pg_isready" in postgres_check


# --- Interlock components ----------------------------------------------------------------


def test_every_deployed_component_is_registered() -> None:
    known = components()
    unknown = {n: c for n, c in component_services().items() if c not in known}
    assert not unknown, f"`interlock service NAME` would refuse these: {unknown}"


def test_every_registered_component_is_deployed() -> None:
    missing = set(components()) - set(component_services().values())
    assert not missing, f"no compose service runs {sorted(missing)}"


def test_every_stage_of_every_definition_is_deployed() -> None:
    stages = {f"{workflow_type}.{stage}" for workflow_type, stage in all_stages()}
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
    assert compose()["x-demo-parameters"] == DEMO_ENV


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
    assert urlsplit(loaded.database_url or "").hostname in services()


def test_database_url_carries_the_postgres_service_credentials() -> None:
    postgres = {k: with_defaults(v) for k, v in environment(services()["postgres"]).items()}
    for name, svc in interlock_services().items():
        raw = environment(svc)["INTERLOCK_DATABASE_URL"]
        assert "${POSTGRES_PASSWORD" in raw, f"{name}: password must come from the variable"
        url = urlsplit(with_defaults(raw))
        assert (url.hostname, url.port) == ("postgres", 5432)
        assert url.username == postgres["POSTGRES_USER"]
        assert url.password == postgres["POSTGRES_PASSWORD"]
        assert url.path == "/" + postgres["POSTGRES_DB"]


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


# --- the OpenTelemetry collector ---------------------------------------------------------


def test_collector_service_mounts_this_configuration() -> None:
    sources = [source for source, _ in mounts(services()["otel-collector"])]
    assert "./otel/collector.yaml" in sources


def test_collector_pipelines_use_only_defined_components() -> None:
    config = collector()
    undefined = set(config["service"].get("extensions", [])) - set(config.get("extensions", {}))
    for name, pipeline in config["service"]["pipelines"].items():
        for kind in ("receivers", "processors", "exporters"):
            defined = set(config.get(kind) or {})
            undefined |= {f"{name}.{kind}.{c}" for c in pipeline.get(kind, []) if c not in defined}
    assert not undefined


def test_collector_batches_and_reports_its_health() -> None:
    config = collector()
    assert "health_check" in config["service"]["extensions"]
    for pipeline in config["service"]["pipelines"].values():
        assert "batch" in pipeline["processors"]
    metrics_exporters = config["service"]["pipelines"]["metrics"]["exporters"]
    assert {"prometheus", "debug"} & {e.split("/")[0] for e in metrics_exporters}


def test_collector_exports_traces_to_the_jaeger_service() -> None:
    config = collector()
    exporters = config["service"]["pipelines"]["traces"]["exporters"]
    endpoints = [
        str(config["exporters"][e]["endpoint"])
        for e in exporters
        if e.split("/")[0] in {"otlp", "otlp_grpc", "otlphttp", "otlp_http"}
    ]
    hosts = {urlsplit(e if "://" in e else f"//{e}").hostname for e in endpoints}
    assert "jaeger" in hosts
    assert "jaeger" in services()


# --- NATS --------------------------------------------------------------------------------


def _nats_setting(name: str) -> str | None:
    lines = (line.split("#")[0] for line in NATS_CONF.read_text(encoding="utf-8").splitlines())
    for line in lines:
        match = re.match(rf"\s*{name}\s*[:=]?\s*\"?([^\"\s]+)\"?\s*$", line)
        if match:
            return match.group(1)
    return None


def test_jetstream_fsyncs_every_write_onto_a_named_volume() -> None:
    nats = services()["nats"]
    assert _nats_setting("sync_interval") == "always"
    store = Path(_nats_setting("store_dir") or "/nowhere")
    declared = compose().get("volumes") or {}
    on_volumes = [Path(target) for source, target in mounts(nats) if source in declared]
    assert any(store == t or t in store.parents for t in on_volumes), "store_dir is not durable"
    config = dict(mounts(nats))["./deploy/nats.conf"]
    assert command(nats)[-2:] == ["--config", config]


# --- the image ---------------------------------------------------------------------------


def _instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of the Dockerfile, continuation lines joined."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text(encoding="utf-8"))
    lines = (line.strip() for line in text.splitlines())
    pairs = (line.split(None, 1) for line in lines if line and not line.startswith("#"))
    return [(p[0].upper(), p[1] if len(p) > 1 else "") for p in pairs]


def _final_stage() -> list[tuple[str, str]]:
    instructions = _instructions()
    last_from = max(i for i, (op, _) in enumerate(instructions) if op == "FROM")
    return instructions[last_from:]


def test_image_is_slim_python_311_running_interlock() -> None:
    args = dict(a.split("=", 1) for op, a in _instructions() if op == "ARG" and "=" in a)
    base = re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], _final_stage()[0][1].split()[0])
    assert re.fullmatch(r"python:3\.11-slim(-\w+)?", base), base
    entrypoints = [json.loads(a) for op, a in _final_stage() if op == "ENTRYPOINT"]
    assert entrypoints[-1:] == [["interlock"]]


def test_image_runs_as_a_non_root_user() -> None:
    users = [a.split(":")[0] for op, a in _final_stage() if op == "USER"]
    assert users, "no USER: the container would run as root"
    assert users[-1] not in {"root", "0"}


def test_image_is_unbuffered_and_bakes_in_no_secret() -> None:
    env = " ".join(a for op, a in _final_stage() if op == "ENV")
    assert "PYTHONUNBUFFERED=1" in env.split()
    baked = " ".join(a for op, a in _instructions() if op in {"ENV", "ARG"})
    assert not re.search(r"PASSWORD|SECRET|TOKEN|API_KEY|postgresql://", baked, re.IGNORECASE)


def test_image_installs_dependencies_before_copying_the_code() -> None:
    copies = [a for op, a in _instructions() if op == "COPY"]
    assert copies.index("pyproject.toml ./") < copies.index(". .")


def test_build_context_leaves_local_state_out() -> None:
    ignored = set((ROOT / ".dockerignore").read_text(encoding="utf-8").split())
    assert {".git", ".interlock", ".venv", "venv", "**/__pycache__", ".env"} <= ignored

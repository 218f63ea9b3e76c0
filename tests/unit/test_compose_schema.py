"""The docker-compose file on its own: valid under the Compose specification, without the
obsolete `version` key, and internally consistent — dependencies that can be met, declared
volumes and existing bind mounts, the how-to's ports published, health checks that ask the
servers themselves."""

from __future__ import annotations

import json

import jsonschema

from tests.support.compose_files import ROOT, compose, mounts, published_ports, services

SCHEMA = ROOT / "tests" / "data" / "compose-spec" / "compose-spec.json"


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

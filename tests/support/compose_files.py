"""The deployment's files and how to read them: `docker-compose.yml` and its services,
the OpenTelemetry collector's configuration, the Dockerfile — shared by the compose tests."""

from __future__ import annotations

import shlex
from functools import cache
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
COLLECTOR = ROOT / "otel" / "collector.yaml"
DOCKERFILE = ROOT / "Dockerfile"

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

"""The files the deployment runs with beside docker-compose.yml: the OpenTelemetry
collector's configuration (mounted, complete, batching, exporting to Jaeger), NATS's (fsync
onto a named volume), and the image's Dockerfile and build context (slim, non-root,
unbuffered, no secrets, dependencies cached, local state left out)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urlsplit

from tests.support.compose_files import (
    DOCKERFILE,
    ROOT,
    collector,
    command,
    compose,
    mounts,
    services,
)

NATS_CONF = ROOT / "deploy" / "nats.conf"


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

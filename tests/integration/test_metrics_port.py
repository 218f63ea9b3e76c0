"""The scrape endpoint's port under `up`: a port another program holds is a warning and no
endpoint (never a URL this stack does not serve), and `endpoints.json` names the endpoint only
when the relay runs with one."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from interlock.app.endpoints import write_endpoints
from interlock.app.startup import without_taken_metrics_port
from interlock.config.settings import Settings
from tests.support.cli import free_port

NATS = "nats://127.0.0.1:4222"
DATABASE = "postgresql://interlock@127.0.0.1:5432/interlock"


def test_a_taken_metrics_port_is_a_warning_and_no_endpoint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        settings = Settings(home=tmp_path, metrics_port=port)

        kept = without_taken_metrics_port(settings)

    assert kept.metrics_port == 0
    assert "INTERLOCK_METRICS_PORT" in capsys.readouterr().err
    assert write_endpoints(kept, NATS, DATABASE, ["relay"])["metrics_url"] is None


def test_endpoints_name_the_relays_scrape_endpoint(tmp_path: Path) -> None:
    port = free_port()
    settings = Settings(home=tmp_path, metrics_port=port)
    assert without_taken_metrics_port(settings) is settings  # nothing listens there

    write_endpoints(settings, NATS, DATABASE, ["projector", "relay"])
    shown = json.loads((tmp_path / "endpoints.json").read_text())

    assert shown["metrics_url"] == f"http://127.0.0.1:{port}/metrics"
    assert write_endpoints(settings, NATS, DATABASE, ["projector"])["metrics_url"] is None


def test_no_endpoint_is_named_when_the_sdk_is_disabled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    settings = Settings(home=tmp_path, metrics_port=free_port())

    assert write_endpoints(settings, NATS, DATABASE, ["relay"])["metrics_url"] is None

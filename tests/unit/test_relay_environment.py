"""What `up` gives the relay process: the deployment's parameter overrides (its human-wait
deadlines, reminder periods and stuck bounds are the definitions' parameters), and the scrape
endpoint's and the SLO gauges' settings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from interlock.app.childenv import child_environment
from interlock.config.settings import Settings


def test_the_relay_is_given_the_parameters_and_its_metrics_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INTERLOCK_SECRETS_DIR", str(tmp_path / "secrets"))
    overrides = {"support": {"approval_reminder_after_seconds": 1}}
    parent = Settings(
        home=tmp_path, parameters=overrides, metrics_port=9555, slo_window=600, metrics_interval=2
    )

    env = child_environment(parent, "relay", "nats://x:y@h:1", "postgresql://r:p@h/db")

    assert json.loads(env["INTERLOCK_PARAMETERS"]) == overrides
    assert (env["INTERLOCK_METRICS_PORT"], env["INTERLOCK_METRICS_HOST"]) == ("9555", "127.0.0.1")
    assert (env["INTERLOCK_SLO_WINDOW"], env["INTERLOCK_METRICS_INTERVAL"]) == ("600.0", "2.0")

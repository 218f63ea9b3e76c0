"""`INTERLOCK_ADAPTERS` binds a port to a generic adapter by kind (else the plugin's default),
and is checked at start: one line naming the type, the port and the problem."""

from __future__ import annotations

import json
from typing import Any

import pytest

from interlock.adapters.http import HttpEffects
from interlock.app import failures
from interlock.app.bindings import check_adapters
from interlock.app.runtime import Runtime
from interlock.app.wiring import bind
from interlock.cli import app
from interlock.config.plugins import installed
from interlock.config.settings import Settings
from interlock.contracts.errors import ConfigurationError
from interlock.services.adapters.sim import SimEffectProvider

HTTP = {"adapter": "http", "base_url": "http://127.0.0.1:9/v1/", "timeout_s": 3}


def problem(adapters: dict[str, Any]) -> str:
    with pytest.raises(ConfigurationError) as raised:
        check_adapters(adapters, installed())
    return str(raised.value)


async def bound(adapters: dict[str, Any]) -> object:
    rt = Runtime(Settings(adapters=adapters), "nats://h:1")
    adapter = bind(installed().plugin("request"), rt, None)["effects"]  # type: ignore[arg-type]
    if isinstance(adapter, HttpEffects):
        await adapter.aclose()
    return adapter


async def test_a_kind_picks_the_ports_generic_adapter_with_the_rest_as_its_config() -> None:
    adapter = await bound({"request": {"effects": HTTP}})

    assert isinstance(adapter, HttpEffects)
    assert adapter.config.base_url == HTTP["base_url"]
    assert adapter.config.timeout_s == 3


async def test_without_a_kind_the_plugins_default_serves() -> None:
    assert isinstance(await bound({}), SimEffectProvider)
    assert isinstance(await bound({"request": {"effects": {"adapter": "nats"}}}), SimEffectProvider)


def test_a_valid_setting_passes_the_check() -> None:
    check_adapters({"request": {"effects": HTTP}}, installed())


@pytest.mark.parametrize(
    ("adapters", "expected"),
    [
        ({"nope": {"x": {}}}, "INTERLOCK_ADAPTERS: nope.*: no such workflow type"),
        ({"request": {"mailer": {}}}, "INTERLOCK_ADAPTERS: request.mailer: no such port"),
        (
            {"request": {"effects": {"adapter": "grpc"}}},
            "INTERLOCK_ADAPTERS: request.effects: unknown adapter 'grpc' (offered: http, nats)",
        ),
        (
            {"request": {"effects": {"adapter": "http"}}},
            "INTERLOCK_ADAPTERS: request.effects: http adapter: base_url: Field required",
        ),
        (
            {"request": {"effects": {"adapter": "nats", "base_url": "x"}}},
            "INTERLOCK_ADAPTERS: request.effects: nats adapter takes no settings",
        ),
    ],
)
def test_a_wrong_setting_is_one_line_naming_type_port_and_problem(
    adapters: dict[str, Any], expected: str
) -> None:
    found = problem(adapters)

    assert found.startswith(expected)
    assert "\n" not in found


def test_a_refused_setting_never_repeats_its_value() -> None:
    secret = "s3cr3t-token-value"
    found = problem({"request": {"effects": {**HTTP, "headers": {"X-Key": 7}, "x": secret}}})

    assert "request.effects" in found
    assert secret not in found


def test_up_refuses_to_start_with_a_wrong_setting(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    adapters = {"request": {"effects": {"adapter": "grpc"}}}
    monkeypatch.setenv("INTERLOCK_ADAPTERS", json.dumps(adapters))

    with pytest.raises(SystemExit) as exited:
        failures.run(lambda: app(["up"], prog_name="interlock"))

    assert exited.value.code == 2
    [line] = capsys.readouterr().err.splitlines()
    assert "INTERLOCK_ADAPTERS: request.effects: unknown adapter 'grpc'" in line

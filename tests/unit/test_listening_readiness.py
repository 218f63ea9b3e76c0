"""A component with an HTTP server (the gateway, the console) is ready once its port accepts
connections, not once it reaches the broker: a stack entered earlier handed its callers a
console that refused them (`ConnectError`) for the moment it took to bind."""

from __future__ import annotations

import asyncio
import socket

import pytest

from interlock.app.health import wait_until_listening
from interlock.app.startup import require_free_ports
from interlock.config.components import CONSOLE, GATEWAY
from interlock.config.settings import Settings
from interlock.contracts.errors import ConfigurationError
from tests.support.cli import free_port


async def test_waits_until_every_listening_component_accepts_then_returns() -> None:
    settings = Settings(console_port=free_port(), gateway_port=free_port())
    waiting = asyncio.ensure_future(
        wait_until_listening(settings, ["relay", CONSOLE, GATEWAY], within=10.0)
    )
    servers = []
    for port in (settings.console_port, settings.gateway_port):
        await asyncio.sleep(0)  # each server binds only after the wait has begun
        assert not waiting.done()
        servers.append(await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", port))
    try:
        await asyncio.wait_for(waiting, 10.0)
    finally:
        for server in servers:
            server.close()


async def test_a_port_nobody_binds_is_a_timeout_naming_the_component() -> None:
    settings = Settings(console_port=free_port())

    with pytest.raises(TimeoutError, match="console"):
        await wait_until_listening(settings, [CONSOLE], within=0.3)


async def test_components_without_a_server_are_not_waited_for() -> None:
    await asyncio.wait_for(wait_until_listening(Settings(), ["relay", "projector"]), 1.0)


def test_a_taken_port_of_a_listening_component_is_refused_naming_its_variable() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        settings = Settings(console_host="127.0.0.1", console_port=port, gateway_port=free_port())

        require_free_ports(settings, ["relay", GATEWAY])  # the console is not asked for
        with pytest.raises(ConfigurationError, match=f"INTERLOCK_CONSOLE_PORT: 127.0.0.1:{port}"):
            require_free_ports(settings, [CONSOLE, GATEWAY])

"""The approval/webhook gateway: authenticated HTTP webhooks become signal messages on
`wf.in.signal.<workflow_type>` or requests that start a workflow on
`wf.in.request.<workflow_type>` (`starts`), and a sender may ask what became of a workflow
and of its webhook (`reads`).

It decides nothing (the projector's guards do): it authenticates the sender (Standard
Webhooks), checks that the sender may speak for the tenant, workflow type and actor role it
claims and that the message is well-formed (a request's payload fits the type's START model),
publishes, and records every refusal on `wf.dlq.gateway`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from contextlib import AsyncExitStack
from typing import Any

import nats
import nats.errors
from aiohttp import web
from nats.aio.client import Client
from nats.js import JetStreamContext

from interlock.contracts.errors import PublishFailed
from interlock.contracts.registry import Registry
from interlock.contracts.urls import nats_inbox, nats_servers
from interlock.services.gateway.app import Publish, create_app
from interlock.services.gateway.auth import SenderConfig, SenderRegistry
from interlock.services.gateway.claims import ClaimSigner
from interlock.services.gateway.limits import Limits
from interlock.services.gateway.reads import ReadStatus

__all__ = [
    "Limits",
    "ReadStatus",
    "SenderConfig",
    "SenderRegistry",
    "create_app",
    "jetstream_publisher",
    "run_gateway",
]

log = logging.getLogger("interlock.gateway")


def jetstream_publisher(js: JetStreamContext, timeout: float = 5.0) -> Publish:
    """A `Publish` that returns once JetStream acknowledged the message and translates every
    client failure (no stream, no connection, timeout) into `PublishFailed`."""

    async def publish(subject: str, data: bytes, headers: dict[str, str]) -> None:
        try:
            await js.publish(subject, data, headers=headers, timeout=timeout)
        except (nats.errors.Error, TimeoutError) as exc:
            raise PublishFailed(type(exc).__name__) from exc

    return publish


async def run_gateway(
    nats_url: str,
    *,
    host: str,
    port: int,
    senders: Mapping[str, SenderConfig],
    stop: asyncio.Event,
    workflows: Registry,
    limits: Limits | None = None,
    connection: Mapping[str, Any] | None = None,
    on_connect: Callable[[Client], None] = lambda _nc: None,
    read_status: ReadStatus | None = None,
    claim_key: str | None = None,
) -> None:
    """Serve HTTP on `host:port` until `stop` is set, then stop accepting, finish in-flight
    requests and drain the NATS connection.

    Expects the streams to exist (`interlock migrate`). Raises `ValueError` at start on a
    malformed sender secret (naming the sender, never the secret) and `OSError` if the port
    cannot be bound. `connection`: options for `nats.connect` (reconnecting, callbacks);
    `on_connect` is given the connection once it is up; `read_status` answers the reads of
    workflows; `claim_key`: the PEM of the Ed25519 key it signs each message's sender with.
    """
    registry = SenderRegistry(senders)
    if not registry:
        log.warning("no gateway senders configured: every request will be refused (401)")
    async with AsyncExitStack() as stack:
        nc = await nats.connect(
            nats_servers(nats_url),
            **{
                "name": "interlock-gateway",
                "inbox_prefix": nats_inbox(nats_url),
                **(connection or {}),
            },
        )
        on_connect(nc)
        stack.push_async_callback(nc.drain)
        app = create_app(
            jetstream_publisher(nc.jetstream()),
            registry,
            workflows=workflows,
            connected=lambda: nc.is_connected,
            limits=limits,
            read_status=read_status,
            claims=ClaimSigner(claim_key) if claim_key else None,
        )
        runner = web.AppRunner(app)
        await runner.setup()
        stack.push_async_callback(runner.cleanup)
        await web.TCPSite(runner, host, port).start()
        log.info("gateway listening on %s:%d for %d sender(s)", host, port, len(registry))
        await stop.wait()

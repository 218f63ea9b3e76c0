"""`<home>/endpoints.json`: where a running `interlock up` can be reached, for the clients and
tools of the same installation. Database URLs are written without their password; each
client's NATS URL carries that client's credentials, so the file is readable by its owner
only."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from interlock.config import access
from interlock.config.components import CONSOLE, GATEWAY
from interlock.config.settings import Settings
from interlock.config.telemetry import SCRAPED, metrics_url
from interlock.console.address import console_url

ENDPOINTS = "endpoints.json"


def write_endpoints(
    settings: Settings, nats_url: str, database_url: str, components: Sequence[str]
) -> dict[str, Any]:
    """Write the endpoints file and return what it holds."""
    server = access.without_credentials(nats_url)
    secrets = access.secrets_of(settings)
    gateway = f"http://{settings.gateway_host}:{settings.gateway_port}"
    endpoints: dict[str, Any] = {
        "nats_url": server,
        "database_url": access.redacted(database_url),
        "gateway_url": gateway if GATEWAY in components else None,
        "console_url": console_url(settings) if CONSOLE in components else None,
        "metrics_url": metrics_url(settings) if SCRAPED in components else None,
        "timings": settings.timings(),
        "clients": {
            name: {"nats_url": access.nats_url_as(server, name, secrets)}
            for name in access.external_clients(settings)
        },
    }
    path = settings.home / ENDPOINTS
    partial = path.with_suffix(".json.partial")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as out:
        json.dump(endpoints, out, indent=2)
    partial.replace(path)
    return endpoints

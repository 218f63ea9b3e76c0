"""What a component process is given: its own settings and credentials, nothing else.

The supervisor starts every component with this environment instead of its own: the system
variables a Python process needs, the OpenTelemetry ones, and the `INTERLOCK_*` settings the
component reads — its own NATS URL (its identity's credentials embedded), its own database
URL if it has database access at all (stages have none), the OpenAI key only for a stage
that asks a model, the gateway's senders only for the gateway, the job-signing key only for
the projector.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any

from pydantic import BaseModel, SecretStr

from interlock.config import components
from interlock.config.access import (
    client_policies,
    gateway_claims_key,
    gateway_claims_public_key,
    secrets_of,
)
from interlock.config.secrets import Secrets
from interlock.config.settings import Settings
from interlock.messaging.crashpoints import ENV as CRASHPOINTS

_SYSTEM = frozenset(
    {
        "PATH", "HOME", "USER", "LOGNAME", "LANG", "TZ", "TMPDIR", "TEMP", "TMP",
        "VIRTUAL_ENV", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE",
        "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
    }
)  # fmt: skip
_SYSTEM_PREFIXES = ("LC_", "PYTHON", "OTEL_", "COV_CORE_", "COVERAGE_")
_FAULT_INJECTION = frozenset({CRASHPOINTS})
"""Armed by a chaos run or test for every component; never set in production."""

_GIVEN: dict[str, Callable[[Settings, Secrets], Any]] = {
    "clients": lambda settings, _: client_policies(settings),
    "job_signing_key": lambda _, secrets: secrets.job_signing_key(),
    "job_public_key": lambda _, secrets: secrets.job_public_key(),
    "gateway_claims_key": lambda settings, _: gateway_claims_key(settings),
    "gateway_claims_public_key": lambda settings, _: gateway_claims_public_key(settings),
}
"""How the supervisor computes each setting a row is `given`, rather than copying it."""
GIVEN = frozenset(_GIVEN)
"""The settings a row may be `given` (the table's test checks its rows against this)."""


def settings_of(component: str) -> tuple[str, ...]:
    """The settings fields `component` reads (besides its URLs and what it is given), as its
    row says: the stage host reads what its stages read, the model settings if any of them
    asks a model."""
    return components.settings_of(components.row_of(component))


def child_environment(
    settings: Settings, component: str, nats_url: str, database_url: str | None
) -> dict[str, str]:
    """The whole environment of `component`'s process. The projector gets the private key
    it signs jobs with, the stages the public key they verify them with (PEM); the gateway
    the key it signs sender claims with, the projector the public key it verifies them with."""
    row = components.row_of(component)
    secrets = secrets_of(settings)
    env = {
        k: v
        for k, v in os.environ.items()
        if k in _SYSTEM or k in _FAULT_INJECTION or k.startswith(_SYSTEM_PREFIXES)
    }
    env["INTERLOCK_NATS_URL"] = nats_url
    if database_url is not None:
        env["INTERLOCK_DATABASE_URL"] = database_url
    for name in components.settings_of(row):
        value = getattr(settings, name)
        if name == "home":
            value = Path(value).resolve()
        if value is not None:
            env[f"INTERLOCK_{name.upper()}"] = _env_value(value)
    for name in row.given:
        env[f"INTERLOCK_{name.upper()}"] = _env_value(_GIVEN[name](settings, secrets))
    return env


def _env_value(value: Any) -> str:
    """`value` as pydantic-settings reads it back: plain text, or JSON for structures."""
    if isinstance(value, str | Path | int | float) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, SecretStr):
        return value.get_secret_value()
    return json.dumps(_plain(value), sort_keys=True)


def _plain(value: Any) -> Any:
    if isinstance(value, SecretStr):
        return value.get_secret_value()
    if isinstance(value, BaseModel):
        return {k: _plain(getattr(value, k)) for k in type(value).model_fields}
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, frozenset | set):
        return sorted(_plain(v) for v in value)
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Path | Decimal):
        return str(value)
    return value

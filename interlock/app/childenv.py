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
from collections.abc import Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any

from pydantic import BaseModel, SecretStr

from interlock.config.access import (
    client_policies,
    gateway_claims_key,
    gateway_claims_public_key,
    secrets_of,
)
from interlock.config.plugins import installed
from interlock.config.settings import Settings
from interlock.contracts.partitions import PROJECTOR, is_projector
from interlock.messaging.crashpoints import ENV as CRASHPOINTS
from interlock.messaging.permissions import GATEWAY, STAGE_HOST

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

_COMMON = ("home", "log_level", "local_traces", "insecure_nats", "shutdown_grace")
_OWN: dict[str, tuple[str, ...]] = {
    "projector": (
        "projector_workers",
        "projector_partitions",
        "parameters",
        "unknown_workflow_grace",
        "publish_grace",
        "occurred_at_past_days",
        "occurred_at_future_s",
    ),
    "relay": (
        "relay_batch_size",
        "stuck_after",
        "sweep_after",
        "archive_after",
        "forget_after",
        "history_retention",
        "retention_interval",
        "parameters",
        "slo_window",
        "metrics_interval",
        "metrics_host",
        "metrics_port",
    ),
    "timer": (),
    "sim": (),
    "gateway": (
        "gateway_host",
        "gateway_port",
        "gateway_senders",
        "gateway_sender_rate",
        "gateway_unauthenticated_rate",
    ),
    "console": (
        "console_host",
        "console_port",
        "console_operators",
        "console_redact",
        "console_redrive",
        "jaeger_url",
        "parameters",
        "stuck_after",
        "secrets_dir",
        "slo_window",
    ),
}
_STAGE = ("stage_workers", "external_timeout", "adapters")
_MODEL = (
    "model",
    "models",
    "openai_base_url",
    "openai_model",
    "openai_api_key",
    "model_timeout",
    "model_prices",
)


def model_stages() -> frozenset[str]:
    """The stages that ask a model, as their plugins declare (tests/unit check this against
    the wired stages)."""
    return frozenset(
        f"{workflow_type}.{stage}"
        for workflow_type, loaded in installed().plugins.items()
        for stage in loaded.plugin.stages_asking_a_model()
    )


def settings_of(component: str) -> tuple[str, ...]:
    """The settings fields `component` reads (besides its URLs); the stage host reads what
    its stages read, the model settings if any of them asks a model."""
    if is_projector(component):
        return _COMMON + _OWN[PROJECTOR]
    if component == STAGE_HOST:
        return _COMMON + _STAGE + (_MODEL if model_stages() else ())
    if "." not in component:
        return _COMMON + _OWN[component]
    return _COMMON + _STAGE + (_MODEL if component in model_stages() else ())


def child_environment(
    settings: Settings, component: str, nats_url: str, database_url: str | None
) -> dict[str, str]:
    """The whole environment of `component`'s process. The projector gets the private key
    it signs jobs with, the stages the public key they verify them with (PEM); the gateway
    the key it signs sender claims with, the projector the public key it verifies them with."""
    secrets = secrets_of(settings)
    env = {
        k: v
        for k, v in os.environ.items()
        if k in _SYSTEM or k in _FAULT_INJECTION or k.startswith(_SYSTEM_PREFIXES)
    }
    env["INTERLOCK_NATS_URL"] = nats_url
    if database_url is not None:
        env["INTERLOCK_DATABASE_URL"] = database_url
    for name in settings_of(component):
        value = getattr(settings, name)
        if name == "home":
            value = Path(value).resolve()
        if value is not None:
            env[f"INTERLOCK_{name.upper()}"] = _env_value(value)
    if is_projector(component):
        env["INTERLOCK_CLIENTS"] = _env_value(client_policies(settings))
        env["INTERLOCK_JOB_SIGNING_KEY"] = secrets.job_signing_key()
        env["INTERLOCK_GATEWAY_CLAIMS_PUBLIC_KEY"] = gateway_claims_public_key(settings)
    elif component == GATEWAY:
        env["INTERLOCK_GATEWAY_CLAIMS_KEY"] = gateway_claims_key(settings)
    elif "." in component or component == STAGE_HOST:
        env["INTERLOCK_JOB_PUBLIC_KEY"] = secrets.job_public_key()
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

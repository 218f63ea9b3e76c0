"""Process settings, read from ``INTERLOCK_*`` environment variables."""

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator
from pydantic_settings import SettingsConfigDict

from interlock.config.setting_checks import (
    Directory,
    LogLevel,
    Parameters,
    PrivateKey,
    PublicKey,
)
from interlock.config.settings_models import ModelSettings
from interlock.config.settings_shape import ShapeSettings
from interlock.config.settings_web import ConsoleOperator, ConsoleRole, GatewaySender, WebSettings
from interlock.contracts.clients import ClientName, ClientPolicy
from interlock.contracts.urls import (
    NATS_SCHEMES,
    asyncpg_dsn,
    bad_url,
    nats_servers,
    scheme,
    split_postgres_url,
)

__all__ = ["ConsoleOperator", "ConsoleRole", "GatewaySender", "Settings", "asyncpg_dsn"]

STREAM_REPLICAS = (1, 3, 5)
"""Replica counts JetStream keeps a stream at: one server, or a majority of 3 or 5 servers."""


class Settings(ModelSettings, WebSettings, ShapeSettings):
    """Where Interlock finds its broker and its database."""

    # URLs may carry passwords: keep input values out of validation errors.
    model_config = SettingsConfigDict(env_prefix="INTERLOCK_", hide_input_in_errors=True)

    nats_url: str | None = Field(
        default=None,
        description="NATS server as nats://host:port, or the seed servers of a NATS cluster "
        "comma-separated (nats://a:4222,nats://b:4222,nats://c:4222); when unset the embedded "
        "nats-server is used.",
    )
    stream_replicas: int = Field(
        default=1,
        description="Replicas of every JetStream stream (their "
        "consumers inherit it): 1 for one server, 3 or 5 on a NATS cluster of at least as many "
        "servers. An existing stream is updated to it where the server allows.",
    )
    database_url: str | None = Field(
        default=None,
        description=(
            "PostgreSQL as postgresql://user@host:port/db (the form every Postgres tool prints); "
            "when unset the embedded PostgreSQL is used."
        ),
    )
    home: Directory = Field(
        default=Path(".interlock"),
        description="Directory where the embedded stack keeps its data, logs and stack.json.",
    )

    secrets_dir: Directory | None = Field(
        default=None,
        description="Directory of the installation's credentials (NATS and PostgreSQL "
        "passwords, the job-signing key), default <home>/secrets; mode 0700, files 0600.",
    )
    insecure_nats: bool = Field(
        default=False,
        description="Run against a NATS server that accepts anonymous connections (a "
        "development setup only; a warning is logged on every start). Without it Interlock "
        "refuses to start on such a server.",
    )
    clients: dict[ClientName, ClientPolicy] | None = Field(
        default=None,
        description="External clients, as JSON: "
        '{"<name>": {"publish": ["request"|"signal"], "types": [...] | ["*"], "tenants": '
        '[...] | ["*"], "roles": [actor roles it may sign for]}}. Each connects to NATS as '
        "user <name> (`interlock client-url NAME`) and may publish only "
        "wf.in.<kind>.<type>.<name>. Unset: `upstream` (requests) and `approvals` (signals "
        "with every approver and operator role), all types and tenants. The CLI's own "
        "`operator` client is always added.",
    )

    job_signing_key: PrivateKey = Field(
        default=None,
        description="PEM of the Ed25519 private key the projector signs jobs with (the "
        "projector's only); unset: the installation's (<secrets>/job-signing.key).",
    )
    job_public_key: PublicKey = Field(
        default=None,
        description="PEM of the public key stages verify job signatures with; unset: the "
        "installation's (<secrets>/job-signing.pub).",
    )

    gateway_claims_key: PrivateKey = Field(
        default=None,
        description="PEM of the Ed25519 private key the gateway signs each message's sender "
        "with (the gateway's only); unset: the installation's (<secrets>/gateway-claims.key).",
    )
    gateway_claims_public_key: PublicKey = Field(
        default=None,
        description="PEM of the public key the projector verifies the gateway's sender claims "
        "with; unset: the installation's (<secrets>/gateway-claims.pub).",
    )

    log_level: LogLevel = Field(default="INFO", description="Python log level of every process.")
    projector_workers: int = Field(
        default=16, ge=1, description="Events the projector decides concurrently."
    )
    commit_batch: int = Field(
        default=16,
        ge=1,
        le=64,
        description="Decisions the projector commits in one statement at most (group commit: "
        "those that became ready while a commit was in flight); 1: each alone.",
    )
    publish_grace: float = Field(
        default=1.0,
        ge=0,
        le=60,  # far inside the streams' 300 s duplicate window, which drops a double publish
        description="Seconds the relay leaves the rows of a decision to the projector, which "
        "publishes them itself right after its commit; after that the relay publishes any "
        "still unmarked (a projector that crashed in between). 0: the projector publishes "
        "nothing itself and the relay publishes every row at once.",
    )
    stage_workers: int = Field(default=8, ge=1, description="Jobs each stage runs concurrently.")
    relay_batch_size: int = Field(default=500, ge=1, description="Outbox rows per relay batch.")
    archive_after: float = Field(
        default=30 * 24 * 3600.0,
        gt=0,
        description="Seconds a workflow stays in a terminal state before it moves from the hot "
        "tables to the archive (`interlock show` still finds it).",
    )
    forget_after: float = Field(
        default=30 * 24 * 3600.0,
        gt=0,
        description="Seconds processed events, refused events and fired or cancelled timers "
        "are kept (deduplication needs them only while a message can still be redelivered).",
    )
    history_retention: float = Field(
        default=30 * 24 * 3600.0,
        gt=0,
        description="Seconds a workflow's history (its decided events with their payloads, "
        "which `interlock replay` re-decides) is kept after its last decided event.",
    )
    retention_interval: float = Field(
        default=3600.0, gt=0, description="Seconds between the relay's retention passes."
    )
    stuck_after: float = Field(
        default=300.0,
        gt=0,
        description="Seconds without progress (and no timer due within them) after which a "
        "workflow outside terminal and person-waiting states counts as stuck, in states no "
        "`stuck_after_seconds[_by_state]` parameter bounds (README: Stuck workflows).",
    )
    slo_window: float = Field(
        default=3600.0,
        gt=0,
        description="Seconds of decisions the outcome SLO gauges (`interlock_slo_*`) count over: "
        "completion rate, durations, waits, reviews, retries (README: Operating Interlock).",
    )
    metrics_interval: float = Field(
        default=15.0,
        gt=0,
        description="Seconds between the relay's samples of the database for its gauges (outbox "
        "lag, stuck workflows, waits on a person and their reminders, outcome SLOs).",
    )
    sweep_after: float = Field(
        default=60.0,
        gt=0,
        description="Seconds a workflow may wait for a stage job without progress before the "
        "open-job sweeper re-dispatches the job (same job id: a slow job is deduplicated).",
    )
    unknown_workflow_grace: float = Field(
        default=30.0,
        ge=0,
        description="Seconds the projector retries a signal or result for a workflow it does "
        "not know yet (its START may be behind it) before dead-lettering it unknown_workflow.",
    )
    occurred_at_past_days: float = Field(
        default=3650.0,
        gt=0,
        description="How far in the past an event's occurred_at may lie (days) before the "
        "projector dead-letters it bad_timestamp (generous: redriven dead letters, backfills).",
    )
    occurred_at_future_s: float = Field(
        default=86400.0,
        gt=0,
        description="How far in the future an event's occurred_at may lie (seconds: the clock "
        "skew tolerated between senders and the projector) before it is dead-lettered "
        "bad_timestamp.",
    )
    event_loop: Literal["auto", "uvloop", "asyncio"] = Field(
        default="auto",
        description="The event loop each component runs on: `uvloop` (its scheduling and "
        "socket I/O in C), `asyncio` (the standard one) or `auto`, uvloop where it is "
        "installed.",
    )
    shutdown_grace: float = Field(
        default=10.0,
        gt=0,
        description="Seconds a component has to stop after SIGTERM before it exits regardless "
        "(a dead connection must not hold shutdown up).",
    )
    external_timeout: float = Field(
        default=2.0, gt=0, description="Seconds per call to an external system (simulators)."
    )
    stage_redelivery_s: float = Field(
        default=1.0,
        ge=0.05,
        le=60,
        description="Seconds a job whose stage failed waits before its first redelivery; "
        "doubled at each delivery, at least what the failing system asked (Retry-After), "
        "never over 60 s. After the sixth delivery the stage gives up and escalates.",
    )
    adapters: dict[str, dict[str, dict[str, Any]]] = Field(
        default_factory=dict,
        description="Per workflow type and port, the port's adapter and its configuration, as "
        'JSON: {"<type>": {"<port>": {"adapter": "<kind>", ...}}} binds a generic adapter the '
        'port offers (e.g. "http"); without "adapter" the plugin\'s default gets the keys; a '
        "port not listed gets its plugin's default. Checked at start. Secrets only by reference "
        '({"env": "VAR"} or {"file": "/run/secrets/x"}), never by value.',
    )
    parameters: Parameters = Field(
        default_factory=dict,
        description="Per workflow type, overrides of definition parameters, as JSON, e.g. "
        '{"<type>": {"approval_sla_seconds": 3600, "retry_delay_scale": 0.1}}.',
    )

    local_traces: bool = Field(
        default=True,
        description="Also keep finished spans as JSON lines under <home>/traces, so "
        "`interlock trace` works without a collector (OTLP export is configured with the "
        "standard OTEL_* variables).",
    )

    @field_validator("nats_url")
    @classmethod
    def _check_nats_url(cls, url: str | None) -> str | None:
        if url is None:
            return url
        seeds = nats_servers(url)
        for seed in seeds or [url]:
            if scheme(seed) not in NATS_SCHEMES:
                raise bad_url("INTERLOCK_NATS_URL", "nats://host:port[,nats://host:port...]", seed)
        if len({scheme(seed).startswith("ws") for seed in seeds}) > 1:
            raise ValueError("INTERLOCK_NATS_URL mixes websocket and plain seed URLs")
        return url

    @field_validator("stream_replicas")
    @classmethod
    def _check_stream_replicas(cls, replicas: int) -> int:
        if replicas not in STREAM_REPLICAS:
            raise ValueError(f"must be 1, 3 or 5 (servers a stream is kept on), got {replicas}")
        return replicas

    @field_validator("database_url")
    @classmethod
    def _check_database_url(cls, url: str | None) -> str | None:
        if url is not None:
            split_postgres_url(url, setting="INTERLOCK_DATABASE_URL")
        return url

    def timings(self) -> dict[str, Any]:
        """The settings a run's timing and model answers depend on (what `interlock demo`
        compares with the `interlock up` it attaches to, over the definitions' defaults)."""
        return {
            "parameters": self.parameters,
            "external_timeout": self.external_timeout,
            "model": self.model,
            "models": self.models,
        }

"""The settings of the two web front doors: the approval/webhook gateway and the operator
console (their fields are part of `Settings`, read from the same `INTERLOCK_*` variables)."""

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr
from pydantic_settings import BaseSettings

from interlock.config.setting_checks import HttpUrl, NotEmpty
from interlock.contracts.clients import SenderName


class GatewaySender(BaseModel):
    """A webhook sender the gateway accepts: its signing secret, and the tenants, actor roles,
    actor ids and workflow types it may speak for (`["*"]`: any)."""

    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)

    secret: SecretStr = Field(description="Standard Webhooks signing secret, `whsec_<base64>`.")
    roles: frozenset[str] = Field(description="Actor roles this sender may speak for.")
    tenants: frozenset[str] = Field(
        description="Tenants it acts for; a signal names one of them, or (one configured) none."
    )
    actors: frozenset[str] = Field(description='Actor ids it may sign as, or ["*"].')
    types: frozenset[str] = Field(
        default=frozenset({"*"}),
        description='Workflow types it may start and signal (default ["*"]: every one).',
    )


ConsoleRole = Literal["viewer", "approver", "operator"]


class ConsoleOperator(BaseModel):
    """Someone who may log in to the operator console: a password hash (argon2 or bcrypt, as
    `interlock console --hash-password` prints), what they may do there (`viewer` reads,
    `approver` answers approvals and reviews, `operator` also retries, resolves, cancels and
    redrives), and the actor roles their signals carry: per workflow type, the first of these
    that the type's configuration lets act (its approver limits apply as to anyone)."""

    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)

    password_hash: SecretStr
    roles: frozenset[ConsoleRole] = frozenset({"viewer"})
    actor_roles: tuple[str, ...] = ()


class WebSettings(BaseSettings):
    """The gateway's and the console's fields of `Settings`."""

    # --- the approval/webhook gateway (`interlock service gateway`) ---
    gateway_host: Annotated[str, NotEmpty] = Field(
        default="127.0.0.1",
        description="Address the gateway's HTTP server listens on (0.0.0.0 to accept "
        "connections from other hosts, e.g. in a container).",
    )
    gateway_port: int = Field(
        default=8080, ge=1, le=65535, description="Port the gateway's HTTP server listens on."
    )
    gateway_senders: dict[SenderName, GatewaySender] = Field(
        default_factory=dict,
        description="Who may post webhooks to the gateway, as JSON: "
        '{"<sender>": {"secret": "whsec_<base64>", "roles": ["support_approver", ...], '
        '"tenants": ["acme"], "actors": ["alice", ...] | ["*"]}}. A request names its sender '
        "in the `interlock-sender` header, is signed with that secret (Standard Webhooks) and "
        "may claim only the listed tenants, actor roles and actor ids. A sender's name is "
        "letters, digits and `_` (no `-`: it is part of the event id `gw-<sender>-<webhook-id>`). "
        "Secrets are never logged; with no senders every request is refused.",
    )
    gateway_sender_rate: float = Field(
        default=20.0, gt=0, description="Requests a second the gateway accepts from one sender."
    )
    gateway_unauthenticated_rate: float = Field(
        default=5.0,
        gt=0,
        description="Requests a second that fail authentication the gateway answers and records "
        "(all senders together); beyond it they are refused with 429, unrecorded.",
    )

    # --- the Prometheus scrape endpoint (served by the relay) ---
    metrics_host: Annotated[str, NotEmpty] = Field(
        default="127.0.0.1",
        description="Address the relay's Prometheus scrape endpoint (`/metrics`) listens on.",
    )
    metrics_port: int = Field(
        default=9464,
        ge=0,
        le=65535,
        description="Port of the relay's Prometheus scrape endpoint (`endpoints.json` names it "
        "`metrics_url`); 0: none (with a collector, scrape the collector instead).",
    )

    # --- the operator console (`interlock console`) ---
    console_host: Annotated[str, NotEmpty] = Field(
        default="127.0.0.1", description="Address the operator console listens on."
    )
    console_port: int = Field(
        default=8090, ge=1, le=65535, description="Port the operator console listens on."
    )
    console_operators: dict[str, ConsoleOperator] | None = Field(
        default=None,
        description="Who may log in to the console, as JSON: "
        '{"<name>": {"password_hash": "$argon2id$...", "roles": ["approver"], '
        '"actor_roles": ["support_approver"]}}. Unset with the embedded stack: one '
        "development operator whose password is kept under <home>/secrets; unset otherwise: "
        "nobody can log in (a warning says so).",
    )
    console_redact: frozenset[str] = Field(
        default=frozenset({"body", "subject", "email", "phone", "name", "address", "iban"}),
        description="Keys of workflow data and model output whose values the console shows "
        "as redacted (personal data); keys that look like secrets are always redacted.",
    )
    console_redrive: bool = Field(
        default=False,
        description="Let the console's operators redrive dead letters: its broker identity may "
        "then delete dead letters and publish on the subjects they came from (ingress and "
        "jobs), i.e. speak for any client, stage or the relay. Off: the console lists dead "
        "letters and `interlock dlq redrive` (as the administrator) sends them back.",
    )
    jaeger_url: HttpUrl = Field(
        default=None,
        description="Jaeger's UI (http://host:16686): the console links each workflow's trace "
        "there instead of drawing it from the local spans.",
    )

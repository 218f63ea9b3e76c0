"""The table of components: one row per component of a stack, and everything said about it.

A row names the component, the NATS identity it connects as, the database role it connects
as (with that role's grants), the broker permissions of its identity, the settings its process
is given (by `Settings` field name), how its readiness is judged and what runs it (a
"module:attr" of the composition root, resolved only when it runs, so this room never imports
the runners). The supervisor's component lists (`interlock.app.bootstrap`,
`interlock.app.composition`), the database roles and their grants and the NATS identities
(`interlock.config.access`), the broker's permissions (`access.broker_permissions`), each
child's environment (`interlock.app.childenv`), readiness (`interlock.app.health`) and the
runners (`interlock.app.runners`) are all derived from here: a new component is a new row.

The stage services are rows too, one per installed stage (`stage_row`), built from the plugins;
`rows()` is the whole table of a stack: the fixed rows with the stage services before the
stage host.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from interlock.config.component_settings import (
    COMMON,
    MODEL,
    PROJECTOR_GIVEN,
    PROJECTOR_SETTINGS,
    STAGE,
    model_stages,
)
from interlock.config.plugins import installed
from interlock.contracts.clients import GATEWAY
from interlock.contracts.partitions import PROJECTOR, is_projector
from interlock.messaging import permissions as broker
from interlock.messaging.permissions import Permissions
from interlock.projector.store import roles

__all__ = [
    "CONSOLE", "GATEWAY", "PARTITION_HOST", "PROJECTOR", "RELAY", "SIMULATOR", "STAGE_HOST",
    "TABLE", "TIMER",
    "Component", "Scope", "database_access", "find", "model_stages", "placed", "row_of", "rows",
    "settings_of", "stage_row",
]  # fmt: skip

RELAY = "relay"
TIMER = "timer"
SIMULATOR = "sim"
CONSOLE = "console"
STAGE_HOST = "stages"
"""The stage host: every installed stage service in one process, each still its own durable
consumer on its own subject, all on one identity."""
PARTITION_HOST = "projectors"
"""The partition host: every projector partition of the layout in one process, each still its
own consumer of its own stream, deciding only its own workflows, all on the projector's
identity."""

Place = Literal["core", "extra", "stage", "host", "partitions"]
"""Where a component stands in a stack: the runtime's own (`core`), one the composition root
adds (`extra`: `up` starts them), a stage service, the stage host (all of them in one), or the
partition host (every projector partition in one, in place of the projector's)."""
Readiness = Literal["partition", "partitions", "consumers", "hosted", "answers", "connected"]
"""How start-up judges it ready: its projector partition's consumer is fetching, every
partition's is, its stage's consumer is, every hosted stage's is, it answers a request, or it
is simply up."""
AsksModel = Literal["never", "own", "any"]
"""Whether it is given the model settings: never, when its own stage asks a model, or when any
installed stage does (the stage host)."""


@dataclass(frozen=True)
class Scope:
    """What the broker permissions of a stack depend on besides the rows."""

    stages: tuple[tuple[str, str], ...] = ()
    console_redrive: bool = False
    projector_partitions: int = 1


@dataclass(frozen=True)
class Component:
    name: str
    place: Place
    runner: str
    """"module:attr" of what runs it: a component (`interlock.app.runtime.Component`), or
    with `per_name` a function of the component's name returning one."""
    permissions: Callable[[str, Scope], Permissions]
    """Its identity's broker permissions, given the identity and the stack's scope."""
    identity: str = ""
    """Its NATS user; its name unless given."""
    database: roles.RoleAccess | None = None
    """Its database role and that role's grants; None: no database access at all."""
    settings: tuple[str, ...] = ()
    """The `Settings` fields its process reads (besides `COMMON` and its URLs)."""
    given: tuple[str, ...] = ()
    """`Settings` fields the supervisor computes for it (a key from the secrets, the client
    policies) rather than copies."""
    ready: Readiness = "connected"
    listens: tuple[str, str] | None = None
    """The `Settings` fields of the host and port its HTTP server listens on, if it has one
    (`up` refuses to start when that port is taken)."""
    asks_model: AsksModel = "never"
    per_name: bool = False
    stage: tuple[str, str] | None = None
    """(workflow_type, stage) of a stage service."""

    @property
    def nats_identity(self) -> str:
        return self.identity or self.name

    @property
    def database_role(self) -> str | None:
        return None if self.database is None else self.database.role


_APP = "interlock.app"

TABLE: tuple[Component, ...] = (
    Component(
        PROJECTOR,
        "core",
        f"{_APP}.run_projector:projector_partition",
        lambda me, scope: broker.projector(me, scope.projector_partitions),
        database=roles.PROJECTOR_ACCESS,
        settings=PROJECTOR_SETTINGS,
        given=PROJECTOR_GIVEN,
        ready="partition",
        per_name=True,
    ),
    Component(
        RELAY,
        "core",
        f"{_APP}.run_relay:run_relay",
        lambda me, _: broker.outbox_backstop(me),
        database=roles.RELAY_ACCESS,
        settings=(
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
    ),
    Component(
        TIMER,
        "core",
        f"{_APP}.run_relay:run_timer",
        lambda me, _: broker.timer(me),
        database=roles.TIMER_ACCESS,
    ),
    Component(
        SIMULATOR,
        "extra",
        f"{_APP}.run_edges:run_sim",
        lambda _me, _scope: broker.responder(),
        database=roles.SIMULATOR_ACCESS,
        ready="answers",
    ),
    Component(
        GATEWAY,
        "extra",
        f"{_APP}.run_edges:run_gateway",
        lambda me, _: broker.gateway(me),
        database=roles.GATEWAY_ACCESS,
        settings=(
            "gateway_host",
            "gateway_port",
            "gateway_senders",
            "gateway_sender_rate",
            "gateway_unauthenticated_rate",
        ),
        given=("gateway_claims_key",),
        listens=("gateway_host", "gateway_port"),
    ),
    Component(
        CONSOLE,
        "extra",
        f"{_APP}.run_edges:run_console",
        lambda me, scope: broker.console(me, scope.console_redrive),
        database=roles.CONSOLE_ACCESS,
        settings=(
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
        listens=("console_host", "console_port"),
    ),
    Component(
        STAGE_HOST,
        "host",
        "interlock.app.stage_services:run_stage_host",
        lambda me, scope: broker.stage_host(me, scope.stages),
        settings=STAGE,
        given=("job_public_key",),
        ready="hosted",
        asks_model="any",
    ),
    Component(
        PARTITION_HOST,
        "partitions",
        f"{_APP}.run_projector:run_partition_host",
        lambda me, scope: broker.projector(me, scope.projector_partitions),
        identity=PROJECTOR,
        database=roles.PROJECTOR_ACCESS,
        settings=PROJECTOR_SETTINGS,
        given=PROJECTOR_GIVEN,
        ready="partitions",
    ),
)
"""The fixed rows, in the order a stack starts them (the stage services go before the
host)."""


def stage_row(workflow_type: str, stage: str) -> Component:
    """The row of one stage service, alone in its process as the stage's own identity."""
    return Component(
        f"{workflow_type}.{stage}",
        "stage",
        "interlock.app.stage_services:stage_service",
        lambda me, _: broker.stage(me, workflow_type, stage),
        identity=broker.stage_identity(workflow_type, stage),
        settings=STAGE,
        given=("job_public_key",),
        ready="consumers",
        asks_model="own",
        per_name=True,
        stage=(workflow_type, stage),
    )


def rows(stages: Iterable[tuple[str, str]] | None = None) -> list[Component]:
    """The whole table: the fixed rows, with a row per stage of `stages` (default: every
    installed stage) before the hosts (of the stages, of the partitions)."""
    found = [
        stage_row(*pair) for pair in (installed().registry.stages() if stages is None else stages)
    ]
    hosts = ("host", "partitions")
    before = [row for row in TABLE if row.place not in hosts]
    return [*before, *found, *(row for row in TABLE if row.place in hosts)]


def placed(place: Place) -> list[str]:
    """The names of the fixed rows at `place`, in table order."""
    return [row.name for row in TABLE if row.place == place]


def find(name: str) -> Component | None:
    """The row of component `name` (a projector partition is the projector's row, any
    `<type>.<stage>` a stage service's); None for a name no row has."""
    key = PROJECTOR if is_projector(name) else name
    for row in TABLE:
        if row.name == key:
            return row
    if "." in name:
        return stage_row(*name.split(".", 1))
    return None


def row_of(name: str) -> Component:
    """The row of component `name`; KeyError naming it when there is none."""
    row = find(name)
    if row is None:
        raise KeyError(name)
    return row


def settings_of(row: Component) -> tuple[str, ...]:
    """The settings fields `row`'s process reads (besides its URLs and what it is `given`)."""
    asks = row.asks_model == "any" and bool(model_stages())
    asks |= row.asks_model == "own" and row.name in model_stages()
    return COMMON + row.settings + (MODEL if asks else ())


def database_access() -> list[roles.RoleAccess]:
    """Every database role a stack's components connect as, with its grants (once each: the
    partition host connects as the projector)."""
    found = [row.database for row in TABLE if row.database is not None]
    return [access for index, access in enumerate(found) if access not in found[:index]]

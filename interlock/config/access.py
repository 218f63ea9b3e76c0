"""Who connects as whom: each component's NATS identity and database role, the external
clients (`INTERLOCK_CLIENTS` with its defaults), and URLs carrying one identity's credentials.

A URL that already carries credentials is used as it is (a child process is given its own by
the supervisor); one without gets the credentials of the identity it is used for from the
installation's secrets. A NATS URL may name several seed servers, comma-separated (a
cluster): each seed carries the same credentials.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from urllib.parse import SplitResult, quote, urlsplit

from interlock.config import components
from interlock.config.components import GATEWAY, Scope
from interlock.config.plugins import installed
from interlock.config.secrets import Secrets
from interlock.config.settings import Settings
from interlock.contracts.clients import ANY, ClientPolicy, Publishes, SenderGrant, signing_roles
from interlock.contracts.urls import NATS_SCHEMES, nats_servers, nats_user, scheme
from interlock.messaging import permissions as broker

UPSTREAM = "upstream"
APPROVALS = "approvals"
OPERATOR = "operator"
"""The CLI's own client: its approve, reject, cancel and retry commands."""
CONSOLE = components.CONSOLE
"""The operator console: it reads as its own database role, reads dead letters (and redrives
them, if allowed) as its own NATS identity, and sends the CLI's signals as the CLI's client,
`operator`."""

DATABASE_ROLES = tuple(access.role for access in components.database_access())
"""The components' database roles, as the table of components names them."""


def secrets_of(settings: Settings) -> Secrets:
    return Secrets.of_home(settings.home, settings.secrets_dir)


def job_signing_key(settings: Settings) -> str:
    """The PEM the projector signs jobs with: as its process was given it, else the
    installation's (generated on first need)."""
    if settings.job_signing_key is not None:
        return settings.job_signing_key.get_secret_value()
    return secrets_of(settings).job_signing_key()


def job_public_key(settings: Settings) -> str:
    """The PEM stages verify job signatures with: as given, else the installation's."""
    return settings.job_public_key or secrets_of(settings).job_public_key()


def gateway_claims_key(settings: Settings) -> str:
    """The PEM the gateway signs sender claims with: as given, else the installation's."""
    if settings.gateway_claims_key is not None:
        return settings.gateway_claims_key.get_secret_value()
    return secrets_of(settings).gateway_claims_key()


def gateway_claims_public_key(settings: Settings) -> str:
    """The PEM the projector verifies sender claims with: as given, else the installation's."""
    return settings.gateway_claims_public_key or secrets_of(settings).gateway_claims_public_key()


def component_roles(settings: Settings) -> dict[str, str]:
    """The components' database roles and their passwords (generated on first need)."""
    return secrets_of(settings).postgres_passwords(
        [access.role for access in components.database_access()]
    )


def external_clients(settings: Settings) -> list[str]:
    """The names `interlock client-url` knows: every client but the gateway component."""
    return sorted(name for name in client_policies(settings) if name != GATEWAY)


def nats_identity(component: str) -> str:
    """The NATS user of a component, as its row names it (`projector` for every projector
    partition, `stage-<type>-<stage>` for a stage); a name no row has is its own user."""
    row = components.find(component)
    return component if row is None else row.nats_identity


def database_role(component: str) -> str | None:
    """The database role a component connects as; None when it has no database access."""
    row = components.find(component)
    return None if row is None else row.database_role


def signing_roles_of(settings: Settings) -> list[str]:
    """Every approver and operator role of the installed workflow types (as configured)."""
    roles: set[str] = set()
    for definition in installed().registry:
        overrides = settings.parameters.get(definition.workflow_type, {})
        roles |= signing_roles({**definition.parameters, **overrides})
    return sorted(roles)


def client_policies(settings: Settings) -> dict[str, ClientPolicy]:
    """Every external client: `INTERLOCK_CLIENTS` (default: `upstream` sends requests and
    `approvals` signals, for every type and tenant), plus the CLI's `operator` and the
    approval gateway's `gateway`, which sign for the roles they are configured with."""
    roles = frozenset(signing_roles_of(settings))
    found = (
        dict(settings.clients)
        if settings.clients is not None
        else {UPSTREAM: _everywhere("request"), APPROVALS: _everywhere("signal", roles)}
    )
    found.setdefault(OPERATOR, _everywhere("signal", roles))
    # Configured explicitly (as the projector's process is given them), it stays as it is,
    # but learns its senders' own grants when it has none and they are configured here.
    gateway = found.setdefault(GATEWAY, _gateway(settings))
    if gateway.senders is None and settings.gateway_senders:
        found[GATEWAY] = gateway.model_copy(update={"senders": _grants(settings)})
    return found


def _gateway(settings: Settings) -> ClientPolicy:
    """The gateway may publish requests and signals for what its senders together may (their
    tenants and roles), but the projector checks each message against the grant of its one
    sender (`senders`): one sender's authority end to end, never the union."""
    senders = settings.gateway_senders
    tenants = frozenset(t for s in senders.values() for t in s.tenants)
    return ClientPolicy(
        publish=frozenset({"request", "signal"}),
        types=frozenset({ANY}),
        tenants=frozenset({ANY}) if ANY in tenants else tenants,
        roles=frozenset(r for s in senders.values() for r in s.roles),
        senders=_grants(settings),
    )


def _grants(settings: Settings) -> dict[str, SenderGrant]:
    """Each gateway sender's own tenants, roles and actor ids (never its secret)."""
    return {
        name: SenderGrant(tenants=s.tenants, roles=s.roles, actors=s.actors, types=s.types)
        for name, s in settings.gateway_senders.items()
    }


def _everywhere(kind: Publishes, roles: frozenset[str] = frozenset()) -> ClientPolicy:
    """A client sending `kind` for every workflow type and tenant."""
    every = frozenset({ANY})
    return ClientPolicy(publish=frozenset({kind}), types=every, tenants=every, roles=roles)


def broker_permissions(settings: Settings) -> dict[str, broker.Permissions]:
    """Every NATS identity and what it may do, for the installed workflow types."""
    clients = {k: v for k, v in client_policies(settings).items() if k != GATEWAY}
    registry = installed().registry
    return permissions_of(
        registry.stages(),
        clients,
        registry.workflow_types(),
        console_redrive=settings.console_redrive,
        projector_partitions=settings.projector_partitions,
    )


def permissions_of(
    stages: Iterable[tuple[str, str]],
    clients: Mapping[str, ClientPolicy],
    installed_types: Iterable[str],
    *,
    console_redrive: bool = False,
    projector_partitions: int = 1,
) -> dict[str, broker.Permissions]:
    """Every identity's permissions: `admin`, each row of the table of components (a stage
    service each of `stages`, (workflow_type, stage) pairs), and `clients` for the
    `installed_types`; `console_redrive`: the console may send dead letters back;
    `projector_partitions`: the projector pulls from the consumers of that many partitions."""
    scope = Scope(tuple(stages), console_redrive, projector_partitions)
    own = {
        row.nats_identity: row.permissions(row.nats_identity, scope)
        for row in components.rows(scope.stages)
    }
    return broker.with_clients(own, clients, installed_types)


def as_client(settings: Settings, nats_url: str, client: str) -> str:
    """The URL a command connects with to act as `client` (its messages carry that name):
    `INTERLOCK_NATS_URL` itself when it names a user (the operator chose an identity), else
    the server of `nats_url` with `client`'s credentials."""
    if settings.nats_url is not None and nats_user(settings.nats_url):
        return settings.nats_url
    return nats_url_as(without_credentials(nats_url), client, secrets_of(settings))


def as_operator(settings: Settings, nats_url: str) -> str:
    """The server of `nats_url` as the CLI's client `operator`, whatever identity `nats_url`
    names: the console connects as itself but sends its signals as the CLI does."""
    return nats_url_as(without_credentials(nats_url), OPERATOR, secrets_of(settings))


def as_admin(settings: Settings, nats_url: str, database_url: str) -> tuple[str, str]:
    """The URLs of the servers of `nats_url` and `database_url` with the administrator's
    credentials (a URL that carries credentials of its own is kept as it is)."""
    secrets = secrets_of(settings)
    return nats_url_as(nats_url, broker.ADMIN, secrets), database_url_as(
        database_url, None, secrets
    )


def nats_url_as(url: str, identity: str, secrets: Secrets) -> str:
    """`url` with `identity`'s credentials, unless it carries credentials already."""
    if nats_user(url):
        return url
    return with_credentials(url, identity, secrets.nats_password(identity))


def database_url_as(url: str, role: str | None, secrets: Secrets) -> str:
    """`url` for `role` with its password; for `role=None`, `url` with the password of its
    own user when it has none and the secrets know one."""
    parts = urlsplit(url)
    if role is not None:
        return with_credentials(url, role, secrets.postgres_password(role))
    if parts.password or not parts.username:
        return url
    known = secrets.known_postgres_password(parts.username)
    return with_credentials(url, parts.username, known) if known else url


def with_credentials(url: str, user: str, password: str | None) -> str:
    userinfo = quote(user, safe="") + (f":{quote(password, safe='')}" if password else "")

    def one(parts: SplitResult) -> str:
        return _with_netloc(parts, f"{userinfo}@{_host_port(parts)}")

    return _each_server(url, one)


def without_credentials(url: str) -> str:
    """`url` with neither user nor password (the bare server address)."""
    return _each_server(url, lambda parts: _with_netloc(parts, _host_port(parts)))


def redacted(url: str) -> str:
    """`url` as it may be printed or logged: the user kept, the password left out."""

    def one(parts: SplitResult) -> str:
        user = f"{quote(parts.username, safe='')}@" if parts.username else ""
        return _with_netloc(parts, f"{user}{_host_port(parts)}")

    return _each_server(url, one)


def _each_server(url: str, change: Callable[[SplitResult], str]) -> str:
    """`change` applied to each seed server of a NATS URL (commas in a PostgreSQL URL are
    its own multi-host syntax, left as they are)."""
    if scheme(url) not in NATS_SCHEMES:
        return change(urlsplit(url))
    return ",".join(change(urlsplit(seed)) for seed in nats_servers(url))


def _host_port(parts: SplitResult) -> str:
    return parts.netloc.rpartition("@")[2]


def _with_netloc(parts: SplitResult, netloc: str) -> str:
    return parts._replace(netloc=netloc).geturl()

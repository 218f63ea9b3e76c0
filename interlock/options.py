"""What every command shares, the CLI's and the tools' alike: the `--json` option, loading
settings (exit 2 on bad configuration), logging, and running work against the configured or
embedded stack."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from typing import Annotated, Any, TypeVar

import typer
from pydantic import ValidationError

from interlock import access, terminal
from interlock.embedded import resolve_urls
from interlock.health import accepts_anonymous
from interlock.settings import Settings

T = TypeVar("T")
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable JSON on stdout.")]
TenantOpt = Annotated[
    str | None,
    typer.Option(
        "--tenant", help="The workflow's tenant; needed only when several tenants use the id."
    ),
]


def load_settings() -> Settings:
    """The process settings, with logging configured; exit 2 naming what is wrong."""
    try:
        loaded = Settings()
    except ValidationError as exc:
        for err in exc.errors():
            terminal.errors.print(f"[red]configuration:[/] {err['msg']}")
        raise typer.Exit(2) from None
    configure_logging(loaded.log_level)
    return loaded


def configure_logging(level: str) -> None:
    logging.basicConfig(
        level=level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    if level.upper() != "DEBUG":
        # Per-message access logs and migration chatter drown what matters.
        for chatty in ("faststream", "alembic", "nats"):
            logging.getLogger(chatty).setLevel(logging.WARNING)


def with_stack(
    work: Callable[[Settings, str, str], Coroutine[Any, Any, T]], settings: Settings | None = None
) -> T:
    """Run `work(settings, nats_url, database_url)` against the configured or embedded stack,
    as its administrator: the URLs carry the admin's credentials (a configured URL that
    carries credentials of its own is used as it is). `settings`: already loaded ones."""
    s = settings or load_settings()
    with resolve_urls(s) as (nats_url, database_url):
        admin_nats, admin_database = access.as_admin(s, nats_url, database_url)
        return _run_checked(s, admin_nats, work(s, admin_nats, admin_database))


def with_database(work: Callable[[Settings, str], Coroutine[Any, Any, T]]) -> T:
    """Run `work(settings, database_url)` against the configured or embedded database, as
    its administrator, for a command that needs no broker (none is asked for or checked)."""
    s = load_settings()
    secrets = access.secrets_of(s)
    if s.database_url is not None:
        return asyncio.run(work(s, access.database_url_as(s.database_url, None, secrets)))
    with resolve_urls(s) as (_, database_url):
        return asyncio.run(work(s, access.database_url_as(database_url, None, secrets)))


def with_component(
    component: str, work: Callable[[Settings, str, str | None], Coroutine[Any, Any, T]]
) -> T:
    """Run `work(settings, nats_url, database_url)` as `component`: its own NATS identity
    and database role (no database URL for a component without database access). A child of
    `up` is given both; run by hand, it takes them from the embedded stack or the
    configured URLs and the installation's secrets."""
    s = load_settings()
    identity, role = access.nats_identity(component), access.database_role(component)
    secrets = access.secrets_of(s)
    with _servers(s, database=role is not None) as (base_nats, base_database):
        nats_url = access.nats_url_as(base_nats, identity, secrets)
        if role is None or base_database is None:
            database_url = None
        elif s.database_url is not None:  # as configured, its own password filled in
            database_url = access.database_url_as(s.database_url, None, secrets)
        else:
            database_url = access.database_url_as(base_database, role, secrets)
        return _run_checked(s, nats_url, work(s, nats_url, database_url))


@contextmanager
def _servers(s: Settings, *, database: bool) -> Iterator[tuple[str, str | None]]:
    """The configured URLs, or the embedded stack's where one is missing: a component
    without database access does not start (or attach to) the stack for its database."""
    if s.nats_url is not None and (s.database_url is not None or not database):
        yield s.nats_url, s.database_url
        return
    with resolve_urls(s) as urls:
        yield urls


def _run_checked(s: Settings, nats_url: str, work: Coroutine[Any, Any, T]) -> T:
    """Run `work` unless the broker would take anonymous publishers (exit 2), which only an
    explicit development setting (`INTERLOCK_INSECURE_NATS=1`) allows, with a warning."""

    async def checked() -> T:
        if await accepts_anonymous(nats_url):
            if not s.insecure_nats:
                work.close()
                terminal.errors.print(
                    f"[red]refusing to run:[/] the NATS server at "
                    f"{access.redacted(access.without_credentials(nats_url))} accepts "
                    "anonymous connections, so anyone could publish jobs and results. "
                    "Start it from `interlock nats-config`, or set INTERLOCK_INSECURE_NATS=1 "
                    "for a development setup."
                )
                raise typer.Exit(2)
            logging.getLogger("interlock").warning(
                "INSECURE: the NATS server accepts anonymous connections "
                "(INTERLOCK_INSECURE_NATS=1); anyone who reaches it can forge any message"
            )
        return await work

    return asyncio.run(checked())

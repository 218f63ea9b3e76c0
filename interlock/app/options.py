"""What every command shares, the CLI's and the tools' alike: the `--json` option, loading
settings (exit 2 on bad configuration), logging, and running work against the configured or
embedded stack."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Callable, Coroutine, Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Annotated, Any, NoReturn, TypeVar

import typer
from pydantic import ValidationError
from pydantic_settings import SettingsError
from rich.markup import escape

from interlock.app import loops, terminal
from interlock.app.embedded import resolve_urls
from interlock.app.failures import settings_problem
from interlock.app.health import accepts_anonymous
from interlock.app.log_bounds import RepeatBound
from interlock.app.loops import EventLoop
from interlock.app.reachability import require_database, require_reachable
from interlock.config import access
from interlock.config.plugins import installed
from interlock.config.settings import Settings
from interlock.contracts.errors import ConfigurationError

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
    except (ValidationError, SettingsError) as exc:
        raise settings_problem(exc) from exc
    configure_logging(loaded.log_level)
    return loaded


class _IsoFormatter(logging.Formatter):
    """Timestamps as ISO-8601 with the local offset, so lines from different machines and
    time zones order and compare."""

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        moment = datetime.fromtimestamp(record.created).astimezone()
        return moment.isoformat(timespec="milliseconds")


BROKER_LOGGER = "interlock.broker"
"""Where the components' FastStream brokers log: through the process's own handler (plain
lines, no terminal colour codes in log files) rather than FastStream's coloured one."""


def configure_logging(level: str) -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(_IsoFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level.upper(), handlers=[handler])
    if level.upper() != "DEBUG":
        handler.addFilter(RepeatBound())  # what senders provoke is logged within a bound
        # Per-message access logs and migration chatter drown what matters.
        for chatty in ("faststream", "alembic", "nats", BROKER_LOGGER):
            logging.getLogger(chatty).setLevel(logging.WARNING)


def with_stack(
    work: Callable[[Settings, str, str], Coroutine[Any, Any, T]],
    settings: Settings | None = None,
    *,
    database: bool = True,
) -> T:
    """Run `work(settings, nats_url, database_url)` against the configured or embedded stack,
    as its administrator: the URLs carry the admin's credentials (a configured URL that
    carries credentials of its own is used as it is). `settings`: already loaded ones;
    `database=False`: the work uses the broker only, so the database is not required to
    answer before it starts."""
    s = settings or load_settings()
    with resolve_urls(s) as (nats_url, database_url):
        admin_nats, admin_database = access.as_admin(s, nats_url, database_url)
        checked_database = admin_database if database else None
        return _run_checked(s, admin_nats, work(s, admin_nats, admin_database), checked_database)


def with_database(work: Callable[[Settings, str], Coroutine[Any, Any, T]]) -> T:
    """Run `work(settings, database_url)` against the configured or embedded database, as
    its administrator, for a command that needs no broker (none is asked for or checked)."""
    s = load_settings()
    secrets = access.secrets_of(s)
    if s.database_url is not None:
        return _database_checked(s, access.database_url_as(s.database_url, None, secrets), work)
    with resolve_urls(s) as (_, database_url):
        return _database_checked(s, access.database_url_as(database_url, None, secrets), work)


def _database_checked(
    s: Settings, database_url: str, work: Callable[[Settings, str], Coroutine[Any, Any, T]]
) -> T:
    """Run `work` once the database accepts a connection within the start-up deadline."""

    async def checked() -> T:
        await require_database(database_url)
        return await work(s, database_url)

    return asyncio.run(checked())


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
        # Everything loaded so far (modules, classes, functions: ~170,000 objects) lives as
        # long as the process. Out of the collector's generations, a full collection walks
        # only what the work allocates: walking them all stopped a projector under load for
        # 0.1-0.6 s at a time, every workflow in flight with it.
        gc.freeze()
        # No start-up deadline here: a component waits out a broker or database that is not
        # there yet (a restart, a container starting after it) by reconnecting.
        return _run_checked(
            s, nats_url, work(s, nats_url, database_url), None, deadline=False, loop=s.event_loop
        )


@contextmanager
def _servers(s: Settings, *, database: bool) -> Iterator[tuple[str, str | None]]:
    """The configured URLs, or the embedded stack's where one is missing: a component
    without database access does not start (or attach to) the stack for its database."""
    if s.nats_url is not None and (s.database_url is not None or not database):
        yield s.nats_url, s.database_url
        return
    with resolve_urls(s) as urls:
        yield urls


def _run_checked(
    s: Settings,
    nats_url: str,
    work: Coroutine[Any, Any, T],
    database_url: str | None,
    *,
    deadline: bool = True,
    loop: EventLoop = "asyncio",
) -> T:
    """Run `work` on `loop` once the broker (and the database, if any) accept a connection
    within the start-up deadline, unless the broker would take anonymous publishers (exit 2),
    which only an explicit development setting (`INTERLOCK_INSECURE_NATS=1`) allows, with a
    warning."""

    async def checked() -> T:
        try:
            if deadline:
                await require_reachable(nats_url, database_url)
        except BaseException:
            work.close()
            raise
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

    try:
        return loops.run(checked(), loop)
    except ConfigurationError:  # the loop cannot be had: `work` never started
        work.close()
        raise


# The values an option may take, checked before a command runs: a misspelt state, type or
# scenario is refused with the valid values (exit 2), never answered with an empty result.


def one_of(valid: Callable[[], Iterable[str]], what: str) -> Callable[[str | None], str | None]:
    """A typer option callback refusing any value not in `valid()` (asked only when the option
    is given, so that building the CLI loads no plugin)."""

    def check(value: str | None) -> str | None:
        if value is not None and value not in (choices := sorted(set(valid()))):
            raise typer.BadParameter(f"unknown {what} {value!r}; valid: {', '.join(choices)}")
        return value

    return check


def each_of(
    valid: Callable[[], Iterable[str]], what: str
) -> Callable[[list[str] | None], list[str] | None]:
    """The same for an option given several times."""
    check = one_of(valid, what)

    def check_each(values: list[str] | None) -> list[str] | None:
        for value in values or ():
            check(value)
        return values

    return check_each


def known_states() -> set[str]:
    """Every state of every installed definition, old versions included."""
    return {state for d in installed().registry for state in d.states}


def known_types() -> list[str]:
    return installed().registry.workflow_types()


TypeOpt = Annotated[
    str | None,
    typer.Option(
        "--type", help="Only workflows of this type.", callback=one_of(known_types, "workflow type")
    ),
]


def usage_error(message: str) -> NoReturn:
    """Refuse bad usage: `usage: <message>` in one line on stderr, exit 2."""
    terminal.errors.print(f"[red]usage:[/] {escape(message)}", highlight=False)
    raise typer.Exit(2)

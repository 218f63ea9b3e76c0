"""The database roles of the components, and only the grants each one needs.

`interlock migrate` creates or updates them after the schema migrations (idempotent); their
passwords come from the installation's secrets. The projector decides and records; the relay
reads the outbox and moves its cursor (and samples the gauges); the timer service claims and
marks timers; the simulator owns its own schema; the gateway reads one workflow's state and
the outcome of an event through a function (no table at all). Notifications (LISTEN) and
advisory locks need no grant; identity columns need none on their sequences either.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import asyncpg

from interlock.contracts.urls import asyncpg_dsn

PROJECTOR_ROLE = "interlock_projector"
RELAY_ROLE = "interlock_relay"
TIMER_ROLE = "interlock_timer"
SIMULATOR_ROLE = "interlock_sim"
CONSOLE_ROLE = "interlock_console"
GATEWAY_ROLE = "interlock_gateway"


@dataclass(frozen=True)
class RoleAccess:
    """What one role may do: its table privileges (on the tables of the `public` schema), the
    functions it may execute and the schema it owns, if any. Which component connects as which
    role is the table of components' business (`interlock.config.components`)."""

    role: str
    tables: Mapping[str, str] = field(default_factory=dict)
    functions: tuple[str, ...] = ()
    owns_schema: str | None = None


PRUNE = "interlock_prune(text[], text[], timestamptz, timestamptz, integer)"
"""Retention (migration 0006): archives finished workflows, forgets old processed events."""
PRUNE_HISTORY = "interlock_prune_history(timestamptz, integer)"
"""History retention (migration 0008): forgets the histories of long-idle workflows."""

WORKFLOW_STATUS = "interlock_workflow_status(text, text, text, text)"
"""The gateway's only read (migration 0009): state, version, update time, an event's outcome."""

SIMULATOR_SCHEMA = "sim"
"""The simulator's ledgers live in their own schema, which its role owns."""

PROJECTOR_ACCESS = RoleAccess(
    PROJECTOR_ROLE,
    {
        "workflows": "SELECT, INSERT, UPDATE",
        "audit": "INSERT",
        "processed_events": "SELECT, INSERT",
        "refused_events": "SELECT, INSERT",
        # SELECT, UPDATE: a decision reads whether its workflow has rows still unpublished,
        # and the projector marks the rows it published itself.
        "outbox": (
            "SELECT (id, workflow_id, published_at, relay_after), INSERT, UPDATE (published_at)"
        ),
        "interlock_meta": "SELECT",
        "timers": "SELECT, INSERT, UPDATE",
        "history": "INSERT",
        # A decision reads whether its workflow is paused (FOR SHARE, which needs an UPDATE
        # grant on a column) and then holds its rows back instead of writing them to the outbox;
        # it reads whether rows of its workflow are still held (they go out before its own).
        "pauses": "SELECT, UPDATE (paused_at)",
        "held_outbox": "SELECT (workflow_type, tenant_id, workflow_id), INSERT",
    },
)
RELAY_ACCESS = RoleAccess(
    RELAY_ROLE,
    {
        "interlock_meta": "SELECT",
        # INSERT: the open-job sweeper re-dispatches a job as a copy of its outbox row.
        "outbox": "SELECT, INSERT, UPDATE (published_at), DELETE",
        "relay_cursor": "SELECT, INSERT, UPDATE",
        # The stuck-workflow and outcome gauges read these; they never write them.
        "workflows": "SELECT",
        "audit": "SELECT",
        "timers": "SELECT",
        # The reminder pass counts the reminders of waits on a person and forgets past waits.
        "human_wait_reminders": "SELECT, INSERT, UPDATE, DELETE",
        # The sweeper leaves the jobs of paused workflows alone.
        "pauses": "SELECT",
    },
    # Pruning runs in the relay's process, through a function with its owner's rights.
    functions=(PRUNE, PRUNE_HISTORY),
)
TIMER_ACCESS = RoleAccess(
    TIMER_ROLE,
    {
        "timers": "SELECT, UPDATE",
        # Timers of a paused workflow fall due but fire only on resume.
        "pauses": "SELECT",
    },
)
SIMULATOR_ACCESS = RoleAccess(SIMULATOR_ROLE, owns_schema=SIMULATOR_SCHEMA)
# The operator console only reads: its pages (archived workflows too), the stuck workflows,
# the outbox lag.
CONSOLE_ACCESS = RoleAccess(
    CONSOLE_ROLE,
    {
        "workflows": "SELECT",
        "workflow_archive": "SELECT",
        "audit": "SELECT",
        "timers": "SELECT",
        "outbox": "SELECT",
        "relay_cursor": "SELECT",
        "human_wait_reminders": "SELECT",
        "pauses": "SELECT",
        "held_outbox": "SELECT",
        "operator_log": "SELECT",
    },
)
# The gateway's only read is a function: no table at all.
GATEWAY_ACCESS = RoleAccess(GATEWAY_ROLE, functions=(WORKFLOW_STATUS,))


async def provision_roles(
    database_url: str, passwords: Mapping[str, str], roles: Sequence[RoleAccess]
) -> None:
    """Create or update each of `roles` with its password, revoke what it should not have and
    grant what it needs. Needs a user that may create roles (the migrating admin)."""
    connection = await asyncpg.connect(asyncpg_dsn(database_url), timeout=10)
    try:
        async with connection.transaction():
            await connection.execute("SELECT pg_advisory_xact_lock(hashtext('interlock.roles'))")
            for access in roles:
                role = access.role
                await _ensure_role(connection, role, passwords[role])
                await connection.execute(f"REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {role}")
                for table, privileges in access.tables.items():
                    await connection.execute(f"GRANT {privileges} ON {table} TO {role}")
            for access in roles:
                for function in access.functions:
                    await connection.execute(
                        f"GRANT EXECUTE ON FUNCTION {function} TO {access.role}"
                    )
            for access in roles:
                if access.owns_schema is not None:
                    await _own_schema(connection, access.owns_schema, access.role)
    finally:
        await connection.close()


async def _own_schema(connection: asyncpg.Connection, schema: str, role: str) -> None:
    await connection.execute(f"CREATE SCHEMA IF NOT EXISTS {schema} AUTHORIZATION {role}")
    await connection.execute(f"ALTER SCHEMA {schema} OWNER TO {role}")
    # Tables an older installation created as another user become the role's too.
    for (table,) in await connection.fetch(
        "SELECT tablename FROM pg_tables WHERE schemaname = $1", schema
    ):
        await connection.execute(f'ALTER TABLE {schema}."{table}" OWNER TO {role}')


async def _ensure_role(connection: asyncpg.Connection, role: str, password: str) -> None:
    exists = await connection.fetchval("SELECT 1 FROM pg_roles WHERE rolname = $1", role)
    verb = "ALTER" if exists else "CREATE"
    # Utility statements take no parameters; the password is a literal quoted by the
    # server's own quote_literal, and the statement is never logged by us.
    literal = await connection.fetchval("SELECT quote_literal($1)", password)
    await connection.execute(
        f"{verb} ROLE {role} WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD {literal}"
    )
